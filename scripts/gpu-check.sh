#!/usr/bin/env bash
# The GPU check: dit-run built on a GPU host against that host's torch, each
# plan run on one GPU in bfloat16 and compared with the same plan on the CPU
# in float32, its step timed beside diffusers' own transformer on the same
# GPU (eager and torch.compile), and the peak memory of both.
#
#   scripts/gpu-check.sh prepare DIR   on the ditc host (needs build/bin/ditc):
#                                      compiles the plans into DIR/plans and
#                                      copies the headers the GPU host lacks
#                                      (nlohmann/json.hpp, gloo's, BuildInfo.h)
#                                      into DIR/include
#   scripts/gpu-check.sh run DIR       on the GPU host (torch with CUDA, no
#                                      MLIR, no CUDA toolkit needed): builds
#                                      dit-run into DIR/build, runs every plan,
#                                      writes DIR/results/summary.txt
#
# `run` takes, from the environment: DITC_GPU_DEVICE (cuda, or cpu to
# rehearse the whole script on a host without a GPU, as CI does: gloo,
# float32 against float32), DITC_GPU_STEPS (timed steps after one warm-up,
# default 4), DITC_GPU_JOBS (compile jobs, default nproc), DITC_GPU_COMPILE
# (1: also time diffusers under torch.compile; default 1 on cuda, 0 on cpu),
# PYTHON (default python3). Each step has a time limit, so the whole check
# ends within 10 minutes on one GPU.
#
# Why not cmake: a CUDA wheel's TorchConfig.cmake looks for a CUDA toolkit
# (nvcc) that a GPU host running pip's torch need not have. The runtime
# needs no generated sources but BuildInfo.h, so the script compiles
# runtime/lib, the MLIR-free libraries it shares with ditc (lib/Support,
# lib/Checkpoint, the VAE and text encoder configs) and dit-run.cpp with the flags torch reports, in as many
# unity batches as jobs (the file-scope names of a target are unique, as
# the CMake build's unity batches need).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
dir=${2:-}
if [[ -z "$mode" || -z "$dir" || ( "$mode" != prepare && "$mode" != run ) ]]; then
  echo "usage: scripts/gpu-check.sh prepare|run DIR" >&2
  exit 2
fi

# The plans: one rank each (the host may have one GPU, and NCCL refuses two
# ranks on one device). tiny-wan and tiny-flux prove the path; bench-wan is
# the CPU benchmarks' model; Wan2.1-T2V-1.3B at 480x832 is a real model's
# width, too slow for the CPU comparison, so it is only timed.
# name|workload|compare with the CPU float32 run (1) or not (0)
plans=(
  "tiny-wan|--height 64 --width 64 --num-frames 5|1"
  "tiny-flux|--height 128 --width 128|1"
  "bench-wan|--height 256 --width 256 --num-frames 9|1"
  "wan2.1-t2v-1.3b|--height 480 --width 832 --num-frames 9|0"
)
if [[ -n "${DITC_GPU_PLANS:-}" ]]; then
  kept=()
  for entry in "${plans[@]}"; do
    [[ " $DITC_GPU_PLANS " == *" ${entry%%|*} "* ]] && kept+=("$entry")
  done
  plans=("${kept[@]}")
fi

