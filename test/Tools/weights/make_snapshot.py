#!/usr/bin/env python3
"""Test helper for `ditc weights`: writes a tiny diffusers snapshot for the
model of a compiled one-rank plan, optionally with planted defects.

Standard library and NumPy only; the files are written by
test/lib/snapshot.py (one file, or shards of consecutive names and their
index). The tensors are the
params of the plan's programs (name and global shape, or the
"checkpoint": {"shape"} the plan gives for the stored layout), so a
snapshot this writes without defects is what the model needs.

Usage: make_snapshot.py PLAN MODEL_DIR OUT [--dtype F32|F16|BF16]
         [--shards N] [--drop NAME] [--extra NAME] [--reshape NAME]
         [--retype NAME=DTYPE] [--layout pipeline|transformer]

MODEL_DIR is the bundled model folder whose configs are copied (pipeline:
model_index.json, transformer*/config.json, vae/config.json; transformer:
transformer/config.json only). Each transformer folder gets its weights.
"""
import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "lib"))
import snapshot  # noqa: E402  (test/lib/snapshot.py: the safetensors writer)

# F64 is a valid safetensors dtype that dit-run cannot load.
DTYPES = ["BF16", "F16", "F32", "F64"]


def ramp(shape):
    """Values that differ from tensor to tensor; ditc weights reads only
    the headers."""
    count = int(np.prod(shape)) if shape else 1
    return np.linspace(-1, 1, count, dtype=np.float32).reshape(shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plan")
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--dtype", default="F32", choices=DTYPES)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--reshape", action="append", default=[])
    ap.add_argument("--retype", action="append", default=[])
    ap.add_argument("--layout", default="transformer", choices=["pipeline", "transformer"])
    args = ap.parse_args()

    _, experts = snapshot.parameters(args.plan)
    os.makedirs(args.out)
    if args.layout == "pipeline":
        for name in ("model_index.json",):
            shutil.copy(os.path.join(args.model_dir, name), args.out)
        os.makedirs(os.path.join(args.out, "vae"))
        shutil.copy(os.path.join(args.model_dir, "vae", "config.json"),
                    os.path.join(args.out, "vae"))
    retype = dict(item.split("=", 1) for item in args.retype)
    for expert, params in experts.items():
        folder = os.path.join(args.out, expert) if args.layout == "pipeline" else args.out
        os.makedirs(folder, exist_ok=True)
        shutil.copy(os.path.join(args.model_dir, expert, "config.json"), folder)
        tensors = {name: ramp(stored) for name, (_, stored) in params.items()
                   if name not in args.drop}
        for name in args.extra:
            tensors[name] = ramp([3])
        for name in args.reshape:
            shape = list(tensors[name].shape)
            tensors[name] = ramp(shape[:-1] + [shape[-1] + 1])
        snapshot.write_weights(folder, tensors, args.dtype, args.shards, retype)


if __name__ == "__main__":
    main()
