#!/usr/bin/env bash
# Installs what ditc needs that is missing: Debian 12 packages with apt, and
# the one Python environment (.venv/, or $DITC_VENV) from the pinned
# scripts/requirements.txt: torch 2.11.0 (CUDA 13 build), diffusers,
# transformers, numpy. dit-run links that torch's libtorch; the tests,
# benchmarks and scripts run on that environment's python.
# Usage: scripts/setup.sh [--compiler-only]
#   --compiler-only  skip the runtime's Debian packages (gloo's headers,
#                    libav, SentencePiece); the environment is made all the
#                    same, since the compiler's tests run NumPy references
# A second run reuses what is there: apt is not called when every package
# is installed, and the environment is kept while it was made from the same
# requirements file (.venv/ditc-requirements.sha256).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
compiler_only=0
case "${1:-}" in
  "") ;;
  --compiler-only) compiler_only=1 ;;
  *) echo "setup.sh: unknown argument '$1'; allowed: --compiler-only" >&2; exit 2 ;;
esac

packages=(
  cmake ninja-build g++ python3 python3-venv
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  nlohmann-json3-dev libgtest-dev libzstd-dev zlib1g-dev
  librsvg2-bin  # rsvg-convert: the lit tests render each plan's layout.svg
  libicu-dev    # CLIP's tokenizer (normalisation), fuzzed in the compiler-only build too
)
if (( ! compiler_only )); then
  # Gloo's headers only: torch's wheel compiles gloo into libtorch_cpu but
  # ships no gloo/*.h, and c10d's ProcessGroupGloo.hpp includes five of
  # them. dit-run passes gloo's device handles through shared_ptr and links
  # no libgloo, so only the declarations are used (docs/runtime.md, "The
  # torch dit-run links").
  packages+=(libgloo-dev)
  # The CPU kernels' GEMM tiles (runtime/include/ditc/Runtime/Exec/HostBlas.h
  # says why OpenBLAS, not the MKL inside torch's wheel).
  packages+=(libopenblas0-pthread)
  # MP4 output (H.264 through libavcodec); ffprobe reads it back in tests.
  packages+=(pkg-config libavcodec-dev libavformat-dev libavutil-dev libswscale-dev ffmpeg)
  # Prompts: SentencePiece (T5's tokenizer, in dit-sentencepiece; spm_train
  # makes the tests' tiny one).
  packages+=(libsentencepiece-dev sentencepiece)
fi

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  sudo=(sudo)
fi
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} Debian packages are installed"
else
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- The Python environment ------------------------------------------------
venv=${DITC_VENV:-$root/.venv}
requirements=$root/scripts/requirements.txt
want=$(sha256sum "$requirements" | cut -d' ' -f1)
stamp=$venv/ditc-requirements.sha256
if [[ -x "$venv/bin/python3" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "setup: $venv holds scripts/requirements.txt ($("$venv/bin/python3" -c \
    'import torch; print("torch", torch.__version__)'))"
  exit 0
fi
if [[ -e "$venv" && ! -f "$venv/pyvenv.cfg" ]]; then
  echo "setup: $venv exists and is not a virtual environment; move it or set DITC_VENV" >&2
  exit 2
fi
echo "setup: making $venv from scripts/requirements.txt (about 2.6 GB of wheels)"
rm -f "$stamp"
# Debian's python3 (3.11), whatever else is first on PATH.
/usr/bin/python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check \
  --require-virtualenv -r "$requirements"
echo "$want" > "$stamp"
echo "setup: $venv ready ($("$venv/bin/python3" -c \
  'import torch; print("torch", torch.__version__)'))"
