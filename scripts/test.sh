#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lit + GoogleTest +
# the fuzz corpora) through ctest; then builds again with AddressSanitizer
# and UndefinedBehaviorSanitizer (build-asan/) and runs the tests again under
# them, less those marked `UNSUPPORTED: sanitizers` (numeric matrices whose
# code the other tests cover; they would take the pass past CI's budget;
# families.test keeps one model per family there) and the compiler's
# MLIR-linked unit tests.
# DITC_SKIP_SANITIZERS=1 skips the second pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DITC_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
# With the sanitizer pass to come, the runtime's hostile-input tests wait for
# it (test/lit.cfg.py: sanitizer-pass-follows).
follows=1
[[ "${DITC_SKIP_SANITIZERS:-0}" == 1 ]] && follows=0
(cd "$build" && DITC_SANITIZER_PASS_FOLLOWS=$follows ctest --output-on-failure -j 2)

if [[ "${DITC_SKIP_SANITIZERS:-0}" != 1 ]]; then
  asan=${DITC_ASAN_BUILD_DIR:-$root/build-asan}
  echo "test.sh: the same tests under -fsanitize=address,undefined ($asan)"
  # Any report fails the test that triggered it. dit-run leaves through
  # _exit after a failed collective, so leak checking is off. LLVM's headers
  # poison allocator slabs in our instrumented code while Debian's
  # uninstrumented MLIR libraries reuse them, so manual poisoning is ignored
  # (allow_user_poisoning=0); ASan's own checks all stay on.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0:allow_user_poisoning=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # Exported before the build, so anything the build runs sees them too.
  # The compiler's MLIR-linked unit tests run in the release pass only
  # (test/unit/CMakeLists.txt says why).
  DITC_BUILD_DIR=$asan "$root/scripts/build.sh" -DDITC_SANITIZE=ON \
    -DDITC_COMPILER_UNIT_TESTS=OFF
  (cd "$asan" && ctest --output-on-failure -j 2)
fi