if [[ "$mode" == prepare ]]; then
  ditc=${DITC:-$root/build/bin/ditc}
  build_info=${DITC_BUILD_INFO:-$root/build/include/ditc/Support/BuildInfo.h}
  rm -rf "$dir/plans" "$dir/include"
  mkdir -p "$dir/plans" "$dir/include/nlohmann" "$dir/include/ditc/Support"
  for entry in "${plans[@]}"; do
    model=${entry%%|*}
    rest=${entry#*|}
    # shellcheck disable=SC2086 # the workload flags are words
    "$ditc" compile "$model" ${rest%|*} --dtype bf16 -o "$dir/plans/$model" >/dev/null
    echo "prepared $model"
  done
  cp /usr/include/nlohmann/json.hpp "$dir/include/nlohmann/"
  # c10d's ProcessGroupGloo.hpp needs gloo's declarations, which pip's torch
  # does not ship (Debian's libgloo-dev here; no libgloo is linked).
  cp -r /usr/include/gloo "$dir/include/"
  cp "$build_info" "$dir/include/ditc/Support/"
  exit 0
fi

python=${PYTHON:-python3}
device=${DITC_GPU_DEVICE:-cuda}
steps=${DITC_GPU_STEPS:-4}
jobs=${DITC_GPU_JOBS:-$(nproc)}
compile_peer=${DITC_GPU_COMPILE:-$([[ $device == cuda ]] && echo 1 || echo 0)}
dir=$(cd "$dir" && pwd)
build=$dir/build
results=$dir/results
rm -rf "$build" "$results"
mkdir -p "$build/obj" "$results"

# --- What torch is here, and the flags to build against it ----------------
facts=$("$python" - "$device" <<'EOF'
import os, sys, glob, torch
from torch.utils import cpp_extension
device = sys.argv[1]
if device == "cuda" and not torch.cuda.is_available():
    sys.exit("gpu-check: torch %s sees no GPU" % torch.__version__)
include = cpp_extension.include_paths()
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
if [[ "$cuda_version" == none ]]; then
  echo "gpu-check: torch $torch_version has no CUDA; dit-run links a CUDA torch" >&2
  exit 1
fi

# The CUDA and NCCL path is compiled whichever device runs it, as in the
# CMake build; gloo's c10d header is empty without USE_C10D_GLOO.
defines=(-D_GLIBCXX_USE_CXX11_ABI="$cxx11_abi" -DUSE_C10D_GLOO -DUSE_C10D_NCCL
         -DUSE_DISTRIBUTED -DDITC_HAVE_NCCL
         # Where T5's tokenizer helper (dit-sentencepiece) would be; the check
         # runs no prompt, so none is built.
         -DDITC_BUILD_TOOLS_DIR="\"$build\"")
includes=(-I"$root/runtime/include" -I"$root/include" -I"$dir/include")
for p in "${include_dirs[@]}"; do includes+=(-isystem "$p"); done

sources=("$root"/lib/Support/*.cpp "$root"/lib/Checkpoint/*.cpp "$root"/lib/Vae/DecoderConfig.cpp
         "$root"/lib/Text/EncoderConfig.cpp)
while IFS= read -r -d '' source; do
  sources+=("$source")
done < <(find "$root/runtime/lib" -name '*.cpp' -print0 | sort -z)
compile_start=$(date +%s)
# Unity batches: source i goes to batch i mod jobs.
batches=$(( jobs < ${#sources[@]} ? jobs : ${#sources[@]} ))
for ((b = 0; b < batches; ++b)); do : > "$build/unity_$b.cpp"; done
for i in "${!sources[@]}"; do
  echo "#include \"${sources[$i]}\"" >> "$build/unity_$(( i % batches )).cpp"
done
compile_one() {
  local source=$1 object=${1%.cpp}.o
  timeout 420 g++ -std=c++17 -O2 -fPIC -fopenmp -w "${defines[@]}" "${includes[@]}" \
    -c "$source" -o "$object" 2>"$object.log" || { echo "FAILED $source"; cat "$object.log"; return 1; }
}
pids=()
for source in "$build"/unity_*.cpp "$root/tools/dit-run/dit-run.cpp"; do
  if [[ "$source" == */dit-run.cpp ]]; then
    cp "$source" "$build/dit-run.cpp"
    source=$build/dit-run.cpp
  fi
  compile_one "$source" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
if (( failed )); then
  echo "gpu-check: the runtime does not compile against torch $torch_version" >&2
  exit 1
fi

link_dirs=()
for p in "${lib_dirs[@]}"; do link_dirs+=(-L"$p" -Wl,-rpath,"$p"); done
# torch_cuda registers the CUDA backend from its static initializers, and
# NCCL is what c10d's NCCL group runs on: both linked though no symbol of
# ours may name them.
cudart=$(find "${lib_dirs[@]}" -name 'libcudart.so*' 2>/dev/null | head -n 1)
nccl=$(find "${lib_dirs[@]}" -name 'libnccl.so*' 2>/dev/null | head -n 1)
link_libs=(-Wl,--no-as-needed -ltorch_cuda -lc10_cuda ${nccl:+-l:"$(basename "$nccl")"}
           -Wl,--as-needed -ltorch -ltorch_cpu -lc10 ${cudart:+-l:"$(basename "$cudart")"})
timeout 300 g++ -o "$build/dit-run" "$build"/*.o "${link_dirs[@]}" "${link_libs[@]}" \
  -fopenmp -lpthread -lz $(pkg-config --libs icu-uc libavcodec libavformat libavutil \
  libswscale 2>/dev/null || echo -licuuc)
echo "gpu-check: built dit-run in $(( $(date +%s) - compile_start )) s"
"$build/dit-run" --version | tee "$results/version.txt"

# --- The runs ----------------------------------------------------------------
if [[ "$device" == cuda ]]; then
  run_flags=(--backend nccl --dtype bfloat16)
  peer_dtype=bfloat16
  tolerance=0.05 # bfloat16 keeps 8 bits of mantissa: ~4e-3 per op, a few steps
else
  run_flags=(--backend gloo --dtype float32)
  peer_dtype=float32
  tolerance=1e-6 # the rehearsal compares float32 with float32
fi
summary=$results/summary.txt
printf '%-16s %11s %10s %11s %11s %9s %9s %12s %11s %10s\n' plan "dit-run ms" \
  "peak MiB" "eager ms" "compile ms" "eager/x" "compile/x" "eager MiB" "vs cpu f32" "tolerance" \
  | tee "$summary"
for plan in "$dir"/plans/*/; do
  name=$(basename "$plan")
  compare=1
  for entry in "${plans[@]}"; do [[ ${entry%%|*} == "$name" ]] && compare=${entry##*|}; done
  out=$results/$name
  # One warm-up step and $steps timed ones: dit-run's first step also
  # connects and plans kernels, so it is left out of the median.
  if ! timeout 150 "$build/dit-run" "$plan" --nproc 1 "${run_flags[@]}" \
       --steps $((steps + 1)) --output "$out.run.npy" --report "$out.report.json" \
       --skip-memory-check >"$out.run.log" 2>&1; then
    echo "gpu-check: dit-run failed on $name:"; tail -n 20 "$out.run.log"
    continue
  fi
  if (( compare )); then
    timeout 150 "$build/dit-run" "$plan" --nproc 1 --backend gloo --dtype float32 \
      --steps $((steps + 1)) --output "$out.cpu.npy" --skip-memory-check >"$out.cpu.log" 2>&1 ||
      { echo "gpu-check: the CPU run failed on $name:"; tail -n 20 "$out.cpu.log"; }
  fi
  for kind in eager compile; do
    [[ $kind == compile && $compile_peer != 1 ]] && continue
    timeout 240 "$python" "$root/bench/diffusers_step.py" "$plan" --device "$device" \
      --dtype "$peer_dtype" --steps "$steps" --warmup $([[ $kind == compile ]] && echo 2 || echo 1) \
      $([[ $kind == compile ]] && echo --compile) >"$out.$kind.log" 2>&1 ||
      { echo "gpu-check: diffusers ($kind) failed on $name:"; tail -n 20 "$out.$kind.log"; }
  done
  "$python" - "$out" "$name" "$tolerance" <<'EOF' | tee -a "$summary"
import json, sys, statistics
import numpy as np
out, name, tolerance = sys.argv[1], sys.argv[2], float(sys.argv[3])
report = json.load(open(out + ".report.json"))
ours = statistics.median(report["step_ms"][1:] or report["step_ms"])
peak = (report.get("device_peak_mib") or [None])[0]
if peak is None:
    peak = report["peak_rss_mib"][0]
def peer(kind):
    try:
        lines = [l for l in open("%s.%s.log" % (out, kind)) if l.startswith("{")]
        row = json.loads(lines[-1])
        return row["median_ms"], row["peak_mib"]
    except (OSError, IndexError, KeyError, ValueError):
        return float("nan"), None
(eager, eager_peak), (compiled, _) = peer("eager"), peer("compile")
try:
    a = np.load(out + ".run.npy").astype(np.float64)
    b = np.load(out + ".cpu.npy").astype(np.float64)
    diff = float(np.abs(a - b).max() / np.abs(b).max())
    verdict = "%.2e %s" % (diff, "ok" if diff <= tolerance else "ABOVE")
except (OSError, ValueError):
    verdict = "-"
print("%-16s %11.2f %10.1f %11.2f %11.2f %9.2f %9.2f %12s %11s %10.0e" %
      (name, ours, peak, eager, compiled, eager / ours, compiled / ours,
       "-" if eager_peak is None else "%.1f" % eager_peak, verdict, tolerance))
EOF
done
echo "gpu-check: step times are medians of $steps steps after a warm-up; x/y > 1 means"
echo "dit-run is faster; peak MiB is the CUDA caching allocator's peak (RSS on the CPU)"
if grep -q "ABOVE" "$summary"; then
  echo "gpu-check: a plan's $device run differs from its CPU float32 run beyond the tolerance" >&2
  exit 1
fi
