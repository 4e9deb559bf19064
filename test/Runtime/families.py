#!/usr/bin/env python3
"""dit-run on every model family `ditc import` accepts, on shrunken copies of
the bundled real snapshots.

The real models are far too large for a CPU test, so each one is copied
(model_index.json, transformer/, transformer_2/, vae/, but not the text
encoders) into the work folder
and its transformer config is edited to tiny sizes. Only sizes change: every
key the family's reader (lib/Importer/ModelSpec.cpp) looks at keeps its
meaning, and every flag that selects structure stays as published
(guidance_embeds, qk_norm, dual_attention_layers, use_rotary_positional_
embeddings, patch sizes, channels, the VAE config and so the VAE compression,
a second expert). The edits are in MODELS below, with why each keeps the
importer's invariants.

For each model it
  1. compiles the one-rank plan, runs `dit-run --nproc 1`, and compares the
     latents with the float64 NumPy execution of the same plan
     (test/Executable/simulate_plan.py);
  2. compiles each 2-rank configuration listed for the model, runs
     `dit-run --nproc 2`, and compares the latents with the one-rank run's
     (compare.relative_error).
Each comparison prints one line
  <model> one-rank vs float64 reference: max relative error E: ok
  <model> <config> vs one-rank: max relative error E: ok
("MISMATCH" instead of "ok" above the tolerance). A failing command prints
"<model> <what>: FAILED (exit N): <command>" and its stderr. The exit status
is 1 when any line is not ok.

Usage: families.py --ditc D --dit-run R --models DIR --workdir W
                   [--steps K] [--jobs J] [--only NAME ...] [--config NAME=FLAGS ...]
                   [--workload FLAGS]
(--only restricts the models; --config replaces the table's 2-rank
configurations and --workload adds workload flags, for exploring.)
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np

from compare import relative_error, world_size

HERE = os.path.dirname(os.path.abspath(__file__))

# Shared shrink of the head geometry: 4 heads x 8 = width 32, or 4 x 16 = 64
# where a rotary split needs even per-axis dims (below). 4 heads divide by 2,
# so ulysses 2 and tp 2 stay legal.
HEADS8 = {"num_attention_heads": 4, "attention_head_dim": 8}
HEADS16 = {"num_attention_heads": 4, "attention_head_dim": 16}

# Wan: the reader takes num_layers, ffn_dim, text_dim, freq_dim, patch_size
# ([t, h, w], kept), in/out_channels (kept) and derives the rotary split from
# head_dim (wanRopeAxes, always sums to head_dim; 8 -> 4, 2, 2 as tiny-wan).
# image_dim stays null (text-to-video). freq_dim must be >= 2 and even for
# the sinusoid. For the two-expert A14B both configs get the same edit, so
# readSnapshot's "experts share one shape" check holds. The experts' weights
# differ (the second expert's streams are named "transformer_2.<name>"), and
# with 2 steps the timesteps are 1000 and 500, on either side of the 875
# boundary, so the A14B lines check that dit-run switches experts where the
# NumPy reference does.
WAN = dict(HEADS8, num_layers=2, ffn_dim=64, text_dim=16, freq_dim=16)

# FLUX: num_layers (double) and num_single_layers stay >= 1 each, so both
# block kinds run. axes_dims_rope is absent in the real configs (diffusers'
# default 16, 56, 56 sums to the real head_dim 128), so it is given: it must
# be 3 axes summing to head_dim (checkRopeAxes); 4 + 6 + 6 = 16, even axes
# as the real ones. in_channels 64 (2x2-packed 16 latent channels) and
# patch_size 1 are kept; guidance_embeds is kept (dev: true, schnell: false).
FLUX = dict(HEADS16, num_layers=1, num_single_layers=1, joint_attention_dim=16,
            pooled_projection_dim=8, axes_dims_rope=[4, 6, 6])

# Qwen-Image: dual-stream only. axes_dims_rope must sum to head_dim
# (4 + 6 + 6 = 16); in_channels 64 stays a multiple of patch_size^2 = 4.
QWEN = dict(HEADS16, num_layers=2, joint_attention_dim=16, pooled_projection_dim=8,
            axes_dims_rope=[4, 6, 6])

# HunyuanVideo: one double and one single block, one token-refiner layer
# (so the refiner still runs). rope_axes_dim must sum to head_dim
# (4 + 6 + 6 = 16). guidance_embeds, qk_norm, patch (2, t 1), rope_theta kept.
HUNYUAN = dict(HEADS16, num_layers=1, num_single_layers=1, num_refiner_layers=1,
               text_embed_dim=16, pooled_projection_dim=8, rope_axes_dim=[4, 6, 6])

# CogVideoX: one set of weights over text + video. With rotary embeddings
# (5b) the reader splits head_dim as d/4 + 3d/8 + 3d/8 and requires the sum
# to be d, so d is a multiple of 8; d = 16 gives 4, 6, 6 (even, as the real
# 16, 24, 24). 2b's fixed sin/cos table needs a width divisible by 16
# (4 x 16 = 64). time_embed_dim is its own width (512 real, small here).
# The 60 x 90 sample size is kept, so 5b's 4 x 4 rotary grid sits on the
# crop of the sample at fractional rows and columns.
COGVIDEOX = dict(HEADS16, num_layers=2, text_embed_dim=16, time_embed_dim=16)

# LTX-Video: cross_attention_dim must equal heads x head_dim (4 x 8 = 32);
# caption_channels is the text width. qk_norm across heads, patch 1/1 and the
# 128 latent channels are kept.
LTX = dict(HEADS8, num_layers=2, caption_channels=16, cross_attention_dim=32)

# Mochi: dual-stream with a narrower text stream: pooled_projection_dim is
# the text stream's width (1536 real vs width 3072; 48 here vs 64).
# time_embed_dim is the sinusoid width (>= 2). The SwiGLU widths are derived
# by the importer as 8w/3: 170 for the image stream, 128 for the text
# stream. Both must split over tp 2 as the real 8192 and 4096 do; a text
# width of 32 (SwiGLU 85) passes `ditc check --tp-size 2` (its tp-heads rule
# does not look at the text stream's FFN) but fails in the partitioner.
# out_channels stays null (= in_channels 12).
MOCHI = dict(HEADS16, num_layers=2, text_embed_dim=16, pooled_projection_dim=48,
             time_embed_dim=16)

# SD3: caption_projection_dim must equal heads x head_dim (4 x 8 = 32).
# 2 blocks, so the last block's text-only-feeds-attention shape is there.
# qk_norm (3.5) is kept. SD3.5-Medium's dual_attention_layers (0..12 of 24)
# must index blocks, so it becomes [0]: one MMDiT-X block and one plain.
SD3 = dict(HEADS8, num_layers=2, caption_projection_dim=32, joint_attention_dim=16,
           pooled_projection_dim=8)

# Workloads: H and W divide by VAE spatial x patch (16, or 32 for the Wan2.2
# VAE and LTX's, whose patch is 1), frames are 1 + a multiple of the VAE's
# temporal compression, and every grid has an even token count so that the
# sequence-parallel configurations split it.
VIDEO = "--height 64 --width 64 --num-frames 5"   # 2 x 4 x 4 tokens (8/4 VAE)
IMAGE = "--height 64 --width 64"                  # 4 x 4 tokens

# name, family edits, workload, 2-rank configurations (name=flags[:bitwise]).
# The configurations are spread over the axes the model allows, so that
# together the families exercise ulysses, ring, tp, cfg and pp.
MODELS = [
    ("wan2.1-t2v-1.3b", WAN, VIDEO, ["ulysses2=--ulysses-degree 2"]),
    # The Wan2.2 VAE compresses 16x: 64 x 64 is 2 x 2 x 2 tokens.
    ("wan2.2-ti2v-5b", WAN, VIDEO, ["tp2=--tp-size 2"]),
    ("wan2.2-t2v-a14b", WAN, VIDEO, ["ring2=--ring-degree 2"]),
    ("flux.1-dev", FLUX, IMAGE, ["ulysses2=--ulysses-degree 2"]),
    ("flux.1-schnell", FLUX, IMAGE, ["tp2=--tp-size 2"]),
    ("qwen-image", QWEN, IMAGE, ["ring2=--ring-degree 2"]),
    # Its text is varlen-packed and after the image: ring 2 rotates, and
    # kv_gather 2 gathers, only the image K/V; each rank attends the
    # replicated text locally.
    ("hunyuanvideo", HUNYUAN, VIDEO, ["ulysses2=--ulysses-degree 2", "ring2=--ring-degree 2",
                                      "kv_gather2=--kv-gather-degree 2"]),
    # 2b adds its fixed position table to the image tokens: ring 2 checks
    # that each rank adds its own block's rows.
    ("cogvideox-2b", COGVIDEOX, VIDEO, ["tp2=--tp-size 2", "ring2=--ring-degree 2"]),
    ("cogvideox-5b", COGVIDEOX, VIDEO, ["ulysses2=--ulysses-degree 2"]),
    # LTX's VAE compresses 32x and 8x in time: 2 x 2 x 2 tokens.
    ("ltx-video", LTX, "--height 64 --width 64 --num-frames 9", ["ulysses2=--ulysses-degree 2"]),
    # Mochi's VAE compresses 6x in time: 7 frames are 2 latent frames.
    # Mochi's masked text (text_mask) stays whole on each rank of the ring.
    ("mochi-1-preview", MOCHI, "--height 64 --width 64 --num-frames 7",
     ["tp2=--tp-size 2", "ring2=--ring-degree 2"]),
    ("sd3-medium", SD3, IMAGE, ["ulysses2=--ulysses-degree 2"]),
    ("sd3.5-medium", dict(SD3, dual_attention_layers=[0]), IMAGE, ["pp2=--pp-size 2:bitwise"]),
    ("sd3.5-large", SD3, IMAGE, ["cfg2=--cfg-parallel-size 2:bitwise"]),
]


WRITER = os.path.join(os.path.dirname(HERE), "lib", "snapshot.py")


def shrink(source, dest, edits):
    """Copies the snapshot folder `source` to `dest` and applies `edits` to
    every transformer config in it (transformer/, transformer_2/). The text
    encoders' configs are left out: their published widths would not match
    the shrunken transformer's, and the test/Text suite covers them."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(source, dest,
                    ignore=lambda folder, names: [n for n in names
                                                  if n.startswith("text_encoder")])
    for part in ("transformer", "transformer_2"):
        path = os.path.join(dest, part, "config.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            config = json.load(f)
        for key in edits:
            # FLUX's real configs leave axes_dims_rope to its default.
            if key not in config and key != "axes_dims_rope":
                sys.exit(f"families.py: {path} has no key {key}; the table is stale")
        config.update(edits)
        with open(path, "w") as f:
            json.dump(config, f, indent=2)


class Failed(Exception):
    pass


def run(log, label, cmd, allowed=(0,)):
    """Runs cmd; on an exit status not in `allowed`, logs the command and its
    stderr under `label` and raises Failed."""
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode not in allowed:
        log.append(f"{label}: FAILED (exit {result.returncode}): {shlex.join(cmd)}")
        # ditc compile reports an illegal configuration on stdout.
        log.append((result.stderr.strip() or result.stdout).rstrip())
        raise Failed()
    return result


def text_mask(plan, path):
    """For a plan whose transformer takes a text mask (HunyuanVideo, Mochi,
    Qwen-Image), writes one to `path` with the last third of every row's
    text padded, as a tokenizer pads a short prompt, and returns `path`;
    else None. Every run of the model then attends and pools only the valid
    tokens."""
    manifest = json.load(open(os.path.join(plan, "manifest.json")))
    program = json.load(open(os.path.join(plan, manifest["programs"][0]["file"])))
    if not any(i["name"] == "text_mask" for i in program["inputs"]):
        return None
    work = manifest["workload"]
    tokens = work["text_tokens"]
    mask = np.ones([work["branches"], work["batch"], tokens], dtype=np.float32)
    mask[..., tokens - tokens // 3:] = 0
    np.save(path, mask)
    return path


def check_model(args, name, edits, workload, configs):
    """Runs one model's comparisons; returns (lines, ok)."""
    log = []
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "model")
    shrink(os.path.join(args.models, name), model, edits)
    flags = shlex.split(workload) + ["--dtype", "f32"] + shlex.split(args.workload)
    # One thread per rank: two ranks (and two models at a time) would
    # otherwise oversubscribe the cores. With the same thread count, cfg and
    # pp ranks reproduce the one-rank run bit for bit.
    run_flags = ["--steps", str(args.steps), "--timeout", "60", "--threads", "1"]
    simulate = os.path.join(os.path.dirname(HERE), "Executable", "simulate_plan.py")
    ok = True
    plan1 = os.path.join(work, "one-rank")
    one = plan1 + ".npy"
    shutil.rmtree(plan1, ignore_errors=True)
    try:
        label = f"{name} one-rank"
        run(log, label, [args.ditc, "compile", model, *flags, "-o", plan1])
        weights = []
        if args.weights:
            # One snapshot, written from the one-rank plan, for every run.
            snapshot = os.path.join(work, "snapshot")
            shutil.rmtree(snapshot, ignore_errors=True)
            run(log, label, [sys.executable, WRITER, plan1, snapshot, "--dtype",
                             args.weights, "--shards", str(args.shards), "--seed", "7"])
            weights = ["--weights", snapshot]
            run_flags += weights
        masks = []
        mask = text_mask(plan1, os.path.join(work, "text-mask.npy"))
        if mask:
            masks = ["--text-mask", mask]
            run_flags += masks
        run(log, label, [args.dit_run, plan1, "--nproc", "1", "--output", one, *run_flags])
        # simulate_plan.py exits 1 on a mismatch, after printing the error.
        result = run(log, label, [sys.executable, simulate, plan1, "--runtime-output", one,
                                  "--steps", str(args.steps), "--tolerance",
                                  str(args.tolerance), *weights, *masks], allowed=(0, 1))
        out = result.stdout
        match = re.search(r"max relative error (\S+) over \d+ values: (\w+)", out)
        if not match:
            log.append(f"{label}: FAILED: simulate_plan.py printed {out!r}")
            log.append(result.stderr.rstrip())
            raise Failed()
    except Failed:
        return log, False
    log.append(f"{label} vs float64 reference: max relative error "
               f"{match.group(1)}: {match.group(2)}")
    ok &= match.group(2) == "ok"
    for config in args.config or configs:
        cname, _, rest = config.partition("=")
        cflags, _, mode = rest.partition(":")
        label = f"{name} {cname}"
        plan = os.path.join(work, cname)
        two = plan + ".npy"
        shutil.rmtree(plan, ignore_errors=True)
        try:
            run(log, label, [args.ditc, "compile", model, *flags, *shlex.split(cflags),
                             "-o", plan])
            run(log, label, [args.dit_run, plan, "--nproc", str(world_size(plan)),
                             "--output", two, *run_flags])
        except Failed:
            ok = False
            continue
        error = relative_error(np.load(two), np.load(one))
        good = error <= args.tolerance
        same = ""
        if mode == "bitwise":
            identical = np.load(two).tobytes() == np.load(one).tobytes()
            good &= identical
            same = ", identical bytes" if identical else ", DIFFERENT bytes"
        log.append(f"{label} vs one-rank: max relative error {error:.3e}{same}: "
                   f"{'ok' if good else 'MISMATCH'}")
        ok &= good
    return log, ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ditc", required=True)
    parser.add_argument("--dit-run", required=True)
    parser.add_argument("--models", required=True, help="the bundled models folder")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--jobs", type=int, default=2,
                        help="models checked at a time (a dit-run spends much of "
                             "its life starting up and meeting its peers)")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--weights", choices=["f32", "f16", "bf16"],
                        help="every run loads a snapshot of random values in this "
                             "dtype (test/lib/snapshot.py) with dit-run --weights, "
                             "and the float64 reference reads the same values")
    parser.add_argument("--shards", type=int, default=1,
                        help="with --weights: shard files per transformer")
    parser.add_argument("--workload", default="",
                        help="extra workload flags for every model (--batch-size 2)")
    parser.add_argument("--config", action="append", default=[])
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    models = [m for m in MODELS if not args.only or m[0] in args.only]
    failed = False
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(check_model, args, *m) for m in models]
        # Lines in the table's order, whatever order the models finish in.
        for future in futures:
            lines, ok = future.result()
            print("\n".join(lines), flush=True)
            failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
