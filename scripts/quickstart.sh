#!/usr/bin/env bash
# The main job on bundled models: install what is missing, build, import
# Wan2.1-T2V-14B, check a legal and an illegal configuration, then the whole
# path on tiny-wan: check, compile, run on two local ranks with dit-run, and
# compare with the one-rank run; last, a prompt to a picture on tiny-flux's
# whole pipeline (tokenizers, text encoders, transformer, VAE) and a video
# (tiny-wan) out of a denoising run, decoded with the plans' VAEs. The
# bundled tiny models have no weights: the picture's pipeline gets random
# ones and the video's are drawn from the seed, so the pixels are noise, but
# every stage of the pipeline ran.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ditc="${DITC_BUILD_DIR:-$root/build}/bin/ditc"
# The project's Python environment, which setup.sh made.
python="${DITC_VENV:-$root/.venv}/bin/python3"

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
  "$python" "$root/test/Runtime/compare.py" "$work/$config.npy" "$work/one-rank.npy"
  cmp -s "$work/$config.npy" "$work/one-rank.npy" && echo "  identical bytes"
done

out=${DITC_QUICKSTART_OUT:-${DITC_BUILD_DIR:-$root/build}}
echo
echo "== a prompt to a picture: tiny-flux's whole pipeline (random weights: noise)"
# The pipeline folder a diffusers snapshot would be: the transformer, the
# VAE, CLIP and T5 with their tokenizers (a BPE vocabulary and a
# SentencePiece model learned from test/Text/Inputs/corpus.txt), all tiny,
# with random weights under diffusers' and transformers' names.
"$ditc" compile tiny-flux --height 256 --width 256 --dtype f32 --text-tokens 32 -o "$work/flux"
pipeline="$work/tiny-flux-pipeline"
export PYTHONPATH="$root/bench:$root/test/lib${PYTHONPATH:+:$PYTHONPATH}"
"$python" "$root/test/lib/snapshot.py" "$work/flux" "$pipeline" > /dev/null
"$python" "$root/test/Vae/vae_check.py" make "$work/vae" \
  --config "$root/models/tiny-flux/vae/config.json" > /dev/null
cp -r "$work/vae/vae" "$pipeline/"
"$python" "$root/test/Text/text_check.py" make "$pipeline" --family flux \
  --transformer "$root/models/tiny-flux/transformer/config.json"
prompt="a photo of a cat sitting on a red chair in the morning light"
echo "dit-run --tokenize (CLIP): $("$dit_run" --tokenize "$pipeline/tokenizer" --prompt "$prompt")"
"$dit_run" "$work/flux" --nproc 1 --steps 8 --weights "$pipeline" --prompt "$prompt" \
  --output "$out/quickstart.png" 2>&1 | grep "wrote"
"$dit_run" "$work/tp2" --nproc 2 --steps 8 --output "$out/quickstart.mp4" 2>&1 | grep "wrote"
true
