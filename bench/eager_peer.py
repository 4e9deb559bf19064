#!/usr/bin/env python3
"""Executes a ditc plan with PyTorch eager ops and torch.distributed, one
process per rank: the eager PyTorch peer that `dit-run` is benchmarked
against. By default float32 on the CPU over gloo; `--device cuda --dtype
bfloat16` runs each rank on GPU LOCAL_RANK over NCCL, as dit-run's
`--backend nccl --dtype bfloat16` does.

It runs the same plan with the same semantics as the NumPy reference,
test/Executable/simulate_plan.py, but for real: every rank materializes only
its own parameter slices and noise block, collectives run on gloo subgroups,
and ring attention rotates the K/V blocks over the ring with an online
softmax. Ops are lowered once to Python closures with their parameters bound,
so the timed loop does no JSON walking.

Usage:
  eager_peer.py PLAN_DIR --steps K --seed S --output OUT.npy [--warmup W] [--nproc N]
                [--device cpu|cuda] [--dtype float32|bfloat16] [--attention matmul|sdpa]

Launch it under torchrun (`python3 -m torch.distributed.run --nproc_per_node N`;
with Debian's torch 1.13 on Python 3.11 add `--redirects 2 --tee 2`, which
works around a Std flag parsing bug), with RANK/WORLD_SIZE/MASTER_ADDR/
MASTER_PORT set, or alone: without RANK in the environment it starts
N processes itself (N = --nproc, by default the plan's rank count).

The lowest rank that runs a program (rank 0 in practice) prints one JSON line,
{"ranks", "steps", "step_ms", "mean_step_ms", "comm_ms_per_step", "comm_share"},
and writes the final latents, float32, in latent layout [B, C, F, H, W].
With bfloat16, parameters and activations are bfloat16 and each step's
latents are float32 between steps, as in dit-run. `--attention sdpa` takes
torch's fused scaled_dot_product_attention (torch 2) instead of the
matmul-softmax-matmul that dit-run and the reference run: a yardstick for
what a fused kernel buys, not the same computation order.
step_ms[i] is the slowest rank's wall time of timed step i (each step starts
after a barrier); comm_ms_per_step is the time spent inside collective calls
(including waits on sends and ring shifts), averaged over ranks and steps.
"""
import argparse
import hashlib
import json
import math
import os
import socket
import subprocess
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

# Where and in what type this process computes: set once by run_rank from
# --device and --dtype, read by every place that makes a tensor.
RUN = {"device": torch.device("cpu"), "dtype": torch.float32, "sdpa": False}


def on_device(t, dtype=None):
    """`t` moved to the run's device, in `dtype` (default: the compute type)."""
    return t.to(device=RUN["device"], dtype=dtype or RUN["dtype"])

# ------------------------------------------------------------------ inputs
#
# The counter-based generator (bench/ditc_plan/counter.py; runtime/lib/IO/
# Initializer.cpp): element i of tensor `name` is a Box-Muller normal of the
# counters 2i and 2i+1, so any slice can be drawn from its flat indices alone.

# The generator and the op table are the package the NumPy reference uses
# too (bench/ditc_plan), so the peer cannot drift from it.
from ditc_plan import check_op, normals_at  # noqa: E402


def flat_indices(shape, index_lists):
    """Row-major flat indices into `shape` of the outer product of per-dim
    index lists (the slice they select)."""
    flat = np.zeros((), dtype=np.uint64)
    for size, index in zip(shape, index_lists):
        flat = flat[..., None] * np.uint64(size) + np.asarray(index, dtype=np.uint64)
    return flat


def local_parameter(seed, spec, tp_size, tp_index):
    """This rank's slice of a parameter: every `split` segment contributes its
    tp_index-th chunk along `dim`, concatenated in order."""
    name, shape = spec["name"], spec["shape"]
    index = [np.arange(n) for n in shape]
    split = spec.get("split")
    if split:
        pieces, start = [], 0
        for width in split["segments"]:
            chunk = width // tp_size
            pieces.append(np.arange(start + tp_index * chunk, start + (tp_index + 1) * chunk))
            start += width
        index[split["dim"]] = np.concatenate(pieces)
    if spec.get("only_on_axis_coordinate_0") and tp_index != 0:
        return on_device(torch.zeros([len(i) for i in index]))
    scale = 0.5 / math.sqrt(shape[-1]) if len(shape) > 1 else 0.1
    base = 1.0 if name.endswith("weight") and len(shape) == 1 else 0.0
    values = base + scale * normals_at(seed, name, flat_indices(shape, index))
    return on_device(torch.from_numpy(values))


