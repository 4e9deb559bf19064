#!/usr/bin/env bash
# The main job on bundled models: install what is missing, build, import
# Wan2.1-T2V-14B, check a legal and an illegal configuration, then the whole
# path on tiny-wan: check, compile, run on two local ranks with dit-run, and
# compare with the one-rank run.
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
dit_run="${DITC_BUILD_DIR:-$root/build}/bin/dit-run"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tiny=(tiny-wan --height 64 --width 64 --num-frames 5)

echo
echo "== tiny-wan on two ranks: check, compile, run, and compare with one rank"
"$ditc" check "${tiny[@]}" --cfg-parallel-size 2
"$ditc" compile "${tiny[@]}" --dtype f32 -o "$work/one-rank"
"$ditc" compile "${tiny[@]}" --dtype f32 --cfg-parallel-size 2 -o "$work/cfg2" --summary
"$ditc" compile "${tiny[@]}" --dtype f32 --tp-size 2 -o "$work/tp2"
"$dit_run" "$work/one-rank" --nproc 1 --output "$work/one-rank.npy" --steps 8 2>/dev/null
"$dit_run" "$work/cfg2" --nproc 2 --output "$work/cfg2.npy" --steps 8
"$dit_run" "$work/tp2" --nproc 2 --output "$work/tp2.npy" --steps 8 2>/dev/null
echo
echo "== parity with the one-rank run (8 steps)"
for config in cfg2 tp2; do
  echo -n "$config: "
  /usr/bin/python3 "$root/test/Runtime/compare.py" "$work/$config.npy" "$work/one-rank.npy"
  cmp -s "$work/$config.npy" "$work/one-rank.npy" && echo "  identical bytes"
done
true
