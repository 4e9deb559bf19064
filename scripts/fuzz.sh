#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-22 (ASan + UBSan) into build-fuzz/
# and runs each for a given time. New inputs go to build-fuzz/out/<target>/
# corpus/, crashes to build-fuzz/out/<target>/; copy a crash into
# test/fuzz/corpus/<target>/ and it becomes a ctest regression.
# Usage: scripts/fuzz.sh [SECONDS per target, default 60] [TARGET...]
#        (targets: npy plan config deployment safetensors scheduler tokenizer; default
#        all; and ir, not in the default: test/fuzz/ir_fuzz.py's mutated
#        modules through this build's dit-opt, findings in build-fuzz/out/ir/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DITC_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(npy plan config deployment safetensors scheduler tokenizer)

"$root/scripts/setup.sh" --compiler-only
missing=()
for package in clang-22 libclang-rt-22-dev; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi

flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -g"
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DDITC_ENABLE_FUZZING=ON -DDITC_BUILD_RUNTIME=OFF >/dev/null
libfuzzer=()
for target in "${targets[@]}"; do
  if [[ "$target" == ir ]]; then libfuzzer+=(dit-opt ditc); else libfuzzer+=("ditc-fuzz-$target"); fi
done
ninja -C "$build" -j "${DITC_JOBS:-2}" "${libfuzzer[@]}"

# As in scripts/test.sh: LLVM's headers poison memory that the
# uninstrumented MLIR libraries then reuse.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0}
for target in "${targets[@]}"; do
  out="$build/out/$target"
  if [[ "$target" == ir ]]; then
    echo "fuzz.sh: ir for ${seconds}s"
    DITC_MODELS_DIR="$root/models" "${DITC_VENV:-$root/.venv}/bin/python3" "$root/test/fuzz/ir_fuzz.py" \
      --dit-opt "$build/bin/dit-opt" --ditc "$build/bin/ditc" \
      --seconds "$seconds" --out "$out" ||
      { echo "fuzz.sh: ir FOUND problems in $out"; exit 1; }
    continue
  fi
  mkdir -p "$out/corpus"
  echo "fuzz.sh: $target for ${seconds}s"
  # Each input must finish in 10 s and 2 GiB: a slower one is a finding.
  "$build/bin/fuzz/ditc-fuzz-$target" "$out/corpus" "$root/test/fuzz/corpus/$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$out/" -print_final_stats=1 2>&1 |
    grep -E "^#[0-9]+ +(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)|ERROR|SUMMARY|artifact|Test unit written" || true
  echo "fuzz.sh: $target corpus: $(ls "$out/corpus" | wc -l) new inputs, $(ls "$root/test/fuzz/corpus/$target" | wc -l) seeds"
  if ls "$out"/crash-* "$out"/timeout-* "$out"/oom-* >/dev/null 2>&1; then
    echo "fuzz.sh: $target FOUND problems: $(ls "$out"/crash-* "$out"/timeout-* "$out"/oom-* 2>/dev/null | tr '\n' ' ')"
    exit 1
  fi
done
