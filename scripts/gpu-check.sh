#!/usr/bin/env bash
# The GPU check: the runtime built against a CUDA torch, ditc's plans run on a
# GPU in bfloat16 over NCCL, and each plan's step time beside torch eager's.
#
#   scripts/gpu-check.sh prepare DIR   on the ditc host (needs build/bin/ditc):
#                                      compiles the plans into DIR/plans and
#                                      copies nlohmann/json.hpp to DIR/include
#   scripts/gpu-check.sh run DIR       on the GPU host (torch with CUDA, no
#                                      MLIR): builds dit-run into DIR/build,
#                                      runs every plan, writes DIR/results/
#
# `run` takes, from the environment: DITC_GPU_STEPS (timed steps after one
# warm-up, default 4), DITC_GPU_DEVICE (cuda, or cpu to rehearse the script
# on a host without a GPU: gloo, float32), DITC_GPU_JOBS (compile jobs,
# default nproc), PYTHON (default python3). Each step of `run` has a time
# limit, so the whole check ends within 10 minutes on one GPU.
#
# Why not cmake: a CUDA wheel's TorchConfig.cmake looks for a full CUDA
# toolkit (nvcc) that a GPU host running pip's torch need not have. The
# runtime needs no generated sources, so the script compiles runtime/lib,
# the two libraries it shares with ditc (lib/Support, lib/Checkpoint) and
# dit-run.cpp with the flags torch itself reports.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
dir=${2:-}
if [[ -z "$mode" || -z "$dir" || ( "$mode" != prepare && "$mode" != run ) ]]; then
  echo "usage: scripts/gpu-check.sh prepare|run DIR" >&2
  exit 2
fi

# The plans: one rank each (the GPU host may have one GPU, and NCCL refuses
# two ranks on one device). tiny-wan proves the path; bench-wan is the CPU
# benchmarks' model; Wan2.1-T2V-1.3B at 480x832 is a real model's width.
plans=(
  "tiny-wan|--height 64 --width 64 --num-frames 5"
  "bench-wan|--height 256 --width 256 --num-frames 9"
  "wan2.1-t2v-1.3b|--height 480 --width 832 --num-frames 9"
  "tiny-flux|--height 128 --width 128"
)

if [[ "$mode" == prepare ]]; then
  ditc=${DITC:-$root/build/bin/ditc}
  rm -rf "$dir/plans" "$dir/include"
  mkdir -p "$dir/plans" "$dir/include/nlohmann"
  for entry in "${plans[@]}"; do
    model=${entry%%|*}
    # shellcheck disable=SC2086 # the workload flags are words
    "$ditc" compile "$model" ${entry#*|} --dtype bf16 -o "$dir/plans/$model" >/dev/null
    echo "prepared $model"
  done
  cp /usr/include/nlohmann/json.hpp "$dir/include/nlohmann/"
  exit 0
fi

python=${PYTHON:-python3}
device=${DITC_GPU_DEVICE:-cuda}
steps=${DITC_GPU_STEPS:-4}
jobs=${DITC_GPU_JOBS:-$(nproc)}
dir=$(cd "$dir" && pwd)
build=$dir/build
results=$dir/results
mkdir -p "$build/obj" "$results"

# --- What torch is here, and the flags to build against it ----------------
facts=$("$python" - "$device" <<'EOF'
import os, sys, glob, torch
from torch.utils import cpp_extension
device = sys.argv[1]
if device == "cuda" and not torch.cuda.is_available():
    sys.exit("gpu-check: torch %s sees no GPU" % torch.__version__)
include = cpp_extension.include_paths(device == "cuda")
# pip's CUDA wheels keep the CUDA runtime and NCCL headers in nvidia/*.
site = os.path.dirname(os.path.dirname(torch.__file__))
include += sorted(glob.glob(os.path.join(site, "nvidia", "*", "include")))
libs = [os.path.join(os.path.dirname(torch.__file__), "lib")]
libs += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))
print("torch_version=%s" % torch.__version__)
print("cuda_version=%s" % (torch.version.cuda or "none"))
print("cxx11_abi=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI))
print("include_dirs=(%s)" % " ".join("'%s'" % p for p in include))
print("lib_dirs=(%s)" % " ".join("'%s'" % p for p in libs))
print("gpu_name='%s'" % (torch.cuda.get_device_name(0) if device == "cuda" else "cpu"))
EOF
) || { echo "gpu-check: $python cannot import torch" >&2; exit 1; }
eval "$facts"
echo "gpu-check: torch $torch_version (CUDA $cuda_version) on $gpu_name, $(nproc) cores"

defines=(-D_GLIBCXX_USE_CXX11_ABI="$cxx11_abi")
[[ "$device" == cuda ]] && defines+=(-DDITC_HAVE_NCCL -DUSE_C10D_NCCL)
includes=(-I"$root/runtime/include" -I"$root/include" -I"$dir/include")
for p in "${include_dirs[@]}"; do includes+=(-isystem "$p"); done
# Gloo's headers, where this torch or the system has them: c10d's gloo
# header is empty without USE_C10D_GLOO. Without them dit-run runs NCCL
# only, and dit-calibrate's kernels (gloo by design) are left out.
have_gloo=0
if echo '#include <gloo/algorithm.h>' | g++ -E -x c++ "${includes[@]}" - >/dev/null 2>&1; then
  have_gloo=1
  defines+=(-DUSE_C10D_GLOO)
