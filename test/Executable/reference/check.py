#!/usr/bin/env python3
"""Checks a one-rank dit-run of an MMDiT model (FLUX, SD3/3.5, Qwen-Image)
against the float64 NumPy transcription of diffusers' transformer in this
folder (flux.py, sd3.py, qwenimage.py), which knows nothing of plans.

  check.py inputs PLAN DIR [--seed S]
      writes DIR/latents.npy ([B, C, 1, H, W], dit-run's layout) and
      DIR/text.npy ((branches, B, L, D), the same text for every branch).
  check.py compare PLAN CONFIG --latents X --text-embeds T --output O
                   [--seed S] [--tolerance TOL]
      after `dit-run PLAN --nproc 1 --steps 1 --latents X --text-embeds T
      --output O --seed S`: with one step from sigma 1 to 0, O = X - v, so
      v = X - O is the transformer output (guided over the branches as the
      plan's step combines them). It compares v with the reference's on the
      same weights and inputs and prints the max absolute and relative
      error; exit 1 above the tolerance.

The weights are dit-run's seeded parameters (the initializer of
docs/runtime.md, `simulate_plan.counter_normal`), drawn under the plan's
parameter names and shapes and handed to the reference as a diffusers
state dict. The reference asks for every tensor by its diffusers name, so
a plan parameter the reference does not read, or a tensor the reference
needs that the plan lacks, fails the check: names and shapes are
diffusers'. `to_checkpoint` puts the patch embedding and the output
projection into diffusers' layout from the plan's token feature order.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import flux  # noqa: E402
import qwenimage  # noqa: E402
import sd3  # noqa: E402
from common import Weights  # noqa: E402
from simulate_plan import Plan, counter_normal, full_parameter  # noqa: E402


def plan_parameters(plan):
    """Every parameter the plan's programs read: name -> (spec, op attrs)."""
    specs = {}
    for program in plan.programs.values():
        functions = [program] + list(program.get("functions", {}).values())
        for fn in functions:
            for op in fn.get("ops", []):
                for spec in op.get("params", []):
                    specs[spec["name"]] = (spec, op.get("attrs", {}))
    return specs


def token_order(c, p):
    """Index map from diffusers' packed feature order (c, ph, pw) to the
    plan's channels-last patchify order (ph, pw, c): feature j of
    diffusers' layout is feature order[j] of the plan's."""
    return np.array([(i * p + k) * c + ch for ch in range(c) for i in range(p) for k in range(p)])


