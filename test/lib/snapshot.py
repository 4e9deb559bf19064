#!/usr/bin/env python3
"""Writes a tiny diffusers-layout snapshot for the model of a compiled plan.

Standard library and NumPy only. The plan says everything the snapshot
needs: every parameter name and global shape (the params of its programs),
the shape the checkpoint stores it in ("checkpoint": {"shape"}), the
model's class and config (manifest model.class_name and
model.checkpoint_config), and whether there is a second expert. Compile the
one-rank plan of the model, then:

  snapshot.py PLAN_DIR OUT_DIR [--dtype f32|f16|bf16] [--shards N]
              [--values seeded|random] [--seed S] [--layout pipeline|transformer]

  --values seeded  the parameters dit-run draws from --seed (docs/runtime.md,
                   "Inputs"), so a loaded run equals the seeded run (f32);
  --values random  NumPy normals of the same scales from --seed.
  --shards N       N shard files and diffusion_pytorch_model.safetensors.index.json
                   (default: one diffusion_pytorch_model.safetensors).
  --layout         a pipeline folder (model_index.json, transformer/,
                   transformer_2/) or the transformer folder alone.

The safetensors files follow huggingface/safetensors: an 8-byte
little-endian header length, a JSON header (space-padded to a multiple of
8), then the raw little-endian data, tensors in name order.

As a library: `parameters(plan_dir)` lists the tensors, `values(...)` draws
them, `write_safetensors(path, tensors, dtype)` writes one file and
`read_safetensors(path)` reads one back (as float64), and
`read_snapshot(snapshot, plan)` gives simulate_plan.simulate's weights.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Executable"))
import simulate_plan  # noqa: E402

WEIGHTS = "diffusion_pytorch_model.safetensors"
INDEX = "diffusion_pytorch_model.safetensors.index.json"
DTYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16"}


def parameters(plan_dir):
    """{expert: {name: (op shape, checkpoint shape)}} over every program."""
    manifest = json.load(open(os.path.join(plan_dir, "manifest.json")))
    out = {}
    for entry in manifest["programs"]:
        program = json.load(open(os.path.join(plan_dir, entry["file"])))
        expert = program.get("expert", "transformer")
        table = out.setdefault(expert, {})
        bodies = [program["ops"]] + [f["ops"] for f in program.get("functions", {}).values()]
        for ops in bodies:
            for op in ops:
                for spec in op.get("params", []):
                    stored = spec.get("checkpoint", {}).get("shape", spec["shape"])
                    table[spec["name"]] = (tuple(spec["shape"]), tuple(stored))
    return manifest, out


def values(expert, table, mode, seed):
    """{name: float32 array in the checkpoint shape}."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in sorted(table):
        shape, stored = table[name]
        if mode == "seeded":
            # dit-run's stream names: the second expert's carry its name.
            stream = name if expert == "transformer" else f"{expert}.{name}"
            full = simulate_plan.full_parameter(
                seed, {"name": stream, "shape": list(shape)}, {})
        else:
            scale = 0.5 / math.sqrt(shape[-1]) if len(shape) > 1 else 0.1
            base = 1.0 if name.endswith("weight") and len(shape) == 1 else 0.0
            full = base + scale * rng.standard_normal(shape)
        out[name] = full.astype(np.float32).reshape(stored)
    return out


def to_stored(array, dtype):
    """Little-endian bytes of a float32 array in dtype (bf16 rounds to
    nearest even, as torch does)."""
    array = np.ascontiguousarray(array, dtype="<f4")
    if dtype == "F32":
        return array.tobytes()
    if dtype == "F16":
        return array.astype("<f2").tobytes()
    if dtype == "F64":  # valid safetensors that dit-run refuses to load
        return array.astype("<f8").tobytes()
    bits = array.view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


def stored_values(array, dtype):
    """What a reader gets back from to_stored(array, dtype), as float32."""
    raw = to_stored(array, dtype)
    if dtype == "F32":
        return np.frombuffer(raw, "<f4").reshape(array.shape)
    if dtype == "F16":
        return np.frombuffer(raw, "<f2").astype(np.float32).reshape(array.shape)
    return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32).reshape(
        array.shape)


def write_safetensors(path, tensors, dtype, dtypes=None):
    """Writes `tensors` (name -> float32 array) in `dtype`, or in
    dtypes[name] where given; returns the data bytes."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        stored = (dtypes or {}).get(name, dtype)
        data = to_stored(tensors[name], stored)
        header[name] = {"dtype": stored, "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)
    return offset


def read_safetensors(path):
    """{name: float64 array} of one file (F32, F16, BF16)."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        chunk = data[begin:end]
        if entry["dtype"] == "F32":
            a = np.frombuffer(chunk, "<f4")
        elif entry["dtype"] == "F16":
            a = np.frombuffer(chunk, "<f2")
        else:
            a = (np.frombuffer(chunk, "<u2").astype(np.uint32) << 16).view(np.float32)
        out[name] = a.astype(np.float64).reshape(entry["shape"])
    return out


