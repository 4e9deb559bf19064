#!/usr/bin/env bash
# Regenerates docs/reference/ (the dialect's ops, attributes and enums, and
# the passes with their options) from the ODS and Passes.td, through the
# update-reference-docs target of build/ (or $DITC_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DITC_BUILD_DIR:-$root/build}
jobs=${DITC_JOBS:-2}
if [[ ! -f "$build/build.ninja" ]]; then
  echo "update-reference-docs: no build in $build; run scripts/build.sh first" >&2
  exit 1
fi
ninja -C "$build" -j "$jobs" update-reference-docs
echo "update-reference-docs: docs/reference/ now matches the ODS and Passes.td"
