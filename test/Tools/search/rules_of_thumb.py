#!/usr/bin/env python3
"""Seed 002's five rules of thumb, as they come out of the cost model on
8-GPU H100 nodes. Nothing in the model names a rule: each check below reads
only the predicted step times, their breakdown, and the axes whose groups
the chosen layout puts across nodes, and prints the numbers that decide it.

  1. CFG parallel first for true-CFG models.
  2. K/V-gather wins at a sequence degree of 2 (against ring and Ulysses).
  3. Ulysses before ring until the head limit.
  4. TP beyond 2 rarely helps image DiTs.
  5. Across nodes, the order dp > cfg > ring/kv_gather > ulysses > tp.

usage: rules_of_thumb.py DITC
"""
import json
import subprocess
import sys

ditc = sys.argv[1]
failures = 0
cache = {}


def search(model, gpus, *extra):
    key = (model, gpus, extra)
    if key not in cache:
        out = subprocess.run([ditc, "search", model, "--num-gpus", str(gpus),
                              "--hardware", "h100-sxm", "--top", "all",
                              "--format", "json", *extra],
                             check=True, capture_output=True, text=True).stdout
        cache[key] = json.loads(out)["configurations"]
    return cache[key]


def only(rows, **sizes):
    """The row whose degrees are `sizes` (every other axis 1)."""
    for row in rows:
        if all(row["degrees"][axis] == sizes.get(axis, 1) for axis in row["degrees"]):
            return row
    return None


def terms(row):
    """The breakdown that decides a comparison: compute and each axis."""
    b = row["breakdown_ms"]
    parts = [f"compute {b['compute']:.2f}"]
    parts += [f"{axis} {ms:.2f}" for axis, ms in sorted(b["communication"].items())]
    return ", ".join(parts)


def check(ok, message):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + message)


TRUE_CFG = ["wan2.1-t2v-14b", "qwen-image", "sd3.5-large", "cogvideox-5b",
            "ltx-video", "mochi-1-preview"]
IMAGE = ["flux.1-dev", "qwen-image", "sd3.5-large", "sd3-medium"]
VIDEO = ["wan2.1-t2v-14b", "hunyuanvideo", "cogvideox-5b", "ltx-video",
         "mochi-1-preview"]

# 1. CFG parallel first for true-CFG models: the best configuration on 2
# and on 8 GPUs splits the branches, and beats the best that does not.
print("# 1. CFG parallel first")
for model in TRUE_CFG:
    for gpus in (2, 8):
        rows = search(model, gpus)
        best = rows[0]
        other = next(r for r in rows if r["degrees"]["cfg"] == 1)
        check(best["degrees"]["cfg"] == 2,
              f"{model} on {gpus}: {best['flags']} {best['step_ms']:.2f} ms "
              f"({terms(best)}) < best without cfg {other['flags']} "
              f"{other['step_ms']:.2f} ms ({terms(other)})")

# 2. At a sequence degree of 2, K/V-gather beats ring and Ulysses: one
# all-gather of K and V that nothing hides, against ring's online-softmax
# merges, per-hop costs and shorter attention calls, and Ulysses' two
# all-to-alls of Q, K, V and the output.
print("# 2. K/V-gather wins at sp = 2")
for model in IMAGE + VIDEO:
    rows = search(model, 2)
    kv = only(rows, kv_gather=2)
    rivals = [r for r in (only(rows, ring=2), only(rows, ulysses=2)) if r]
    check(kv is not None and rivals and all(kv["step_ms"] < r["step_ms"] for r in rivals),
          f"{model} on 2: kv_gather {kv['step_ms']:.2f} ms ({terms(kv)}) < "
          + ", ".join(f"{r['flags'].split()[-2][2:]} {r['step_ms']:.2f} ms ({terms(r)})"
                      for r in rivals))

# 3. Ulysses before ring until the head limit: among the one-node
# configurations whose only axes are Ulysses and ring, with sp = 4 and 8
# GPUs, the more of sp is Ulysses the faster, up to the largest Ulysses
# degree the heads allow (the rest then goes to ring). Two predictions
# within 1% are a tie the model does not resolve (its factors are far less
# certain than that), and are printed as such.
print("# 3. Ulysses before ring until the head limit")
TIE = 0.01
for model in IMAGE + VIDEO:
    for sp in (4, 8):
        rows = search(model, sp)
        chain = sorted((r for r in rows
                        if r["degrees"]["ulysses"] * r["degrees"]["ring"] == sp),
                       key=lambda r: -r["degrees"]["ulysses"])
        if len(chain) < 2:
            continue
        ok = all(a["step_ms"] < b["step_ms"] * (1 + TIE) for a, b in zip(chain, chain[1:]))
        ties = sum(b["step_ms"] <= a["step_ms"] for a, b in zip(chain, chain[1:]))
        check(ok, f"{model} sp {sp}{' (a tie within 1%)' if ok and ties else ''}: " + " < ".join(
            f"ulysses {r['degrees']['ulysses']} x ring {r['degrees']['ring']} "
            f"{r['step_ms']:.2f} ms ({terms(r)})" for r in chain))

# 4. TP beyond 2 rarely helps image DiTs: for at most one of the image
# models is the best configuration with tp > 2 faster than the best with
# tp <= 2, and then by less than 5%.
print("# 4. TP beyond 2 rarely helps image DiTs")
wins = []
for model in IMAGE:
    rows = search(model, 8)
    wide = [r for r in rows if r["degrees"]["tp"] > 2]
    narrow = [r for r in rows if r["degrees"]["tp"] <= 2]
    if not wide:
        print(f"     {model} on 8: no legal tp > 2")
        continue
    w, n = wide[0], narrow[0]
    if w["step_ms"] < n["step_ms"]:
        wins.append((model, n["step_ms"] / w["step_ms"] - 1))
    print(f"     {model} on 8: best tp>2 {w['flags']} {w['step_ms']:.2f} ms ({terms(w)}); "
          f"best tp<=2 {n['flags']} {n['step_ms']:.2f} ms ({terms(n)})")
check(len(wins) <= 1 and all(gain < 0.05 for _, gain in wins),
      f"tp > 2 wins for {len(wins)} of {len(IMAGE)} image models"
      + "".join(f", {m} by {100 * g:.1f}%" for m, g in wins))

# 5. Across nodes: of the axes in a configuration, the layout the search
# picks puts across the two nodes the one earliest in dp > cfg >
# ring/kv_gather > ulysses > tp.
print("# 5. Across nodes")
ORDER = ["dp", "cfg", "ring", "kv_gather", "ulysses", "tp"]
cases = [("wan2.1-t2v-14b", dict(dp=2, cfg=2, ulysses=4)),
         ("wan2.1-t2v-14b", dict(cfg=2, ulysses=4, tp=2)),
         ("wan2.1-t2v-14b", dict(ring=2, ulysses=4, tp=2)),
         ("flux.1-dev", dict(kv_gather=2, ulysses=4, tp=2)),
         ("cogvideox-5b", dict(ulysses=2, tp=8)),
         ("qwen-image", dict(dp=2, cfg=2, ring=2, ulysses=2)),
         ("hunyuanvideo", dict(kv_gather=2, ulysses=8))]
for model, sizes in cases:
    row = only(search(model, 16, "--gpus-per-node", "8"), **sizes)
    first = min(sizes, key=ORDER.index)
    check(row is not None and row["cross_node_axes"] == [first],
          f"{model} {sizes} on 2 nodes: crosses {row and row['cross_node_axes']}, expected [{first}]")

sys.exit(1 if failures else 0)
