#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lit + GoogleTest)
# through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DITC_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j 2
