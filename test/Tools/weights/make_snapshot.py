#!/usr/bin/env python3
"""Test helper for `ditc weights`: writes a tiny diffusers snapshot for the
model of a compiled one-rank plan, optionally with planted defects.

Standard library and NumPy only; the safetensors bytes are written here
(an 8-byte little-endian header length, a JSON header, then the raw
little-endian data of each tensor in name order). The tensors are the
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
import json
import os
import shutil
import struct

import numpy as np

# F64 is a valid safetensors dtype that dit-run cannot load.
SIZES = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8}


def encode(values, dtype):
    values = np.asarray(values, dtype=np.float32)
    if dtype == "F32":
        return values.astype("<f4").tobytes()
    if dtype == "F64":
        return values.astype("<f8").tobytes()
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    # bfloat16: the high 16 bits of the float32 pattern.
    return (values.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()


def write_safetensors(path, tensors):
    """tensors: {name: (shape, dtype)}; values are a ramp, so files differ."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        shape, dtype = tensors[name]
        count = int(np.prod(shape)) if shape else 1
        data = encode(np.linspace(-1, 1, count), dtype)
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def plan_parameters(plan):
    """{expert: {name: stored shape}} over every program of the plan."""
    manifest = json.load(open(os.path.join(plan, "manifest.json")))
    out = {}
    for entry in manifest["programs"]:
        program = json.load(open(os.path.join(plan, entry["file"])))
        params = out.setdefault(program.get("expert", "transformer"), {})
        functions = [program] + list(program.get("functions", {}).values())
        for fn in functions:
            for op in fn["ops"]:
                for p in op.get("params", []):
                    shape = p.get("checkpoint", {}).get("shape", p["shape"])
                    params[p["name"]] = list(shape)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plan")
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--dtype", default="F32", choices=sorted(SIZES))
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--reshape", action="append", default=[])
    ap.add_argument("--retype", action="append", default=[])
    ap.add_argument("--layout", default="transformer", choices=["pipeline", "transformer"])
    args = ap.parse_args()

    experts = plan_parameters(args.plan)
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
        tensors = {name: (shape, retype.get(name, args.dtype))
                   for name, shape in params.items() if name not in args.drop}
        for name in args.extra:
            tensors[name] = ([3], args.dtype)
        for name in args.reshape:
            shape, dtype = tensors[name]
            tensors[name] = (shape[:-1] + [shape[-1] + 1], dtype)
        names = sorted(tensors)
        if args.shards == 1:
            write_safetensors(os.path.join(folder, "diffusion_pytorch_model.safetensors"),
                              tensors)
            continue
        weight_map = {}
        for i in range(args.shards):
            part = names[i::args.shards]
            shard = f"diffusion_pytorch_model-{i + 1:05d}-of-{args.shards:05d}.safetensors"
            write_safetensors(os.path.join(folder, shard), {n: tensors[n] for n in part})
            weight_map.update({n: shard for n in part})
        json.dump({"metadata": {}, "weight_map": weight_map},
                  open(os.path.join(folder, "diffusion_pytorch_model.safetensors.index.json"), "w"))


if __name__ == "__main__":
    main()
