#!/usr/bin/env python3
"""Checks a Wan plan's per_step.flops against a hand count of the Wan
transformer (diffusers' WanTransformer3DModel) from the model's dimensions,
never from the plan's ops: GEMMs 2·M·N·K, attention 4·B·H·Lq·Lk·d, norms and
elementwise ops one FLOP per element, ring attention's online-softmax merge
3 per output element per merged block.

usage: check_flops.py PLAN_DIR one|tp2|ring2|ulysses2|cfg2
Prints "flops ok N" or "FAIL" with both numbers.
"""
import json
import sys

plan, mode = sys.argv[1:3]
m = json.load(open(plan + "/manifest.json"))
model, work = m["model"], m["workload"]
D, F, H, d = model["hidden_size"], model["ffn_size"], model["num_heads"], model["head_dim"]
E = model["text_embed_dim"]
blocks = model["double_blocks"] + model["single_blocks"]
freq = model["checkpoint_config"]["transformer"].get("freq_dim", 256)
S, T = work["image_tokens"], work["text_tokens"]
P = model["latent_channels"]
for p in model["patch"]:
    P *= p
assert H * d == D

tp = 2 if mode == "tp2" else 1
sp = 2 if mode in ("ring2", "ulysses2") else 1
s = S // sp          # image tokens this rank holds outside attention
Dl = D // tp         # width of a column-parallel output / row-parallel input
Fl = F // tp
Hl = H // tp


def call():
    """One transformer call on one rank."""
    f = 2 * s * D * P                      # patch embedding
    f += 2 * D * (freq + D)                # timestep embedding's two GEMMs
    f += 2 * T * E * Dl + T * Dl + 2 * T * Dl * D   # text embedder (column, act, row)
    f += D + 2 * D * 6 * D                 # SiLU and the time projection
    for _ in range(blocks):
        f += 6 * D                         # adaLN table add
        # self-attention
        f += s * D + s * D                 # norm1, modulate
        f += 3 * 2 * s * D * Dl            # q, k, v (column)
        f += 2 * s * Dl + 2 * s * Dl       # rms q, k; rope q, k
        if mode == "ulysses2":
            f += 4 * (H // 2) * S * S * d  # all tokens, half the heads
        elif mode == "ring2":
            f += 4 * Hl * s * S * d        # local queries see every key
            f += 3 * s * Dl * 1            # one merge (no text rows)
        else:
            f += 4 * Hl * s * S * d
        f += 2 * s * Dl * D + s * D        # out (row), gated residual
        # cross-attention on the text
        f += s * D                         # norm2
        f += 2 * s * D * Dl + s * Dl       # q, rms q
        f += 2 * 2 * T * D * Dl + T * Dl   # k, v, rms k
        f += 4 * Hl * s * T * d
        f += 2 * s * Dl * D + s * D        # out, residual
        # feed-forward
        f += s * D + s * D                 # norm3, modulate
        f += 2 * s * D * Fl + s * Fl + 2 * s * Fl * D + s * D
    f += 2 * D + s * D + s * D + 2 * s * D * P   # final table, norm, modulate, proj_out
    return f


calls = 1 if mode == "cfg2" else 2         # two guidance branches
expected = calls * call() + 2 * s * P      # cfg combine, scheduler step
got = [p["per_step"]["flops"] for p in m["programs"]]
if all(g == expected for g in got):
    print("flops ok", expected)
else:
    print("FAIL", mode, "plan", got, "hand", expected)
    sys.exit(1)