def write_transformer(folder, class_name, config, tensors, dtype, shards):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"_class_name": class_name, "_diffusers_version": "0.35.0", **config},
                  f, indent=2)
    write_weights(folder, tensors, dtype, shards)


def write_weights(folder, tensors, dtype, shards, dtypes=None):
    """A transformer folder's weights: one file, or `shards` files of
    consecutive names and their index."""
    if shards <= 1:
        write_safetensors(os.path.join(folder, WEIGHTS), tensors, dtype, dtypes)
        return
    names = sorted(tensors)
    per = -(-len(names) // shards)
    weight_map, total = {}, 0
    for i in range(shards):
        part = names[i * per:(i + 1) * per]
        file = f"diffusion_pytorch_model-{i + 1:05d}-of-{shards:05d}.safetensors"
        total += write_safetensors(os.path.join(folder, file),
                                   {n: tensors[n] for n in part}, dtype, dtypes)
        weight_map.update({n: file for n in part})
    with open(os.path.join(folder, INDEX), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f,
                  indent=2)


def write_snapshot(plan_dir, out, dtype="f32", shards=1, mode="random", seed=0,
                   layout="pipeline"):
    """Writes the snapshot; returns {expert: {name: float32 values as stored,
    in the plan's (op) shape}}, what a loader must produce."""
    manifest, table = parameters(plan_dir)
    model = manifest["model"]
    configs = model["checkpoint_config"]
    stored = DTYPES[dtype]
    if layout == "transformer" and len(table) > 1:
        sys.exit("snapshot.py: a two-expert model needs --layout pipeline")
    loaded = {}
    for expert in sorted(table):
        tensors = values(expert, table[expert], mode, seed)
        folder = out if layout == "transformer" else os.path.join(out, expert)
        write_transformer(folder, model["class_name"], configs[expert], tensors,
                          stored, shards)
        loaded[expert] = {n: stored_values(t, stored).reshape(table[expert][n][0])
                          for n, t in tensors.items()}
    if layout == "pipeline":
        index = {"_class_name": model["class_name"].replace("Transformer", "").replace(
            "Model", "") + "Pipeline", "_diffusers_version": "0.35.0"}
        for expert in sorted(table):
            index[expert] = ["diffusers", model["class_name"]]
        if "boundary_ratio" in model:
            index["boundary_ratio"] = model["boundary_ratio"]
        with open(os.path.join(out, "model_index.json"), "w") as f:
            json.dump(index, f, indent=2)
    return loaded


def read_transformer(folder):
    """{name: float64 array} of a transformer folder, one file or shards."""
    index = os.path.join(folder, INDEX)
    if not os.path.exists(index):
        return read_safetensors(os.path.join(folder, WEIGHTS))
    out = {}
    for file in sorted(set(json.load(open(index))["weight_map"].values())):
        out.update(read_safetensors(os.path.join(folder, file)))
    return out


def read_snapshot(snapshot_dir, plan_dir):
    """The snapshot's parameters as simulate_plan.simulate's `weights`, in
    the plan's (op) shapes."""
    _, table = parameters(plan_dir)
    pipeline = os.path.exists(os.path.join(snapshot_dir, "model_index.json"))
    loaded = {}
    for expert in table:
        stored = read_transformer(os.path.join(snapshot_dir, expert) if pipeline
                                  else snapshot_dir)
        loaded[expert] = {n: stored[n].reshape(table[expert][n][0]) for n in table[expert]}
    return stream_weights(loaded)


def stream_weights(loaded):
    """write_snapshot's result as simulate_plan.simulate's `weights`: float64
    full tensors by dit-run's stream names."""
    return {(n if expert == "transformer" else f"{expert}.{n}"): t.astype(np.float64)
            for expert, table in loaded.items() for n, t in table.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("plan")
    parser.add_argument("out")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument("--values", choices=["seeded", "random"], default="random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layout", choices=["pipeline", "transformer"],
                        default="pipeline")
    args = parser.parse_args()
    loaded = write_snapshot(args.plan, args.out, args.dtype, args.shards, args.values,
                            args.seed, args.layout)
    count = sum(len(t) for t in loaded.values())
    print(f"wrote {args.out}: {count} tensors ({args.dtype}, "
          f"{max(args.shards, 1)} file{'s' if args.shards > 1 else ''} per transformer)")


if __name__ == "__main__":
    main()
