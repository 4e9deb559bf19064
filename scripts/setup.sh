#!/usr/bin/env bash
# Installs, with apt, the Debian 12 packages ditc needs that are missing.
# Usage: scripts/setup.sh [--compiler-only]
#   --compiler-only  skip the runtime's packages: libtorch and gloo for
#                    dit-run, python3-torch for the eager-PyTorch benchmark
#                    peer, and OpenBLAS (see below)
set -euo pipefail

packages=(
  cmake ninja-build g++ python3 python3-numpy
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  nlohmann-json3-dev libgtest-dev libzstd-dev zlib1g-dev
  librsvg2-bin  # rsvg-convert: the lit tests render each plan's layout.svg
  libicu-dev    # CLIP's tokenizer (normalisation), fuzzed in the compiler-only build too
)
if [[ "${1:-}" != "--compiler-only" ]]; then
  # libtorch-dev alone pulls the reference (netlib) BLAS, whose sgemm runs
  # at ~2.6 GFLOP/s here; OpenBLAS takes over libblas.so.3 at ~78 GFLOP/s
  # per core, for dit-run and for the eager peer alike.
  packages+=(libtorch-dev libgloo-dev python3-torch libopenblas0-pthread)
  # MP4 output (H.264 through libavcodec); ffprobe reads it back in tests.
  packages+=(pkg-config libavcodec-dev libavformat-dev libavutil-dev libswscale-dev ffmpeg)
  # Prompts: SentencePiece (T5's tokenizer, in dit-sentencepiece; spm_train
  # makes the tests' tiny one).
  packages+=(libsentencepiece-dev sentencepiece)
  # The tests' reference tokenizers: the regex module (CLIP's \p{L}
  # pattern) and SentencePiece's Python binding.
  packages+=(python3-regex python3-sentencepiece)
fi

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  sudo=(sudo)
fi
echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
