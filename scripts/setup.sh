#!/usr/bin/env bash
# Installs, with apt, the Debian 12 packages ditc needs that are missing.
# Usage: scripts/setup.sh [--runtime]
#   --runtime  also the libtorch runtime's packages (libtorch, gloo, and
#              python3-torch for the eager-PyTorch benchmark peer)
set -euo pipefail

packages=(
  cmake ninja-build g++ python3 python3-numpy
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  nlohmann-json3-dev libgtest-dev libzstd-dev zlib1g-dev
)
if [[ "${1:-}" == "--runtime" ]]; then
  packages+=(libtorch-dev libgloo-dev python3-torch)
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
