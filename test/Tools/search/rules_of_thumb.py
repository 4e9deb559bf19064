#!/usr/bin/env python3
"""Seed 002's rules of thumb, as they come out of the cost model on 8-GPU
H100 nodes (nothing in the model names a rule; each check below reads only
predicted step times and the axes whose groups the chosen layout puts
across nodes).

usage: rules_of_thumb.py DITC
"""
import json
import subprocess
import sys

ditc = sys.argv[1]
failures = 0


def search(model, gpus, *extra):
    out = subprocess.run([ditc, "search", model, "--num-gpus", str(gpus),
                          "--hardware", "h100-sxm", "--top", "all",
                          "--format", "json", *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["configurations"]


def only(rows, **sizes):
    """The row whose degrees are `sizes` (every other axis 1)."""
    for row in rows:
        if all(row["degrees"][axis] == sizes.get(axis, 1) for axis in row["degrees"]):
            return row
    return None


def check(ok, message):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + message)


TRUE_CFG = ["wan2.1-t2v-14b", "qwen-image", "sd3.5-large", "cogvideox-5b",
            "ltx-video", "mochi-1-preview"]
IMAGE = ["flux.1-dev", "qwen-image", "sd3.5-large", "sd3-medium"]

# CFG parallel first for true-CFG models: the best configuration on 8 GPUs
# and on 2 GPUs splits the branches.
for model in TRUE_CFG:
    for gpus in (2, 8):
        best = search(model, gpus)[0]
        check(best["degrees"]["cfg"] == 2,
              f"{model} on {gpus}: best {best['flags']} splits cfg")

# K/V-gather beats Ulysses at a sequence degree of 2 (same bytes moved, no
# Q/K/V packing, a cheaper collective).
for model in ["flux.1-dev", "hunyuanvideo", "wan2.1-t2v-14b"]:
    rows = search(model, 2)
    kv, ulysses = only(rows, kv_gather=2), only(rows, ulysses=2)
    check(kv["step_ms"] < ulysses["step_ms"],
          f"{model} on 2: kv_gather {kv['step_ms']:.2f} ms < ulysses {ulysses['step_ms']:.2f} ms")

# TP beyond 2 rarely helps image DiTs: the best configuration with tp > 2 is
# slower than the best with tp <= 2.
for model in IMAGE:
    rows = search(model, 8)
    wide = [r["step_ms"] for r in rows if r["degrees"]["tp"] > 2]
    narrow = [r["step_ms"] for r in rows if r["degrees"]["tp"] <= 2]
    if wide:
        check(min(wide) > min(narrow),
              f"{model} on 8: best tp>2 {min(wide):.2f} ms > best tp<=2 {min(narrow):.2f} ms")

# Across nodes: of the axes in a configuration, the layout the search picks
# puts across the two nodes the one earliest in dp > cfg > ring/kv_gather >
# ulysses > tp.
ORDER = ["dp", "cfg", "ring", "kv_gather", "ulysses", "tp"]
cases = [("wan2.1-t2v-14b", dict(dp=2, cfg=2, ulysses=4)),
         ("wan2.1-t2v-14b", dict(cfg=2, ulysses=4, tp=2)),
         ("wan2.1-t2v-14b", dict(ring=2, ulysses=4, tp=2)),
         ("flux.1-dev", dict(kv_gather=2, ulysses=4, tp=2)),
         ("cogvideox-5b", dict(ulysses=2, tp=8)),
         ("qwen-image", dict(dp=2, cfg=2, ring=2, ulysses=2))]
for model, sizes in cases:
    row = only(search(model, 16, "--gpus-per-node", "8"), **sizes)
    first = min(sizes, key=ORDER.index)
    check(row is not None and row["cross_node_axes"] == [first],
          f"{model} {sizes} on 2 nodes: crosses {row and row['cross_node_axes']}, expected [{first}]")

sys.exit(1 if failures else 0)