def noise_block(seed, manifest, block, blocks):
    """Patch tokens [B, S/blocks, pt*ph*pw*C] of block `block` of the noise,
    drawn in latent layout [B, C, F, H, W]: tokens (f, h, w), features
    (pt, ph, pw, C), or (C, pt, ph, pw) by latents.feature_order."""
    model, work = manifest["model"], manifest["workload"]
    pt, ph, pw = model["patch"]
    c = model["latent_channels"]
    b, f, h, w = work["batch"], work["latent_frames"], work["latent_height"], work["latent_width"]
    tokens = (f // pt) * (h // ph) * (w // pw)
    per = tokens // blocks
    token = np.arange(block * per, (block + 1) * per)
    tf, th, tw = np.unravel_index(token, (f // pt, h // ph, w // pw))
    if manifest["latents"].get("feature_order", "channels_last") == "channels_first":
        kc, kf, kh, kw = np.unravel_index(np.arange(pt * ph * pw * c), (c, pt, ph, pw))
    else:
        kf, kh, kw, kc = np.unravel_index(np.arange(pt * ph * pw * c), (pt, ph, pw, c))
    bi = np.arange(b)[:, None, None]
    fi = (tf * pt)[None, :, None] + kf[None, None, :]
    hi = (th * ph)[None, :, None] + kh[None, None, :]
    wi = (tw * pw)[None, :, None] + kw[None, None, :]
    ci = kc[None, None, :]
    flat = (((bi * c + ci) * f + fi) * h + hi) * w + wi
    return on_device(torch.from_numpy(normals_at(seed, "noise", flat)), torch.float32)


def unpatchify(tokens, manifest):
    """[B, S, pt*ph*pw*C] -> [B, C, F, H, W]."""
    model, work = manifest["model"], manifest["workload"]
    pt, ph, pw = model["patch"]
    c = model["latent_channels"]
    b, f, h, w = work["batch"], work["latent_frames"], work["latent_height"], work["latent_width"]
    if manifest["latents"].get("feature_order", "channels_last") == "channels_first":
        x = tokens.reshape(b, f // pt, h // ph, w // pw, c, pt, ph, pw)
        return x.permute(0, 4, 1, 5, 2, 6, 3, 7).reshape(b, c, f, h, w)
    x = tokens.reshape(b, f // pt, h // ph, w // pw, pt, ph, pw, c)
    return x.permute(0, 7, 1, 4, 2, 5, 3, 6).reshape(b, c, f, h, w)


# ------------------------------------------------------------------ mesh


class Mesh:
    def __init__(self, manifest):
        self.order = [a["name"] for a in manifest["mesh"]["axes"]]
        self.size = {a["name"]: a["size"] for a in manifest["mesh"]["axes"]}
        self.entries = manifest["ranks"]
        self.active = [e["rank"] for e in self.entries if e["program"]]

    def canonical(self, axes):
        return tuple(a for a in self.order if a in axes)

    def members(self, rank, axes):
        """Active ranks differing from `rank` only on `axes`, row-major over
        their coordinates on `axes` in mesh order."""
        mine = self.entries[rank]["coords"]
        out = []
        for entry in self.entries:
            if not entry["program"]:
                continue
            c = entry["coords"]
            if all(c[k] == mine[k] for k in c if k not in axes):
                out.append((tuple(c[a] for a in self.order if a in axes), entry["rank"]))
        return [r for _, r in sorted(out)]


def program_ops(program):
    yield from program["ops"]
    for fn in program.get("functions", {}).values():
        yield from fn["ops"]


def axis_sets(program):
    """Every axis tuple a program communicates over."""
    out = set()
    for op in program_ops(program):
        a = op.get("attrs", {})
        if op["op"].startswith("shard.") and op["op"] != "shard.all_slice":
            out.add(tuple(a["axes"]))
        if "dit.reduce_stats_over" in a:
            out.add(tuple(a["dit.reduce_stats_over"]))
        if op["op"] == "dit.attention" and "dit.ring_axis" in a:
            out.add((a["ring_axis_name"],))
    return out


# ------------------------------------------------------------------ comm


class Group:
    """One communication group as this rank sees it: the members in plan
    order, the gloo subgroup (None when alone) and, for each member, its rank
    within the subgroup (torch orders subgroups by ascending global rank)."""

    def __init__(self, members, pg, rank):
        self.members = members
        self.pg = pg
        self.index = members.index(rank)
        self.size = len(members)
        self.slot = [dist.get_group_rank(pg, m) for m in members] if pg else [0]


class Comm:
    """Collectives on plan groups, timed: `seconds` accumulates the wall time
    spent inside them. Sends are asynchronous (a plan's sends never wait for
    their receive, as in the reference); flush() waits for them."""

    def __init__(self, mesh, rank, all_axis_sets):
        self.rank = rank
        self.groups = {}
        self.seconds = 0.0
        self.pending = []
        # new_group is collective over the world: every rank creates every
        # group, in the same order, and keeps those it belongs to.
        for axes in sorted({mesh.canonical(a) for a in all_axis_sets}):
            partition = []
            for r in mesh.active:
                m = mesh.members(r, axes)
                if m not in partition:
                    partition.append(m)
            for m in partition:
                pg = dist.new_group(m) if len(m) > 1 else None
                if rank in m:
                    self.groups[axes] = Group(m, pg, rank)
        self.mesh = mesh

    def group(self, axes):
        return self.groups[self.mesh.canonical(axes)]

    def _timed(self, start):
        self.seconds += time.perf_counter() - start

    def all_reduce(self, x, g):
        if g.pg is None:
            return x
        start = time.perf_counter()
        y = x.clone(memory_format=torch.contiguous_format)  # x may still be live
        dist.all_reduce(y, group=g.pg)
        self._timed(start)
        return y

    def all_gather(self, x, g, axis):
        if g.pg is None:
            return x
        start = time.perf_counter()
        x = x.contiguous()
        parts = [torch.empty_like(x) for _ in range(g.size)]
        dist.all_gather(parts, x, group=g.pg)
        y = torch.cat([parts[s] for s in g.slot], dim=axis)
        self._timed(start)
        return y

    def all_to_all(self, x, g, split_axis, concat_axis):
        if g.pg is None:
            return x
        start = time.perf_counter()
        if x.shape[split_axis] % g.size:
            raise SystemExit(f"eager_peer: all_to_all of {list(x.shape)} over {g.size}")
        chunks = x.chunk(g.size, dim=split_axis)
        # gloo only has all_to_all_single: equal dim-0 slices, slice p to
        # subgroup rank p. Stack the chunks in subgroup order (one copy).
        to_slot = [0] * g.size
        for j, s in enumerate(g.slot):
            to_slot[s] = j
        send = torch.stack([chunks[to_slot[s]] for s in range(g.size)])
        recv = torch.empty_like(send)
        dist.all_to_all_single(recv, send, group=g.pg)
        y = torch.cat([recv[g.slot[j]] for j in range(g.size)], dim=concat_axis)
        self._timed(start)
        return y

    def send(self, x, g, index):
        start = time.perf_counter()
        x = x.contiguous()
        self.pending.append((dist.isend(x, g.members[index], group=g.pg), x))
        self._timed(start)
        return x

    def recv(self, shape, g, index):
        start = time.perf_counter()
        y = on_device(torch.zeros(shape))
        dist.recv(y, g.members[index], group=g.pg)
        self._timed(start)
        return y

    def shift_start(self, tensors, g):
        """Starts sending `tensors` to the next ring member and receiving as
        many from the previous one; returns (works, received buffers)."""
        start = time.perf_counter()
        nxt = g.members[(g.index + 1) % g.size]
        prev = g.members[(g.index - 1) % g.size]
        works, bufs = [], []
        for tag, t in enumerate(tensors):
            works.append(dist.isend(t, nxt, group=g.pg, tag=tag))
        for tag, t in enumerate(tensors):
            bufs.append(torch.empty_like(t))
            works.append(dist.irecv(bufs[-1], prev, group=g.pg, tag=tag))
        self._timed(start)
        return works, bufs

    def wait(self, works):
        start = time.perf_counter()
        for w in works:
            w.wait()
        self._timed(start)

    def flush(self):
        self.wait([w for w, _ in self.pending])
        self.pending = []


# ------------------------------------------------------------------ math


def split_streams(x, text, pos):
    if pos == "prefix":
        return x[:, :text], x[:, text:]
    return x[:, x.shape[1] - text:], x[:, :x.shape[1] - text]


def concat_streams(t, i, pos):
    return torch.cat([t, i] if pos == "prefix" else [i, t], dim=1)


def heads_view(x, heads):
    """[B, S, H*D] -> [B, H, S, D] (a view)."""
    b, s, width = x.shape
    return x.reshape(b, s, heads, width // heads).transpose(1, 2)


def merge_heads(x):
    b, h, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, h * d)


def attention(q, k, v, heads):
    if RUN["sdpa"]:
        return merge_heads(F.scaled_dot_product_attention(
            heads_view(q, heads), heads_view(k, heads), heads_view(v, heads)))
    d = q.shape[-1] // heads
    qh = heads_view(q, heads) * (1.0 / math.sqrt(d))
    p = torch.softmax(torch.matmul(qh, heads_view(k, heads).transpose(-1, -2)), dim=-1)
    return merge_heads(torch.matmul(p, heads_view(v, heads)))


def softmax_merge(state, qh, k, v, heads):
    """One block of the online softmax: state is (running max, running sum,
    unnormalized output) over the blocks seen so far, or None."""
    scores = torch.matmul(qh, heads_view(k, heads).transpose(-1, -2))
    block_max = scores.amax(dim=-1, keepdim=True)
    if state is None:
        p = torch.exp(scores - block_max)
        return block_max, p.sum(dim=-1, keepdim=True), torch.matmul(p, heads_view(v, heads))
    run_max, run_sum, acc = state
    new_max = torch.maximum(run_max, block_max)
    decay = torch.exp(run_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, run_sum * decay + p.sum(dim=-1, keepdim=True),
            acc * decay + torch.matmul(p, heads_view(v, heads)))


def rope_tables(a, tokens, block):
    """cos and sin [tokens, D/2] for the rotated feature pairs of a rope op;
    pairs past the axes' dims are left alone (cos 1, sin 0). Angles are
    computed in float64 and rounded once."""
    text, pos = a["text_tokens"], a["text_position"]
    image = tokens - text
    first = block * image if a.get("sequence_shards", 1) > 1 else 0
    coords = np.stack(np.unravel_index(np.arange(first, first + image), a["grid"]), 1)
    texts = np.zeros((text, 3), dtype=coords.dtype)
    if a.get("centered"):
        # Qwen-Image: rows and columns centred, text after the image.
        _, gh, gw = a["grid"]
        coords = coords - np.array([0, gh - gh // 2, gw - gw // 2])
        texts = np.repeat((max(gh // 2, gw // 2) + np.arange(text))[:, None], 3, axis=1)
    coords = np.concatenate([texts, coords] if pos == "prefix" else [coords, texts])
    angles = []
    for axis, dim in enumerate(a["axes_dims"]):
        if dim % 2:
            raise SystemExit(f"eager_peer: rope axis dim {dim} is odd")
        freqs = a["theta"] ** (-np.arange(dim // 2) * 2.0 / dim)
        angles.append(coords[:, axis][:, None] * freqs[None, :])
    return np.concatenate(angles, axis=1)


def rope(x, cos, sin, heads):
    b, s, width = x.shape
    pairs = x.reshape(b, s, heads, width // heads // 2, 2)
    even, odd = pairs[..., 0], pairs[..., 1]
    out = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return out.reshape(b, s, width)


ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}


# ------------------------------------------------------------------ lowering


class Function:
    """A plan function lowered to closures: each step is (run, ins, outs,
    between_steps); values are slots in a list, freed after their last use."""

    def __init__(self, values, args, results, steps):
        self.size = len(values)
        self.args, self.results, self.steps = args, results, steps
        keep = set(results)
        last = {}
        for i, (_, ins, _, _) in enumerate(steps):
            for v in ins:
                last[v] = i
        self.dead = [[v for v in set(ins) if last[v] == i and v not in keep]
                     for i, (_, ins, _, _) in enumerate(steps)]

    def __call__(self, args, last_step):
        vals = [None] * self.size
        for vid, v in zip(self.args, args):
            vals[vid] = v
        for (run, ins, outs, between), dead in zip(self.steps, self.dead):
            xs = [vals[i] for i in ins]
            ys = xs[:1] if between and last_step else run(xs, last_step)
            for vid in dead:
                vals[vid] = None
            for vid, y in zip(outs, ys):
                vals[vid] = y
        return [vals[i] for i in self.results]


class RankProgram:
    """One program (one role, one expert) lowered for this rank."""

    def __init__(self, program, mesh, rank, seed, comm, block):
        self.program, self.mesh, self.rank, self.seed, self.comm = program, mesh, rank, seed, comm
        self.latent_block = block  # this rank's token block: rope positions
        self.coords = mesh.entries[rank]["coords"]
        self.tp_size, self.tp_index = mesh.size["tp"], self.coords["tp"]
        self.param_cache = {}
        self.functions = {}
        self.main = self.lower(program, program["ops"],
                               [i["value"] for i in program["inputs"]], program["outputs"])

    def param(self, spec):
        key = (spec["name"], json.dumps(spec.get("split"), sort_keys=True),
               bool(spec.get("only_on_axis_coordinate_0")))
        if key not in self.param_cache:
            self.param_cache[key] = local_parameter(self.seed, spec, self.tp_size, self.tp_index)
        return self.param_cache[key]

    def function(self, name):
        if name not in self.functions:
            fn = self.program["functions"][name]
            self.functions[name] = self.lower(fn, fn["ops"], fn["args"], fn["results"])
        return self.functions[name]

    def lower(self, fn, ops, args, results):
        shapes = [v["shape"] for v in fn["values"]]
        steps = []
        for op in ops:
            run = self.lower_op(op, shapes)
            between = bool(op.get("attrs", {}).get("dit.between_steps"))
            steps.append((run, op["in"], op["out"], between))
        return Function(fn["values"], args, results, steps)

    def lower_op(self, op, shapes):
        """A closure (inputs, last_step) -> outputs for one op."""
        name, a = op["op"], op.get("attrs", {})
        check_op(name, "eager_peer")
        params = [self.param(p) for p in op.get("params", [])]
        comm = self.comm

        if name == "call":
            callee = self.function(op["callee"])
            return lambda xs, last: callee(xs, last)

        if name == "dit.timestep_embedding":
            w1, b1, w2, b2 = params
            half = a["freq_dim"] // 2
            freqs = on_device(torch.exp(-math.log(10000.0) *
                                        torch.arange(half, dtype=torch.float64) / half),
                              torch.float64)
            freqs = freqs * a.get("scale", 1.0)  # FLUX's guidance: 1000 x g

            def run(xs, _):
                # float64 for the angles: t reaches 1000, where float32
                # rounding of t * freq costs tens of microradians; the tensor
                # is only [B, freq_dim], so the precision is free.
                args = xs[0].double()[:, None] * freqs[None, :]
                emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1).to(w1.dtype)
                return [F.linear(F.silu(F.linear(emb, w1, b1)), w2, b2)]
            return run

        if name == "dit.patch_embed" and \
                op.get("attrs", {}).get("features", "channels_last") == "channels_last":
            # (pt, ph, pw, C) tokens to the weight's (C, pt, ph, pw) columns.
            volume = math.prod(op["attrs"]["patch"])
            weight, bias = params[0], params[1]
            return lambda xs, _: [F.linear(
                xs[0].reshape(*xs[0].shape[:-1], volume, -1).transpose(-1, -2)
                .reshape(xs[0].shape), weight, bias)]
        if name in ("dit.patch_embed", "dit.linear"):
            weight = params[0]
            bias = params[1] if len(params) > 1 else None
            if bias is not None and op["params"][1].get("only_on_axis_coordinate_0") \
                    and self.tp_index != 0:
                bias = None  # row-parallel bias: zero off tp coordinate 0
            if "pos_embed_max_size" in a:
                # SD3: the centred crop of the position table, this block's rows.
                side, (_, h, w) = a["pos_embed_max_size"], a["grid"]
                tokens = shapes[op["in"][0]][1]
                first = self.latent_block * tokens if a.get("sequence_shards", 1) > 1 else 0
                token = torch.arange(first, first + tokens)
                rows = ((side - h) // 2 + token // w) * side + (side - w) // 2 + token % w
                table = params[2][0, rows]
                return lambda xs, _: [F.linear(xs[0], weight, bias) + table]
            return lambda xs, _: [F.linear(xs[0], weight, bias)]

        if name == "dit.adaln_modulation":
            if a.get("table"):
                table = params[0]
                return lambda xs, _: [xs[0].reshape(xs[0].shape[0], -1, table.shape[-1]) + table]
            weight, bias = params
            chunks = a["num_chunks"]
            return lambda xs, _: [F.linear(F.silu(xs[0]), weight, bias)
                                  .reshape(xs[0].shape[0], chunks, -1)]

        if name == "dit.modulate":
            scale, shift = a["scale"], a.get("shift")

            def run(xs, _):
                x, mod = xs
                out = x * (1 + mod[:, scale].unsqueeze(1))
                return [out + mod[:, shift].unsqueeze(1) if shift is not None else out]
            return run

        if name == "dit.residual_add":
            gate = a.get("gate_chunk")
            if len(op["in"]) == 3:
                return lambda xs, _: [xs[0] + xs[2][:, gate].unsqueeze(1) * xs[1]]
            return lambda xs, _: [xs[0] + xs[1]]

        if name == "dit.rope":
            if a.get("style", "axes") != "axes":
                # The benchmark runs bench-wan; LTX-Video's whole-width table
                # (simulate_plan.rope) is left to dit-run and the references.
                raise SystemExit(f"eager_peer: rope style {a['style']} is not implemented; "
                                 "it runs axes-style ropes only")
            tokens = shapes[op["in"][0]][1]
            angle = rope_tables(a, tokens, self.latent_block)
            cos = on_device(torch.from_numpy(np.cos(angle)))[None, :, None, :]
            sin = on_device(torch.from_numpy(np.sin(angle)))[None, :, None, :]
            heads = a["num_heads"]
            width = shapes[op["in"][0]][2]
            pairs = width // heads // 2
            if cos.shape[-1] > pairs:
                raise SystemExit("eager_peer: rope axes dims exceed the head dim")
            if cos.shape[-1] < pairs:  # unrotated tail of each head
                pad = pairs - cos.shape[-1]
                cos = torch.cat([cos, on_device(torch.ones(*cos.shape[:-1], pad))], dim=-1)
                sin = torch.cat([sin, on_device(torch.zeros(*sin.shape[:-1], pad))], dim=-1)
            return lambda xs, _: [rope(xs[0], cos, sin, heads)]

        if name == "dit.attention" and "dit.ring_axis" in a:
            return self.lower_ring_attention(a)

        if name == "dit.attention":
            heads = a["num_heads"]
            if len(op["in"]) == 1:
                return lambda xs, _: [attention(*xs[0].chunk(3, dim=-1), heads)]
            return lambda xs, _: [attention(xs[0], xs[1], xs[2], heads)]

        if name == "dit.activation":
            kind = a["kind"]
            if kind in ("swiglu", "geglu"):
                gate_fn = F.silu if kind == "swiglu" else F.gelu

                def run(xs, _):
                    h1, h2 = xs[0].chunk(2, dim=-1)
                    return [h1 * gate_fn(h2)]
                return run
            fn = ACTIVATIONS[kind]
            return lambda xs, _: [fn(xs[0])]

        if name in ("dit.layer_norm", "dit.rms_norm"):
            return self.lower_norm(op, a, params, shapes)

        if name == "dit.concat_streams":
            pos = a["text_position"]
            return lambda xs, _: [concat_streams(xs[0], xs[1], pos)]

        if name == "dit.split_streams":
            text, pos = shapes[op["out"][0]][1], a["text_position"]
            return lambda xs, _: list(split_streams(xs[0], text, pos))

        if name == "tensor.concat":
            dim = a["dim"]
            return lambda xs, _: [torch.cat(xs, dim=dim)]

        if name == "tensor.empty":
            empty = on_device(torch.zeros(shapes[op["out"][0]]))  # never written in place
            return lambda xs, _: [empty]

        if name == "dit.stack":
            axis = a["axis"]
            return lambda xs, _: [torch.stack(xs, dim=axis)]

        if name == "dit.unstack":
            axis = a["axis"]
            return lambda xs, _: list(torch.unbind(xs[0], dim=axis))

        if name == "dit.split":
            axis, parts = a["axis"], a["parts"]
            return lambda xs, _: list(torch.chunk(xs[0], parts, dim=axis))

        if name == "dit.cfg_combine":
            scales = a["guidance_scales"]

            def run(xs, _):
                uncond = xs[-1]
                out = uncond
                for scale, cond in zip(scales, xs[:-1]):
                    out = out + scale * (cond - uncond)
                return [out]
            return run

        if name == "dit.scheduler_step":
            return lambda xs, _: [xs[0] + (xs[3] - xs[2]) * xs[1]]

        if name == "shard.all_slice":
            # No traffic, so no process group: just this rank's place.
            members = self.mesh.members(self.rank, a["axes"])
            n, index, axis = len(members), members.index(self.rank), a["slice_axis"]
            return lambda xs, _: [xs[0].chunk(n, dim=axis)[index]]

        if name == "shard.all_reduce":
            g = comm.group(a["axes"])
            return lambda xs, _: [comm.all_reduce(xs[0], g)]

        if name == "shard.all_gather":
            g = comm.group(a["axes"])
            axis = a["gather_axis"]
            return lambda xs, _: [comm.all_gather(xs[0], g, axis)]

        if name == "shard.all_to_all":
            g = comm.group(a["axes"])
            split, concat = a["split_axis"], a["concat_axis"]
            return lambda xs, _: [comm.all_to_all(xs[0], g, split, concat)]

        if name == "shard.send":
            g = comm.group(a["axes"])
            dest = a["destination"][0]
            return lambda xs, _: [comm.send(xs[0], g, dest)]

        if name == "shard.recv":
            g = comm.group(a["axes"])
            src = a["source"][0]
            shape = shapes[op["out"][0]]
            return lambda xs, _: [comm.recv(shape, g, src)]

        raise SystemExit(f"eager_peer: no semantics for {name}")

    def lower_norm(self, op, a, params, shapes):
        width = shapes[op["in"][0]][-1]
        group = a.get("group_size", width)
        eps = a["eps"]
        layer = op["op"] == "dit.layer_norm"
        reduce_axes = a.get("dit.reduce_stats_over")
        weight = params[0] if a["affine"] else None
        bias = params[1] if a["affine"] and layer else None

        def affine(y, shape):
            # weight/bias are [width] (possibly this rank's tp slice) or [group]
            if weight is None:
                return y.reshape(shape)
            if weight.numel() == shape[-1]:
                y = y.reshape(shape) * weight
                return y + bias if bias is not None else y
            y = y * weight
            return (y + bias if bias is not None else y).reshape(shape)

        if reduce_axes:
            # The feature dim is split over tp: the sums (and the sum of
            # squares) are completed by one all-reduce before normalizing.
            g = self.comm.group(reduce_axes)
            count = group * math.prod(self.mesh.size[x] for x in reduce_axes)
            comm = self.comm

            def run(xs, _):
                x = xs[0]
                xg = x.reshape(*x.shape[:-1], x.shape[-1] // group, group)
                s2 = (xg * xg).sum(-1, keepdim=True)
                if layer:
                    stats = comm.all_reduce(torch.cat([xg.sum(-1, keepdim=True), s2], -1), g)
                    mean, s2 = stats[..., :1] / count, stats[..., 1:]
                    y = (xg - mean) * torch.rsqrt(s2 / count - mean * mean + eps)
                else:
                    s2 = comm.all_reduce(s2, g)
                    y = xg * torch.rsqrt(s2 / count + eps)
                return [affine(y, x.shape)]
            return run

        def run(xs, _):
            x = xs[0]
            xg = x.reshape(*x.shape[:-1], x.shape[-1] // group, group)
            if layer:
                y = F.layer_norm(xg, (group,), eps=eps)
            else:
                y = xg * torch.rsqrt(xg.pow(2).mean(-1, keepdim=True) + eps)
            return [affine(y, x.shape)]
        return run

    def lower_ring_attention(self, a):
        """K/V image blocks travel around the ring group (send to the next
        member, receive from the previous) for R - 1 hops, overlapped with the
        block in hand; each block is merged into an online softmax. The
        replicated text rows are attended once, locally."""
        heads = a["num_heads"]
        text, pos = a.get("text_tokens", 0), a.get("text_position", "prefix")
        g = self.comm.group([a["ring_axis_name"]])
        comm = self.comm

        def run(xs, _):
            q, k, v = xs
            d = q.shape[-1] // heads
            qh = heads_view(q, heads) * (1.0 / math.sqrt(d))
            state = None
            if text:
                kt, ki = split_streams(k, text, pos)
                vt, vi = split_streams(v, text, pos)
                state = softmax_merge(state, qh, kt, vt, heads)
            else:
                ki, vi = k, v
            block = (ki.contiguous(), vi.contiguous())
            for hop in range(g.size):
                if hop < g.size - 1:
                    works, incoming = comm.shift_start(block, g)
                state = softmax_merge(state, qh, block[0], block[1], heads)
                if hop < g.size - 1:
                    comm.wait(works)
                    block = tuple(incoming)
            _, run_sum, acc = state
            return [merge_heads(acc / run_sum)]
        return run

    def __call__(self, inputs, last_step):
        return self.main(inputs, last_step)


# ------------------------------------------------------------------ rank


class Peer:
    def __init__(self, plan_dir, rank, world, seed):
        self.plan_dir, self.rank, self.seed = plan_dir, rank, seed
        with open(os.path.join(plan_dir, "manifest.json")) as f:
            self.manifest = m = json.load(f)
        if len(m["ranks"]) != world:
            raise SystemExit(f"eager_peer: the plan has {len(m['ranks'])} ranks, "
                             f"WORLD_SIZE is {world}")
        self.mesh = Mesh(m)
        self.files = {p["id"]: os.path.join(plan_dir, p["file"]) for p in m["programs"]}
        self.entry = m["ranks"][rank]

        # Groups: every rank needs every axis tuple of every program, so it
        # scans them all; it lowers only its own.
        sets = set()
        for path in self.files.values():
            with open(path) as f:
                sets |= axis_sets(json.load(f))
        self.comm = Comm(self.mesh, rank, sets)
        active = self.mesh.active
        self.active_group = None if len(active) == world else dist.new_group(active)
        self.reporter = min(active)

        self.programs = []
        if self.entry["program"]:
            for key in ("program", "program_2"):
                if self.entry.get(key):
                    with open(self.files[self.entry[key]]) as f:
                        program = json.load(f)
                    self.programs.append(RankProgram(program, self.mesh, rank, seed,
                                                     self.comm, self.block()))
            self.boundary = m["model"].get("boundary_ratio", 0.875) * 1000.0
            self.make_inputs()

    def block(self):
        index = 0
        for name in self.manifest["latents"]["split_over"]:
            index = index * self.mesh.size[name] + self.entry["coords"][name]
        return index

    def blocks(self):
        return math.prod(self.mesh.size[a] for a in self.manifest["latents"]["split_over"])

    def make_inputs(self):
        m, seed = self.manifest, self.seed
        work, model = m["workload"], m["model"]
        b = work["batch"]
        self.noise = noise_block(seed, m, self.block(), self.blocks())
        full = lambda name, shape: on_device(torch.from_numpy(
            normals_at(seed, name, np.arange(math.prod(shape)).reshape(shape))))
        self.text = {br: full(f"text{br}", [b, work["text_tokens"], model["text_embed_dim"]])
                     for br in range(work["branches"])}
        self.pooled = {br: full(f"pooled{br}", [b, model["pooled_dim"]])
                       for br in range(work["branches"])} if model.get("pooled_dim") else {}
        self.guidance = on_device(torch.full([b], 3.5))

    def step_inputs(self, rp, latents, sigmas, step):
        b = self.manifest["workload"]["batch"]
        out = []
        for inp in rp.program["inputs"]:
            name = inp["name"]
            if name == "latents":
                out.append(on_device(latents))
            elif name == "timestep":
                out.append(on_device(torch.full([b], float(sigmas[step] * 1000.0)),
                                     torch.float32))
            elif name == "sigma":
                out.append(on_device(torch.tensor(float(sigmas[step]))))
            elif name == "sigma_next":
                out.append(on_device(torch.tensor(float(sigmas[step + 1]))))
            elif name == "text":
                out.append(self.text[inp["branch"]])
            elif name == "pooled_text":
                out.append(self.pooled[inp["branch"]])
            else:
                out.append(self.guidance)
        return out

    def barrier(self):
        dist.barrier(group=self.active_group)

    def denoise(self, steps, count, timed):
        """Runs the first `count` steps of a `steps`-step schedule from the
        noise; returns the latents and, if timed, per-step seconds and
        communication seconds."""
        sigmas = np.linspace(1.0, 0.0, steps + 1)
        latents = self.noise
        step_s, comm_s = [], []
        for step in range(count):
            rp = self.programs[0]
            if len(self.programs) > 1 and sigmas[step] * 1000.0 < self.boundary:
                rp = self.programs[1]
            inputs = self.step_inputs(rp, latents, sigmas, step)
            if timed:
                self.barrier()
            self.comm.seconds = 0.0
            start = time.perf_counter()
            latents = rp(inputs, step == steps - 1)[0].float()
            self.comm.flush()
            if RUN["device"].type == "cuda":
                torch.cuda.synchronize()  # the step is over when its kernels are
            step_s.append(time.perf_counter() - start)
            comm_s.append(self.comm.seconds)
        return latents, step_s, comm_s

    def final_latents(self, latents):
        """Gathers the final token blocks (last stage, dp 0, cfg 0, tp 0; the
        lowest such rank per block) on the reporter, in block order."""
        m = self.manifest
        last = self.mesh.size["pp"] - 1
        holders = {}
        for r in sorted(self.mesh.active):
            c = m["ranks"][r]["coords"]
            if c["pp"] == last and c["dp"] == 0 and c["cfg"] == 0 and c["tp"] == 0:
                index = 0
                for name in m["latents"]["split_over"]:
                    index = index * self.mesh.size[name] + c[name]
                holders.setdefault(index, r)
        if self.rank != self.reporter:
            if self.rank in holders.values():
                dist.send(latents.contiguous(), self.reporter, group=self.active_group)
            return None
        work = m["workload"]
        shape = [work["batch"], m["latents"]["tokens"] // self.blocks(), m["latents"]["features"]]
        parts = []
        for index in sorted(holders):
            if holders[index] == self.rank:
                parts.append(latents)
            else:
                buf = on_device(torch.empty(shape), torch.float32)
                dist.recv(buf, holders[index], group=self.active_group)
                parts.append(buf)
        return unpatchify(torch.cat(parts, dim=1), m)


# ------------------------------------------------------------------ main


def run_rank(args):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # Unless --threads, the cores this process may use over the ranks on
    # the host, as dit-run does.
    local = int(os.environ.get("LOCAL_WORLD_SIZE") or 1)
    threads = args.threads or max(1, len(os.sched_getaffinity(0)) // local)
    torch.set_num_threads(threads)
    set_blas_threads(threads)
    if args.device == "cuda":
        RUN["device"] = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(RUN["device"])
    RUN["dtype"] = torch.bfloat16 if args.dtype == "bfloat16" else torch.float32
    RUN["sdpa"] = args.attention == "sdpa"
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo",
                            rank=rank, world_size=world)
    peer = Peer(args.plan, rank, world, args.seed)
    dist.barrier()  # every group exists; ranks without a program leave here
    if not peer.programs:
        return
    steps = args.steps
    with torch.no_grad():
        if args.warmup:
            peer.denoise(steps, min(args.warmup, steps), timed=False)
        latents, step_s, comm_s = peer.denoise(steps, steps, timed=True)
        # The step is over when its slowest rank is; communication time is
        # averaged over ranks.
        step_t = on_device(torch.tensor(step_s), torch.float64)
        comm_t = on_device(torch.tensor([sum(comm_s)]), torch.float64)
        dist.all_reduce(step_t, op=dist.ReduceOp.MAX, group=peer.active_group)
        dist.all_reduce(comm_t, group=peer.active_group)
        final = peer.final_latents(latents)
    if rank == peer.reporter:
        step_ms = [t * 1000.0 for t in step_t.tolist()]
        mean = sum(step_ms) / len(step_ms)
        comm = comm_t.item() * 1000.0 / len(peer.mesh.active) / steps
        print(json.dumps({"ranks": world, "steps": steps,
                          "step_ms": [round(t, 3) for t in step_ms],
                          "mean_step_ms": round(mean, 3),
                          "comm_ms_per_step": round(comm, 3),
                          "comm_share": round(comm / mean, 4) if mean else 0.0}),
              flush=True)
        if args.output:
            np.save(args.output, final.cpu().numpy().astype(np.float32))
    peer.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    """Starts one process per rank of this script, torchrun-style env."""
    with open(os.path.join(args.plan, "manifest.json")) as f:
        world = args.nproc or len(json.load(f)["ranks"])
    env = dict(os.environ, WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), LOCAL_WORLD_SIZE=str(world))
    procs = []
    for rank in range(world):
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
                                      env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank))))
    status = 0
    # Wait for all; if one fails, stop the rest rather than hang in a collective.
    while procs:
        for p in list(procs):
            rc = p.poll()
            if rc is None:
                continue
            procs.remove(p)
            if rc and not status:
                status = rc
                for other in procs:
                    other.terminate()
        time.sleep(0.05)
    return status


def set_blas_threads(threads):
    """OpenBLAS keeps its own pool (a thread per core) that torch's setting
    does not reach, so the peer's GEMMs get as many threads as its other
    ops. (dit-run instead runs single-threaded GEMM tiles on its ATen
    threads, docs/runtime.md "Threads".)"""
    import ctypes
    for library in ("libblas.so.3", "libopenblas.so.0"):
        try:
            ctypes.CDLL(library).openblas_set_num_threads(threads)
            return
        except (AttributeError, OSError):
            continue


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plan")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed steps of the same schedule run first")
    parser.add_argument("--nproc", type=int,
                        help="ranks to start when not launched by torchrun "
                             "(default: the plan's rank count)")
    parser.add_argument("--threads", type=int,
                        help="intra-op and BLAS threads per rank (default: cores / "
                             "LOCAL_WORLD_SIZE)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: rank r on GPU LOCAL_RANK, collectives over NCCL")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument("--attention", choices=("matmul", "sdpa"), default="matmul",
                        help="sdpa: torch's fused scaled_dot_product_attention (torch 2)")
    args = parser.parse_args()
    if "RANK" not in os.environ:
        sys.exit(launch(args))
    run_rank(args)


if __name__ == "__main__":
    main()
