#!/usr/bin/env bash
# Configures and builds ditc into build/ (or $DITC_BUILD_DIR) with Ninja.
# Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DITC_BUILD_DIR:-$root/build}
jobs=${DITC_JOBS:-2}

cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  "$@" >/dev/null
ninja -C "$build" -j "$jobs"
