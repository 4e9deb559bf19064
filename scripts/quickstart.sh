#!/usr/bin/env bash
# The main job on a bundled model: install what is missing, build, then
# import Wan2.1-T2V-14B at 832x480 with 81 frames and print its summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ditc="${DITC_BUILD_DIR:-$root/build}/bin/ditc"

echo
echo "== bundled models"
"$ditc" models
echo
echo "== ditc import wan2.1-t2v-14b --height 480 --width 832 --num-frames 81 --summary"
"$ditc" import wan2.1-t2v-14b --height 480 --width 832 --num-frames 81 --summary
echo
echo "== ditc check wan2.1-t2v-14b --tp-size 2 --ulysses-degree 4 (legal)"
"$ditc" check wan2.1-t2v-14b --height 480 --width 832 --num-frames 81 --tp-size 2 --ulysses-degree 4
echo
echo "== ditc check sd3.5-large --ulysses-degree 4 (illegal: 38 heads)"
"$ditc" check sd3.5-large --ulysses-degree 4 || true
echo
echo "== ditc compile tiny-wan for cfg 2 x tp 2 (4 ranks)"
plan=$(mktemp -d)/plan
"$ditc" compile tiny-wan --height 128 --width 128 --num-frames 5 \
  --cfg-parallel-size 2 --tp-size 2 -o "$plan" --summary
ls "$plan" "$plan/programs"