fi

# C++17 unless this torch's headers need C++20 (a one-header probe).
std=c++17
if ! echo '#include <torch/torch.h>' | g++ -std=$std -fsyntax-only "${defines[@]}" \
       "${includes[@]}" -x c++ - 2>"$build/std-probe.log"; then
  std=c++20
fi
echo "gpu-check: compiling with -std=$std, $jobs jobs"

sources=("$root/tools/dit-run/dit-run.cpp" "$root"/lib/Support/*.cpp "$root"/lib/Checkpoint/*.cpp)
while IFS= read -r -d '' source; do
  [[ $have_gloo == 0 && $(basename "$source") == Calibrate.cpp ]] && continue
  sources+=("$source")
done < <(find "$root/runtime/lib" -name '*.cpp' -print0 | sort -z)
compile_start=$(date +%s)
printf '%s\n' "${sources[@]}" > "$build/sources.txt"

compile_one() {
  local source=$1 object
  object=$build/obj/$(echo "${source#"$root"/}" | tr '/' '_').o
  timeout 300 g++ -std="$std" -O2 -fPIC -fopenmp -w "${defines[@]}" "${includes[@]}" \
    -c "$source" -o "$object" 2>"$object.log" || { echo "FAILED $source"; cat "$object.log"; return 1; }
}
failed=0
pids=()
for source in "${sources[@]}"; do
  compile_one "$source" &
  pids+=($!)
  if (( ${#pids[@]} >= jobs )); then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
if (( failed )); then
  echo "gpu-check: the runtime does not compile against torch $torch_version" >&2
  exit 1
fi

link_dirs=()
for p in "${lib_dirs[@]}"; do link_dirs+=(-L"$p" -Wl,-rpath,"$p"); done
link_libs=(-ltorch -ltorch_cpu -lc10)
if [[ "$device" == cuda ]]; then
  # torch_cuda registers the CUDA backend from its static initializers, so
  # it is linked even though no symbol of ours may name it.
  cudart=$(find "${lib_dirs[@]}" -name 'libcudart.so*' 2>/dev/null | head -n 1)
  link_libs=(-Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed "${link_libs[@]}"
             ${cudart:+-l:"$(basename "$cudart")"})
fi
timeout 300 g++ -o "$build/dit-run" "$build"/obj/*.o "${link_dirs[@]}" "${link_libs[@]}" \
  -fopenmp -lpthread
echo "gpu-check: built dit-run in $(( $(date +%s) - compile_start )) s"

# --- The runs ----------------------------------------------------------------
if [[ "$device" == cuda ]]; then
  run_flags=(--backend nccl --dtype bfloat16)
  peer_flags=(--device cuda --dtype bfloat16)
else
  run_flags=(--backend gloo)
  peer_flags=(--device cpu)
fi
summary=$results/summary.txt
printf '%-18s %12s %14s %14s %8s %8s %10s\n' plan "dit-run ms" "eager ms" "eager sdpa ms" \
  "eager/x" "sdpa/x" "max |diff|" | tee "$summary"
for plan in "$dir"/plans/*/; do
  name=$(basename "$plan")
  out=$results/$name
  # One warm-up step and $steps timed ones in both: dit-run's first step
  # also connects and plans kernels, so it is left out of the median.
  if ! timeout 150 "$build/dit-run" "$plan" --nproc 1 "${run_flags[@]}" \
       --steps $((steps + 1)) --output "$out.dit-run.npy" --report "$out.report.json" \
       --skip-memory-check >"$out.dit-run.log" 2>&1; then
    echo "gpu-check: dit-run failed on $name:"; tail -n 20 "$out.dit-run.log"
    continue
  fi
  for attention in matmul sdpa; do
    timeout 150 "$python" "$root/bench/eager_peer.py" "$plan" --nproc 1 "${peer_flags[@]}" \
      --attention "$attention" --steps $((steps + 1)) --warmup 1 \
      --output "$out.eager-$attention.npy" >"$out.eager-$attention.log" 2>&1 ||
      { echo "gpu-check: eager ($attention) failed on $name:"; tail -n 20 "$out.eager-$attention.log"; }
  done
  "$python" - "$out" "$name" <<'EOF' | tee -a "$summary"
import json, sys, statistics
import numpy as np
out, name = sys.argv[1], sys.argv[2]
report = json.load(open(out + ".report.json"))
ours = statistics.median(report["step_ms"][1:] or report["step_ms"])
def eager(kind):
    try:
        lines = [l for l in open("%s.eager-%s.log" % (out, kind)) if l.startswith("{")]
        return statistics.median(json.loads(lines[-1])["step_ms"][1:])
    except (OSError, IndexError, KeyError, ValueError, statistics.StatisticsError):
        return float("nan")
matmul, sdpa = eager("matmul"), eager("sdpa")
try:
    a = np.load(out + ".dit-run.npy")
    b = np.load(out + ".eager-matmul.npy")
    diff = float(np.abs(a - b).max())
except (OSError, ValueError):
    diff = float("nan")
print("%-18s %12.2f %14.2f %14.2f %8.2f %8.2f %10.3g" %
      (name, ours, matmul, sdpa, matmul / ours, sdpa / ours, diff))
EOF
done
echo "gpu-check: step times are medians of $steps steps after a warm-up; x/y > 1 means dit-run is faster"