def to_checkpoint(family, manifest, spec, attrs, value):
    """The plan's tensor in diffusers' layout. A parameter with a
    `checkpoint` shape is that tensor reshaped (docs/plan-format.md). Else,
    where the plan patchifies channels-last, (ph, pw, C) features, the
    patch embedding and the output projection are permuted to diffusers'
    orders: FLUX and Qwen-Image pack (C, ph, pw); SD3's Conv2d kernel is
    [D, C, p, p] and its unpatchify reads (p, q, C), the plan's order."""
    name = spec["name"]
    if "checkpoint" in spec:
        return value.reshape(spec["checkpoint"]["shape"])
    c = manifest["model"]["latent_channels"]
    p = manifest["model"]["patch"][1]
    embed_last = attrs.get("features", "channels_last") == "channels_last"
    out_last = manifest["latents"].get("feature_order", "channels_last") == "channels_last"
    if family in ("flux", "qwen_image"):
        if name in ("x_embedder.weight", "img_in.weight") and embed_last:
            return value[:, token_order(c, p)]
        if name in ("proj_out.weight", "proj_out.bias") and out_last:
            # Rows are output features: out_channels x 2 x 2.
            return value[token_order(value.shape[0] // (p * p), p)]
    if family == "sd3" and name == "pos_embed.proj.weight":
        d = value.shape[0]
        if embed_last:
            return value.reshape(d, p, p, c).transpose(0, 3, 1, 2)
        return value.reshape(d, c, p, p)
    return value


def draw_weights(plan, family, seed):
    cache = {}
    return {name: to_checkpoint(family, plan.manifest, spec, attrs,
                                full_parameter(seed, spec, cache))
            for name, (spec, attrs) in plan_parameters(plan).items()}


def load_config(path):
    with open(path) as f:
        config = json.load(f)
    return {k: v for k, v in config.items() if not k.startswith("_")}


def reference_velocity(family, weights, config, latents, text, pooled, sigma, guidance,
                       mask=None):
    if family == "flux":
        return flux.velocity(weights, config, latents, text, pooled, sigma, guidance)
    if family == "sd3":
        return sd3.velocity(weights, config, latents, text, pooled, sigma)
    if family == "qwen_image":
        return qwenimage.velocity(weights, config, latents, text, sigma, mask)
    sys.exit(f"check.py: no reference for family {family}")


def inputs(args):
    plan = Plan(args.plan)
    m, work = plan.manifest["model"], plan.manifest["workload"]
    b = work["batch"]
    shape = [b, m["latent_channels"], 1, work["latent_height"], work["latent_width"]]
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.dir, exist_ok=True)
    np.save(os.path.join(args.dir, "latents.npy"), rng.standard_normal(shape).astype(np.float32))
    text = rng.standard_normal([b, work["text_tokens"], m["text_embed_dim"]]).astype(np.float32)
    np.save(os.path.join(args.dir, "text.npy"),
            np.stack([text] * work["branches"]))


def compare(args):
    plan = Plan(args.plan)
    manifest = plan.manifest
    family = manifest["model"]["family"]
    work = manifest["workload"]
    config = load_config(args.config)
    weights = Weights(draw_weights(plan, family, args.seed))
    x = np.load(args.latents).astype(np.float64)
    texts = np.load(args.text_embeds).astype(np.float64)
    out = np.load(args.output).astype(np.float64)
    v_run = (x - out)[:, :, 0]
    latents = x[:, :, 0]
    b = work["batch"]
    # dit-run's seeded pooled text (docs/runtime.md, "Inputs"); a
    # guidance-distilled model's guidance input is the plan's scale.
    pooled = [counter_normal(args.seed, f"pooled{br}", [b, manifest["model"]["pooled_dim"]])
              for br in range(work["branches"])]
    masks = np.load(args.text_mask) if args.text_mask else [None] * work["branches"]
    try:
        velocities = [reference_velocity(family, weights, config, latents, texts[br],
                                         pooled[br], 1.0, work["guidance_scale"], masks[br])
                      for br in range(work["branches"])]
    except KeyError as missing:
        sys.exit(f"check.py: MISMATCH: {missing.args[0]}")
    # The step's CFG combine: u + s (c - u), the unconditional branch last.
    v_ref = velocities[0]
    if len(velocities) == 2:
        c, u = velocities
        v_ref = u + work["guidance_scale"] * (c - u)
        if family == "qwen_image":
            # QwenImagePipeline's true CFG: each packed token back to the
            # norm of the conditional prediction's token.
            packed, cond = flux.pack_latents(v_ref), flux.pack_latents(c)
            packed = packed * (np.linalg.norm(cond, axis=-1, keepdims=True) /
                               np.linalg.norm(packed, axis=-1, keepdims=True))
            v_ref = flux.unpack_latents(packed, *v_ref.shape[2:])
    unused = weights.unused()
    if unused:
        sys.exit(f"check.py: the plan has parameters diffusers' {family} does not "
                 f"read: {', '.join(unused[:8])}")
    error = np.abs(v_run - v_ref)
    abs_err = float(error.max())
    rel_err = abs_err / max(float(np.abs(v_ref).max()), 1e-30)
    verdict = "ok" if rel_err <= args.tolerance else "MISMATCH"
    print(f"{manifest['model']['name']}: dit-run vs diffusers reference over {v_ref.size} "
          f"values: max abs error {abs_err:.3e}, max relative error {rel_err:.3e}: {verdict}")
    sys.exit(0 if verdict == "ok" else 1)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inputs")
    p.add_argument("plan")
    p.add_argument("dir")
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("compare")
    p.add_argument("plan")
    p.add_argument("config")
    p.add_argument("--latents", required=True)
    p.add_argument("--text-embeds", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=1e-5)
    p.add_argument("--text-mask", help="the run's --text-mask [branches, B, L] "
                   "(Qwen-Image); default: every text token valid")
    args = parser.parse_args()
    (inputs if args.command == "inputs" else compare)(args)


if __name__ == "__main__":
    main()
