#!/usr/bin/env python3
"""Writes the inputs of a transformer-output check for a compiled plan:
OUT/x.npy, the initial noise [B, C, F, H, W] (dit-run's latent layout), and
OUT/t.npy, text embeddings (branches, B, L, E) with the same text in every
branch, so that one `dit-run --steps 1` gives x - v (docs/runtime.md).

Usage: make_inputs.py PLAN OUT [--seed S]
"""
import argparse
import json
import os

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    manifest = json.load(open(os.path.join(args.plan, "manifest.json")))
    model, work = manifest["model"], manifest["workload"]
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal([work["batch"], model["latent_channels"], work["latent_frames"],
                             work["latent_height"], work["latent_width"]])
    text = rng.standard_normal([1, work["batch"], work["text_tokens"], model["text_embed_dim"]])
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "x.npy"), x.astype(np.float32))
    np.save(os.path.join(args.out, "t.npy"),
            np.repeat(text, work["branches"], axis=0).astype(np.float32))


if __name__ == "__main__":
    main()
