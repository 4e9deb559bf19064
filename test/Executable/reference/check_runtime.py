#!/usr/bin/env python3
"""Compares a one-rank dit-run transformer output with the float64 NumPy
reference of the family (this folder's <family>.py, transcribed from
diffusers, not from the plan).

Usage: check_runtime.py PLAN CONFIG --latents X.npy --text-embeds T.npy
                        --output O.npy --timestep T [--guidance G] [--seed S]
                        [--tolerance R]

dit-run ran PLAN with `--nproc 1 --steps 1 --latents X --text-embeds T
--output O` (the same text for every branch), so O = X - v and v is the
transformer output in dit-run's [B, C, F, H, W] layout. The weights are the
plan's seeded parameters (docs/runtime.md, "Inputs"), looked up by their
diffusers names and put into diffusers' layouts. The check passes when
max|v - v_ref| / max|v_ref| <= tolerance, and prints both errors.
"""
import argparse
import importlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from simulate_plan import counter_normal, full_parameter  # noqa: E402  the seeded initializer


def plan_parameters(plan):
    """name -> parameter entry of every op of every program."""
    manifest = json.load(open(os.path.join(plan, "manifest.json")))
    params = {}

    def visit(ops):
        for op in ops:
            for spec in op.get("params", []):
                params.setdefault(spec["name"], spec)

    for entry in manifest["programs"]:
        program = json.load(open(os.path.join(plan, entry["file"])))
        visit(program["ops"])
        for fn in program.get("functions", {}).values():
            visit(fn["ops"])
    return manifest, params


def to_checkpoint(spec, value, manifest, config):
    """The checkpoint tensor a plan parameter stands for: with a
    `checkpoint` shape (a Conv2d/Conv3d patch kernel), the op's tensor is
    its row-major reshape; otherwise the tensor itself. The patch
    embedding's columns are (C, pt, ph, pw), and the plan keeps each
    family's own unpatchify order (`latents.feature_order`), so no
    parameter is permuted (docs/plan-format.md)."""
    if "checkpoint" in spec:
        return value.reshape(spec["checkpoint"]["shape"])
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("config")
    parser.add_argument("--latents", required=True)
    parser.add_argument("--text-embeds", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--timestep", type=float, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--guidance", type=float,
                        help="the embedded guidance dit-run feeds (HunyuanVideo); "
                        "default 1000 x the plan's guidance scale, as its pipeline "
                        "passes it")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--text-mask", help="the run's --text-mask [branches, B, L] "
                        "(HunyuanVideo, Mochi); default: every text token valid")
    args = parser.parse_args()

    manifest, params = plan_parameters(args.plan)
    family = manifest["model"]["family"]
    # The reference module of each family, named as diffusers' model.
    reference = importlib.import_module({"hunyuan_video": "hunyuanvideo"}.get(family, family))
    config = json.load(open(args.config))
    cache = {}
    weights = {name: to_checkpoint(spec, full_parameter(args.seed, spec, cache), manifest,
                                        config)
               for name, spec in params.items()}
    # Parameters are drawn in float64 and rounded to float32 once.
    weights = {k: v.astype(np.float32).astype(np.float64) for k, v in weights.items()}

    x = np.load(args.latents).astype(np.float64)
    text = np.load(args.text_embeds).astype(np.float64)[0]
    v_run = x - np.load(args.output).astype(np.float64)
    t = np.full([x.shape[0]], args.timestep)
    mask = np.load(args.text_mask)[0] if args.text_mask else None
    if family == "cogvideox":
        # CogVideoX's transformer takes and returns [B, F, C, H, W].
        v_ref = reference.forward(weights, config, x.transpose(0, 2, 1, 3, 4), text, t)
        v_ref = v_ref.transpose(0, 2, 1, 3, 4)
    elif family == "hunyuan_video":
        # The runner's seeded pooled text of branch 0 and its guidance input.
        pooled = counter_normal(args.seed, "pooled0",
                                [x.shape[0], manifest["model"]["pooled_dim"]])
        guidance = args.guidance
        if guidance is None:
            guidance = 1000.0 * manifest["workload"]["guidance_scale"]
        v_ref = reference.forward(weights, config, x, text, t, pooled,
                                  np.full([x.shape[0]], guidance), mask)
    elif family == "mochi":
        v_ref = reference.forward(weights, config, x, text, t, mask)
    else:
        v_ref = reference.forward(weights, config, x, text, t)
    if v_ref.shape != v_run.shape:
        sys.exit(f"reference shape {v_ref.shape} differs from dit-run's {v_run.shape}")
    diff = np.abs(v_run - v_ref)
    rel = float(diff.max() / max(np.abs(v_ref).max(), 1e-30))
    verdict = "ok" if rel <= args.tolerance else "MISMATCH"
    print(f"{family}: max abs error {diff.max():.3e}, max relative error {rel:.3e} "
          f"over {v_ref.size} values: {verdict}")
    sys.exit(0 if verdict == "ok" else 1)


if __name__ == "__main__":
    main()
