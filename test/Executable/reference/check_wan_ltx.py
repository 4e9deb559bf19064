#!/usr/bin/env python3
"""Checks a one-rank dit-run against the float64 NumPy transcription of
diffusers' transformer (wan.py, ltx.py), on the same weights and inputs.

The weights are the runtime's seeded parameters (simulate_plan's
counter_normal, the same names), laid out as diffusers' state dict: a
parameter with a "checkpoint" shape in the plan is reshaped to it; Wan's
patch embedding in a plan without one (features in (pt, ph, pw, C) order)
is permuted into the Conv3d kernel [D, C, pt, ph, pw]. The noise and the
text are given to dit-run with --latents and --text-embeds (the same text
for every branch, so CFG changes nothing), and the reference runs the same
flow-matching Euler steps (sigma linear from 1 to 0, timestep 1000 sigma,
the second expert below boundary_ratio x 1000) through diffusers' math.
With --steps 1, dit-run's output o is x - v, so the comparison is that of
the transformer output v itself.

Usage: check_wan_ltx.py --ditc D --dit-run R --model DIR --workdir W
         --size HxWxF [--steps K] [--tolerance T] [--break WHAT]
         [--flags "COMPILE FLAGS" --nproc N]
(--flags compiles a parallel plan instead, run on N ranks.)
Prints "<name>: max relative error E over N values: ok|MISMATCH" and exits
1 on a mismatch. --break shifts the reference's math on purpose (swap-shift-
scale: the adaLN shift and scale chunks of every block swapped; no-rope:
rotary embedding left out; sin-cos: the timestep sinusoid as (sin, cos)), to
show that the comparison sees such a mistake.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import wan_ltx_common as common  # noqa: E402
import ltx  # noqa: E402
import wan  # noqa: E402
from simulate_plan import counter_normal, full_parameter, report  # noqa: E402


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAILED (exit {result.returncode}): {' '.join(cmd)}\n{result.stderr}")
    return result.stdout


def load_json(path, fallback=None):
    if not os.path.exists(path):
        return fallback
    with open(path) as f:
        return json.load(f)


def checkpoint_weights(plan, seed):
    """{expert: {diffusers name: float64 array}} from the plan's params."""
    manifest = json.load(open(os.path.join(plan, "manifest.json")))
    patch = manifest["model"]["patch"]
    out = {}
    for entry in manifest["programs"]:
        program = json.load(open(os.path.join(plan, entry["file"])))
        expert = program.get("expert", "transformer")
        weights = out.setdefault(expert, {})
        cache = {}
        ops = list(program["ops"])
        for fn in program.get("functions", {}).values():
            ops += fn["ops"]
        for op in ops:
            for spec in op.get("params", []):
                name = spec["name"]
                if name in weights:
                    continue
                stream = dict(spec)
                if expert != "transformer":
                    stream["name"] = f"{expert}.{name}"  # the runtime's streams
                value = full_parameter(seed, stream, cache)  # whole, not a slice
                if "checkpoint" in spec:
                    value = value.reshape(spec["checkpoint"]["shape"])
                elif name == "patch_embedding.weight" and len(spec["shape"]) == 2:
                    # Wan's Conv3d; LTX-Video's proj_in is a Linear [D, C].
                    d = spec["shape"][0]
                    value = value.reshape(d, patch[0], patch[1], patch[2], -1)
                    value = value.transpose(0, 4, 1, 2, 3)
                weights[name] = value
    return manifest, out


def break_weights(weights, what, family):
    """The reference with its adaLN shift and scale exchanged: swapping
    rows 0/1 and 3/4 of every block's table and of the shared projection
    is the same as reading shift where scale is and back."""
    if what != "swap-shift-scale":
        return weights
    w = dict(weights)
    shared = "condition_embedder.time_proj" if family == "wan" else "time_embed.linear"
    dim = w[shared + ".bias"].shape[0] // 6
    order = [1, 0, 2, 4, 3, 5]
    rows = np.concatenate([np.arange(i * dim, (i + 1) * dim) for i in order])
    w[shared + ".weight"] = w[shared + ".weight"][rows]
    w[shared + ".bias"] = w[shared + ".bias"][rows]
    for name in list(w):
        if name.endswith(".scale_shift_table") and name != "scale_shift_table":
            t = w[name]
            w[name] = t[:, order] if t.ndim == 3 else t[order]
    return w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ditc", required=True)
    ap.add_argument("--dit-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--size", required=True, help="HxWxF")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    # float32 dit-run against float64 math lands near 1e-7 on the tiny
    # models; 1e-6 keeps a tenfold margin and still sees small slips, such
    # as LTX's q/k norm eps 1e-6 for 1e-5 (about 5e-6).
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--break", dest="broken", default=None,
                    choices=["swap-shift-scale", "no-rope", "sin-cos"])
    ap.add_argument("--name", default=None)
    ap.add_argument("--flags", default="", help="extra ditc compile flags")
    ap.add_argument("--nproc", type=int, default=1)
    args = ap.parse_args()
    name = args.name or os.path.basename(os.path.normpath(args.model))
    os.makedirs(args.workdir, exist_ok=True)
    plan = os.path.join(args.workdir, "plan")
    height, width, frames = (int(v) for v in args.size.split("x"))
    if not os.path.exists(os.path.join(plan, "manifest.json")):
        run([args.ditc, "compile", args.model, "--height", str(height), "--width",
             str(width), "--num-frames", str(frames), "--dtype", "f32", "-o", plan]
            + args.flags.split())
    manifest, experts = checkpoint_weights(plan, args.seed)
    model, work = manifest["model"], manifest["workload"]
    family = model["family"]
    b, c = work["batch"], model["latent_channels"]
    f, h, w = work["latent_frames"], work["latent_height"], work["latent_width"]
    x = counter_normal(args.seed + 1, "noise", [b, c, f, h, w])
    text = counter_normal(args.seed + 1, "text", [b, work["text_tokens"], model["text_embed_dim"]])
    texts = np.stack([text] * work["branches"])
    np.save(os.path.join(args.workdir, "x.npy"), x.astype(np.float32))
    np.save(os.path.join(args.workdir, "text.npy"), texts.astype(np.float32))
    out = os.path.join(args.workdir, "o.npy")
    run([args.dit_run, plan, "--nproc", str(args.nproc), "--steps", str(args.steps),
         "--latents", os.path.join(args.workdir, "x.npy"),
         "--text-embeds", os.path.join(args.workdir, "text.npy"), "--output", out])
    got = np.load(out).astype(np.float64)

    # The reference sees the float32 inputs dit-run saw.
    x = x.astype(np.float32).astype(np.float64)
    text = text.astype(np.float32).astype(np.float64)
    index = load_json(os.path.join(args.model, "model_index.json"), {})
    if args.broken == "no-rope":
        common.rotate_pairs = lambda v, cos, sin: v
        wan.rotate_pairs = ltx.rotate_pairs = common.rotate_pairs
    if args.broken == "sin-cos":
        original = common.timestep_sinusoid
        wan.timestep_sinusoid = ltx.timestep_sinusoid = (
            lambda t, dim, flip, shift: original(t, dim, not flip, shift))
    sigmas = np.linspace(1.0, 0.0, args.steps + 1)
    boundary = (model.get("boundary_ratio") or 0.0) * 1000.0
    latents = x
    for step in range(args.steps):
        t = sigmas[step] * 1000.0
        expert = "transformer" if len(experts) == 1 or t >= boundary else "transformer_2"
        config = load_json(os.path.join(args.model, expert, "config.json"))
        weights = break_weights(experts[expert], args.broken, family)
        if family == "wan":
            timestep = np.full([b], t)
            if index.get("expand_timesteps"):
                # WanPipeline's expand_timesteps (TI2V): one timestep per
                # patch token, all t for text-to-video.
                timestep = np.full([b, f * h * w // (model["patch"][1] * model["patch"][2])], t)
            v = wan.forward(weights, config, latents, timestep, text)
        elif family == "ltx_video":
            # LTXPipeline: rope_interpolation_scale = (vae_t / frame_rate,
            # vae_s, vae_s), frame_rate 25.
            scale = (model["vae_temporal"] / 25.0, model["vae_spatial"], model["vae_spatial"])
            tokens = ltx.forward(weights, config, ltx.pack(latents), np.full([b], t), text,
                                 f, h, w, scale)
            v = ltx.unpack(tokens, f, h, w)
        else:
            sys.exit(f"check_wan_ltx: no reference for family {family}")
        latents = latents + (sigmas[step + 1] - sigmas[step]) * v
    sys.exit(report(got, latents, args.tolerance, name))


if __name__ == "__main__":
    main()
