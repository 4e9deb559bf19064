#!/usr/bin/env python3
"""Executes a ditc plan on every rank in one process with NumPy (float64)
and compares its final latents with a reference plan's (usually the
one-rank plan of the same model).

It is the executable statement of the op semantics in docs/plan-format.md
and a check of the partitioner: a wrong collective, slice, rank table or
stage split shows up as an O(1) error. Parameters come from a deterministic
initializer keyed by (seed, name); each rank materializes only its slice.

Usage: simulate_plan.py PLAN REFERENCE [--steps K] [--seed S] [--tolerance T]
       simulate_plan.py PLAN --runtime-output OUT.npy [--steps K] [--seed S]
                        [--scheduler-config FILE] [--sigmas s0,...,sK]
                        [--guidance-scale G]

The second form checks dit-run's float32 output (latents [B, C, F, H, W])
against this float64 execution of the same plan. With a scheduler config
or sigmas, the schedule and the step are schedulers_ref.py's (written from
diffusers), each rank keeping its own multistep history as dit-run does.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

import schedulers_ref

# -------------------------------------------------------------- inputs


from ditc_plan import check_op, counter_normal, normals_at  # noqa: E402,F401


def full_parameter(seed, spec, cache):
    name, shape = spec["name"], spec["shape"]
    if name not in cache:
        scale = 0.5 / math.sqrt(shape[-1]) if len(shape) > 1 else 0.1
        base = 1.0 if name.endswith("weight") and len(shape) == 1 else 0.0
        cache[name] = base + scale * counter_normal(seed, name, shape)
    return cache[name]


def local_parameter(seed, spec, tp_size, tp_index, cache):
    full = full_parameter(seed, spec, cache)
    split = spec.get("split")
    if split:
        pieces, start = [], 0
        for width in split["segments"]:
            chunk = width // tp_size
            index = [slice(None)] * full.ndim
            index[split["dim"]] = slice(start + tp_index * chunk,
                                        start + (tp_index + 1) * chunk)
            pieces.append(full[tuple(index)])
            start += width
        full = np.concatenate(pieces, axis=split["dim"])
    if spec.get("only_on_axis_coordinate_0") and tp_index != 0:
        full = np.zeros_like(full)
    return full


def channels_first(manifest):
    """Whether the plan's patch tokens hold (C, pt, ph, pw) features rather
    than (pt, ph, pw, C) (manifest latents.feature_order)."""
    return manifest["latents"].get("feature_order", "channels_last") == "channels_first"


def patchify(latents, patch, first=False):
    """[B, C, F, H, W] -> [B, S, pt*ph*pw*C]: tokens (f, h, w), features
    (pt, ph, pw, C), or (C, pt, ph, pw) when `first`."""
    b, c, f, h, w = latents.shape
    pt, ph, pw = patch
    x = latents.reshape(b, c, f // pt, pt, h // ph, ph, w // pw, pw)
    x = x.transpose((0, 2, 4, 6, 1, 3, 5, 7) if first else (0, 2, 4, 6, 3, 5, 7, 1))
    return x.reshape(b, (f // pt) * (h // ph) * (w // pw), pt * ph * pw * c)


# -------------------------------------------------------------- math

erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1 + np.exp(-x))


def sinusoid(t, dim, scale=1.0):
    half = dim // 2
    freqs = np.exp(-math.log(10000.0) * np.arange(half) / half)
    args = (t * scale)[:, None] * freqs[None, :]
    return np.concatenate([np.cos(args), np.sin(args)], axis=-1)


def split_streams(x, text, pos):
    if pos == "prefix":
        return x[:, :text], x[:, text:]
    return x[:, x.shape[1] - text:], x[:, :x.shape[1] - text]


def concat_streams(t, i, pos):
    return np.concatenate([t, i] if pos == "prefix" else [i, t], axis=1)


def turn_pairs(xh, offset, count, angle):
    """Turns channel pairs (offset + 2k, offset + 2k + 1), k < count, of
    xh [..., S, heads, d] by angle [S, count]."""
    cos = np.cos(angle)[None, :, None, :]
    sin = np.sin(angle)[None, :, None, :]
    stop = offset + 2 * count
    even = xh[..., offset:stop:2].copy()
    odd = xh[..., offset + 1:stop:2].copy()
    xh[..., offset:stop:2] = even * cos - odd * sin
    xh[..., offset + 1:stop:2] = even * sin + odd * cos


def rope(x, a, block, head_block, learned=None):
    b, s, width = x.shape
    ltx = a.get("style", "axes") == "ltx"
    # An ltx table spans every head: one "head" of the whole width.
    heads = 1 if ltx else a["num_heads"]
    d = width // heads
    text, pos = a["text_tokens"], a["text_position"]
    image = s - text
    first = block * image if a.get("sequence_shards", 1) > 1 else 0
    coords = np.stack(np.unravel_index(np.arange(first, first + image), a["grid"]), 1)
    if a.get("centered"):
        # Qwen-Image: rows and columns centred, text after the image on
        # every axis.
        _, gh, gw = a["grid"]
        coords = coords - np.array([0, gh - gh // 2, gw - gw // 2])
        start = max(gh // 2, gw // 2)
        texts = np.repeat((start + np.arange(text))[:, None], 3, axis=1)
    else:
        texts = np.zeros((text, 3), dtype=coords.dtype)
    if not ltx:
        # An image token's position on an axis is grid_offset + grid_step *
        # index (CogVideoX 1.0's cropped rotary grid; 0 and 1 when absent).
        coords = (np.asarray(a.get("grid_offset", [0.0, 0.0, 0.0]))[None, :]
                  + np.asarray(a.get("grid_step", [1.0, 1.0, 1.0]))[None, :] * coords)
    coords = np.concatenate([texts, coords] if pos == "prefix" else [coords, texts])
    xh = x.reshape(b, s, heads, d).copy()
    if learned is not None:
        # Learned per-head frequencies [3, heads, d/2]: pair f of head h
        # turns by sum over axes of position * learned[axis, h, f].
        angle = np.einsum("sa,ahf->shf", coords, learned)[None]
        even, odd = xh[..., 0::2].copy(), xh[..., 1::2].copy()
        xh[..., 0::2] = even * np.cos(angle) - odd * np.sin(angle)
        xh[..., 1::2] = even * np.sin(angle) + odd * np.cos(angle)
        return xh.reshape(b, s, width)
    if ltx:
        full = width * a.get("head_shards", 1)
        channel0 = head_block * width if a.get("head_shards", 1) > 1 else 0
        pad, n = full % 6, full // 6
        # Global pair j (after the pad) turns on axis j % 3, frequency j // 3.
        for c in range(0, width - 1, 2):
            g = channel0 + c
            if g < pad:
                continue
            j = (g - pad) // 2
            freq = a["theta"] ** ((j // 3) / (n - 1) if n > 1 else 0.0) * math.pi / 2
            p = 2.0 * (coords[:, j % 3] * a["coordinate_scale"][j % 3]) - 1.0
            turn_pairs(xh, c, 1, (p * freq)[:, None])
        return xh.reshape(b, s, width)
    offset = 0
    for axis, dim in enumerate(a["axes_dims"]):
        half = dim // 2
        if half:
            freqs = a["theta"] ** (-np.arange(half) * 2.0 / dim)
            turn_pairs(xh, offset, half, coords[:, axis][:, None] * freqs[None, :])
        offset += dim
    return xh.reshape(b, s, width)


def sincos_part(positions, n):
    """[sin(p w_j)..., cos(p w_j)...] with w_j = 10000^(-j / (n / 2))."""
    half = n // 2
    angle = positions[:, None] * 10000.0 ** (-np.arange(half) / half)[None, :]
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


def sincos_pos_embed(x, a, block):
    """Adds the 3-D sinusoidal embedding of each image token's position:
    frames in the first D/4 features, then columns and rows (3D/8 each)."""
    image, width = x.shape[1], x.shape[2]
    first = block * image if a.get("sequence_shards", 1) > 1 else 0
    f, h, w = np.unravel_index(np.arange(first, first + image), a["grid"])
    spatial = (3 * width // 4) // 2
    table = np.concatenate([
        sincos_part(f / a["temporal_scale"], width // 4),
        sincos_part(w / a["spatial_scale"], spatial),
        sincos_part(h / a["spatial_scale"], spatial)], axis=1)
    return x + table[None]


def attention(q, k, v, heads, key_valid=None):
    """key_valid [B, Lk] of booleans: a False key gets no weight."""
    b, sq, width = q.shape
    d = width // heads
    qh = q.reshape(b, sq, heads, d).transpose(0, 2, 1, 3)
    kh = k.reshape(b, k.shape[1], heads, d).transpose(0, 2, 1, 3)
    vh = v.reshape(b, v.shape[1], heads, d).transpose(0, 2, 1, 3)
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if key_valid is not None:
        scores = np.where(key_valid[:, None, None, :], scores, -np.inf)
    scores = scores - scores.max(-1, keepdims=True)
    p = np.exp(scores)
    p = p / p.sum(-1, keepdims=True)
    return (p @ vh).transpose(0, 2, 1, 3).reshape(b, sq, width)


def key_validity(a, ins, k):
    """An attention's valid keys [B, Lk] from its key mask (its last input,
    [B, text] for a joint attention, else [B, Lk]), or None without one."""
    if not a.get("key_mask"):
        return None
    mask = ins[-1] > 0.5
    text = a.get("text_tokens", 0)
    if not text:
        return mask
    image = np.ones((k.shape[0], k.shape[1] - text), dtype=bool)
    if a.get("text_position", "prefix") == "prefix":
        return np.concatenate([mask, image], axis=1)
    return np.concatenate([image, mask], axis=1)


# -------------------------------------------------------------- plan


class Plan:
    def __init__(self, root):
        self.manifest = json.load(open(f"{root}/manifest.json"))
        self.programs = {p["id"]: json.load(open(f"{root}/{p['file']}"))
                         for p in self.manifest["programs"]}
        self.order = [a["name"] for a in self.manifest["mesh"]["axes"]]
        self.size = {a["name"]: a["size"] for a in self.manifest["mesh"]["axes"]}
        self.ranks = [r for r in self.manifest["ranks"] if r["program"]]

    def members(self, rank, axes):
        """Ranks differing from `rank` only on `axes`, row-major over them."""
        mine = self.manifest["ranks"][rank]["coords"]
        out = []
        for entry in self.ranks:
            c = entry["coords"]
            if all(c[k] == mine[k] for k in c if k not in axes):
                out.append((tuple(c[a] for a in self.order if a in axes), entry["rank"]))
        return [r for _, r in sorted(out)]


class Rank:
    def __init__(self, plan, rank, seed, weights=None):
        self.plan, self.rank, self.seed = plan, rank, seed
        entry = plan.manifest["ranks"][rank]
        self.coords = entry["coords"]
        self.program = plan.programs[entry["program"]]
        # Wan2.2 A14B: the second expert's program, used below the boundary.
        self.program_2 = plan.programs[entry["program_2"]] if entry.get("program_2") else None
        # Loaded weights (dit-run --weights) take the place of drawn ones:
        # full tensors by stream name, in the plan's shapes.
        self.cache = dict(weights or {})
        # The step's scheduler (schedulers_ref.py) and its index; None: the
        # op's own Euler update with the linear sigmas.
        self.stepper, self.step_index, self.guidance_scale = None, 0, None

    def use_expert_for(self, timestep):
        entry = self.plan.manifest["ranks"][self.rank]
        boundary = self.plan.manifest["model"].get("boundary_ratio", 0.875) * 1000.0
        self.program = self.plan.programs[entry["program"]]
        if self.program_2 is not None and timestep < boundary:
            self.program = self.program_2

    def block(self):
        index = 0
        for name in self.plan.manifest["latents"]["split_over"]:
            index = index * self.plan.size[name] + self.coords[name]
        return index

    def param(self, op, i):
        spec = op["params"][i]
        expert = self.program.get("expert", "transformer")
        if expert != "transformer":
            # Experts share parameter names, not weights.
            spec = dict(spec, name=f"{expert}.{spec['name']}")
        return local_parameter(self.seed, spec, self.plan.size["tp"],
                               self.coords["tp"], self.cache)

    def run(self, inputs, last_step):
        result = yield from self.run_function(self.program, self.program["ops"],
                                              inputs, last_step)
        return result

    def run_function(self, fn, ops, values, last_step):
        values = dict(values)
        shapes = fn["values"]
        for op in ops:
            ins = [values[i] for i in op["in"]]
            name, a = op["op"], op.get("attrs", {})
            check_op(name, "simulate_plan")
            if a.get("dit.between_steps") and last_step:
                outs = [ins[0]]
            elif name == "call":
                callee = self.program["functions"][op["callee"]]
                args = dict(zip(callee["args"], ins))
                results = yield from self.run_function(callee, callee["ops"], args,
                                                       last_step)
                outs = results
            elif name.startswith("shard.") and name != "shard.all_slice":
                outs = [(yield ("collective", op, ins[0]))]
            elif name in ("dit.layer_norm", "dit.rms_norm"):
                outs = [(yield from self.norm(op, ins[0]))]
            elif name == "dit.attention" and "dit.ring_axis" in a:
                outs = [(yield from self.ring_attention(op, ins))]
            else:
                outs = self.compute(op, ins, shapes)
            for vid, value in zip(op["out"], outs):
                values[vid] = value
        returned = fn["results"] if "results" in fn else self.program["outputs"]
        return [values[i] for i in returned]

    def norm(self, op, x):
        a = op["attrs"]
        group = a.get("group_size", x.shape[-1])
        xg = x.reshape(*x.shape[:-1], x.shape[-1] // group, group)
        reduce = "dit.reduce_stats_over" in a
        count = group * (self.plan.size["tp"] if reduce else 1)
        s2 = (xg * xg).sum(-1, keepdims=True)
        s1 = xg.sum(-1, keepdims=True)
        if reduce:
            s1 = yield ("stats", op, s1)
            s2 = yield ("stats", op, s2)
        if op["op"] == "dit.rms_norm":
            y = xg / np.sqrt(s2 / count + a["eps"])
        else:
            mean = s1 / count
            y = (xg - mean) / np.sqrt(s2 / count - mean * mean + a["eps"])
        y = y.reshape(x.shape)
        if a["affine"]:
            y = y * self.param(op, 0).reshape(-1) if self.param(op, 0).size == x.shape[-1] \
                else (y.reshape(xg.shape) * self.param(op, 0)).reshape(x.shape)
            if op["op"] == "dit.layer_norm":
                b = self.param(op, 1)
                y = y + b if b.size == x.shape[-1] else (y.reshape(xg.shape) + b).reshape(x.shape)
        return y

    def ring_attention(self, op, ins):
        a = op["attrs"]
        q, k, v = ins[:3]
        text, pos = a.get("text_tokens", 0), a.get("text_position", "prefix")
        kt, ki = split_streams(k, text, pos) if text else (k[:, :0], k)
        vt, vi = split_streams(v, text, pos) if text else (v[:, :0], v)
        # The online-softmax merge over R - 1 hops equals attention over the
        # text and every ring member's block, in ring order.
        kall = yield ("ring", op, ki)
        vall = yield ("ring", op, vi)
        k2 = concat_streams(kt, kall, pos)
        v2 = concat_streams(vt, vall, pos)
        return attention(q, k2, v2, a["num_heads"], key_validity(a, ins, k2))

    def compute(self, op, ins, shapes):
        name, a = op["op"], op.get("attrs", {})
        x = ins[0] if ins else None
        if name == "dit.timestep_embedding":
            h = sinusoid(x, a["freq_dim"], a.get("scale", 1.0)) @ self.param(op, 0).T \
                + self.param(op, 1)
            return [silu(h) @ self.param(op, 2).T + self.param(op, 3)]
        if name == "dit.patch_embed" and a.get("features", "channels_last") == "channels_last":
            # (pt, ph, pw, C) tokens to the weight's (C, pt, ph, pw) columns.
            volume = math.prod(a["patch"])
            x = np.swapaxes(x.reshape(*x.shape[:-1], volume, -1), -1, -2).reshape(x.shape)
        if name in ("dit.patch_embed", "dit.linear"):
            y = x @ self.param(op, 0).T
            y = y + self.param(op, 1) if len(op["params"]) > 1 else y
            if "pos_embed_max_size" in a:
                # SD3: the centred crop of the position table, this block's rows.
                side, (_, h, w) = a["pos_embed_max_size"], a["grid"]
                first = self.block() * y.shape[1] if a.get("sequence_shards", 1) > 1 else 0
                token = np.arange(first, first + y.shape[1])
                rows = ((side - h) // 2 + token // w) * side + (side - w) // 2 + token % w
                y = y + self.param(op, 2)[0, rows]
            return [y]
        if name == "dit.adaln_modulation":
            if a.get("table"):
                table = self.param(op, 0)
                return [x.reshape(x.shape[0], -1, table.shape[-1]) + table]
            y = silu(x) @ self.param(op, 0).T + self.param(op, 1)
            return [y.reshape(x.shape[0], a["num_chunks"], -1)]
        if name == "dit.modulate":
            out = x * (1 + ins[1][:, a["scale"]][:, None, :])
            if "shift" in a:
                out = out + ins[1][:, a["shift"]][:, None, :]
            return [out]
        if name == "dit.residual_add":
            if len(ins) == 3:
                gate = ins[2][:, a["gate_chunk"]][:, None, :]
                if a.get("tanh_gate"):
                    gate = np.tanh(gate)
                return [x + gate * ins[1]]
            return [x + ins[1]]
        if name == "dit.rope":
            return [rope(x, a, self.block(), self.coords["tp"],
                         self.param(op, 0) if op.get("params") else None)]
        if name == "dit.attention_pool":
            e, heads = x.shape[2], a["num_heads"]
            mask = ins[1] if len(ins) == 2 else np.ones(x.shape[:2])
            pooled = ((x * mask[..., None]).sum(axis=1) / mask.sum(axis=1)[..., None])[:, None]
            kv = np.concatenate([pooled, x], axis=1) @ self.param(op, 0).T + self.param(op, 1)
            q = pooled @ self.param(op, 2).T + self.param(op, 3)
            valid = np.concatenate([np.ones((x.shape[0], 1), bool), mask > 0.5], axis=1)
            o = attention(q, kv[..., :e], kv[..., e:], heads, valid)[:, 0]
            return [o @ self.param(op, 4).T + self.param(op, 5)]
        if name == "dit.token_mean":
            if len(ins) == 2:  # the valid tokens' mean
                mask = ins[1][..., None]
                return [(x * mask).sum(axis=1) / mask.sum(axis=1)]
            return [x.mean(axis=1)]
        if name == "dit.sincos_pos_embed":
            return [sincos_pos_embed(x, a, self.block())]
        if name == "dit.attention":
            if len(ins) == 1:
                q, k, v = np.split(x, 3, axis=-1)
            else:
                q, k, v = ins[:3]
            return [attention(q, k, v, a["num_heads"], key_validity(a, ins, k))]
        if name == "dit.activation":
            kind = a["kind"]
            if kind in ("swiglu", "geglu"):
                h1, h2 = np.split(x, 2, axis=-1)
                # diffusers' SwiGLU / GEGLU: hidden * act(gate).
                return [h1 * (silu(h2) if kind == "swiglu" else gelu(h2))]
            return [{"gelu": gelu, "gelu_tanh": gelu_tanh, "silu": silu}[kind](x)]
        if name == "dit.concat_streams":
            return [concat_streams(ins[0], ins[1], a["text_position"])]
        if name == "dit.split_streams":
            text = shapes[op["out"][0]]["shape"][1]
            return list(split_streams(x, text, a["text_position"]))
        if name == "tensor.concat":
            return [np.concatenate(ins, axis=a["dim"])]
        if name == "tensor.empty":
            return [np.zeros(shapes[op["out"][0]]["shape"])]
        if name == "dit.stack":
            return [np.stack(ins, axis=a["axis"])]
        if name == "dit.unstack":
            return [np.take(x, i, axis=a["axis"]) for i in range(x.shape[a["axis"]])]
        if name == "dit.split":
            return np.split(x, a["parts"], axis=a["axis"])
        if name == "dit.cfg_combine":
            u = ins[-1]
            out = u.copy()
            for scale, c in zip(a["guidance_scales"], ins[:-1]):
                if self.guidance_scale is not None:
                    scale = self.guidance_scale
                out = out + scale * (c - u)
            if self.plan.manifest["model"].get("family") == "qwen_image" and len(ins) == 2:
                # Qwen-Image's true CFG: each token back to the conditional norm.
                out = out * (np.linalg.norm(ins[0], axis=-1, keepdims=True) /
                             np.linalg.norm(out, axis=-1, keepdims=True))
            return [out]
        if name == "dit.scheduler_step":
            if self.stepper is not None:
                return [self.stepper.step(self.step_index, x, ins[1])]
            return [x + (ins[3] - ins[2]) * ins[1]]
        if name == "shard.all_slice":
            group = self.plan.members(self.rank, a["axes"])
            return [np.split(x, len(group), axis=a["slice_axis"])[group.index(self.rank)]]
        raise SystemExit(f"simulate_plan: no semantics for {name}")


# -------------------------------------------------------------- scheduler


def resolve(plan, waiting, queues):
    """Completes every collective whose group is all waiting; returns the
    ranks that can continue with their results."""
    ready = {}
    for rank, (kind, op, value) in waiting.items():
        if rank in ready:
            continue
        a = op["attrs"]
        name = op["op"]
        if kind == "collective" and name == "shard.send":
            group = plan.members(rank, a["axes"])
            peer = group[a["destination"][0]]
            queues.setdefault((rank, peer), []).append(value)
            ready[rank] = value
            continue
        if kind == "collective" and name == "shard.recv":
            group = plan.members(rank, a["axes"])
            peer = group[a["source"][0]]
            if queues.get((peer, rank)):
                ready[rank] = queues[(peer, rank)].pop(0)
            continue
        axes = a["axes"] if kind == "collective" else (
            ["tp"] if kind == "stats" else [a["ring_axis_name"]])
        group = plan.members(rank, axes)
        if not all(m in waiting and m not in ready and waiting[m][0] == kind
                   and waiting[m][1]["op"] == name for m in group):
            continue
        values = [waiting[m][2] for m in group]
        if kind == "stats" or name == "shard.all_reduce":
            total = sum(values)
            results = [total] * len(group)
        elif kind == "ring":
            full = np.concatenate(values, axis=1)
            results = [full] * len(group)
        elif name == "shard.all_gather":
            full = np.concatenate(values, axis=a["gather_axis"])
            results = [full] * len(group)
        elif name == "shard.all_to_all":
            n = len(group)
            chunks = [np.split(v, n, axis=a["split_axis"]) for v in values]
            results = [np.concatenate([chunks[s][d] for s in range(n)],
                                      axis=a["concat_axis"]) for d in range(n)]
        else:
            raise SystemExit(f"simulate_plan: no semantics for {name}")
        for m, r in zip(group, results):
            ready[m] = r
    return ready


def simulate(root, steps, seed, config=None, sigmas=None, guidance_scale=None,
             weights=None, text_mask=None):
    """The final tokens of `steps` steps. `weights` maps stream names
    ("<name>", "transformer_2.<name>") to full parameters, for a run with
    dit-run --weights; the rest are drawn from `seed`. `text_mask`
    [branches, B, T] is dit-run's --text-mask (default: all ones)."""
    plan = Plan(root)
    m = plan.manifest
    model, work = m["model"], m["workload"]
    family = model.get("family", "")
    patch = model["patch"]
    f, h, w = work["latent_frames"], work["latent_height"], work["latent_width"]
    if sigmas is not None:
        steps = len(sigmas) - 1
    ref = schedulers_ref.reference_schedule(
        config, family, steps, (f // patch[0]) * (h // patch[1]) * (w // patch[2]),
        f * h * w, sigmas)
    steps = len(ref.timesteps)
    scheduled = config is not None or sigmas is not None
    guidance = schedulers_ref.guidance_input(
        family, guidance_scale if guidance_scale is not None else work["guidance_scale"])
    patch = model["patch"]
    b = work["batch"]
    c = model["latent_channels"]
    shape = [b, c, work["latent_frames"], work["latent_height"], work["latent_width"]]
    noise = counter_normal(seed, "noise", shape)
    tokens = patchify(noise, patch, channels_first(m))
    texts = [counter_normal(seed, f"text{br}", [b, work["text_tokens"], model["text_embed_dim"]])
             for br in range(work["branches"])]
    pooled = [counter_normal(seed, f"pooled{br}", [b, model["pooled_dim"]])
              for br in range(work["branches"])]
    masks = [np.ones([b, work["text_tokens"]]) if text_mask is None else
             np.asarray(text_mask[br], dtype=np.float64) for br in range(work["branches"])]
    ranks = {e["rank"]: Rank(plan, e["rank"], seed, weights) for e in plan.ranks}
    for r in ranks.values():
        r.stepper = ref.stepper() if scheduled else None
        r.guidance_scale = guidance_scale
    state = {}
    for r in ranks.values():
        blocks = np.split(tokens, math.prod(plan.size[a] for a in m["latents"]["split_over"]), axis=1)
        state[r.rank] = blocks[r.block()]
    for step in range(steps):
        gens, waiting, queues = {}, {}, {}
        sigma, sigma_next = ref.op_sigmas(step)
        for r in ranks.values():
            r.step_index = step
            r.use_expert_for(ref.timesteps[step])
            inputs = {}
            for inp in r.program["inputs"]:
                name = inp["name"]
                if name == "latents":
                    value = state[r.rank]
                elif name == "timestep":
                    value = np.full([b], ref.timesteps[step])
                elif name == "sigma":
                    value = np.array(sigma)
                elif name == "sigma_next":
                    value = np.array(sigma_next)
                elif name == "text":
                    value = texts[inp["branch"]]
                elif name == "pooled_text":
                    value = pooled[inp["branch"]]
                elif name == "text_mask":
                    value = masks[inp["branch"]]
                else:
                    value = np.full([b], guidance)
                inputs[inp["value"]] = value
            gens[r.rank] = r.run(inputs, step == steps - 1)
        pending = {rank: None for rank in gens}
        done = {}
        while pending:
            progressed = False
            for rank in list(pending):
                if rank in waiting:
                    continue
                try:
                    waiting[rank] = gens[rank].send(pending[rank])
                except StopIteration as stop:
                    done[rank] = stop.value[0]
                    del pending[rank]
                progressed = True
            ready = resolve(plan, waiting, queues)
            for rank, value in ready.items():
                del waiting[rank]
                pending[rank] = value
                progressed = True
            if not progressed:
                raise SystemExit(f"simulate_plan: deadlock; ranks waiting in "
                                 f"{sorted((r, w[1]['op']) for r, w in waiting.items())}")
        state = done
    # The final tokens: the last stage's blocks, dp 0, cfg 0, tp 0.
    last = plan.size["pp"] - 1
    blocks = {}
    for r in ranks.values():
        c = r.coords
        if c["pp"] == last and c["dp"] == 0 and c["cfg"] == 0 and c["tp"] == 0:
            blocks[r.block()] = state[r.rank]
    return np.concatenate([blocks[i] for i in sorted(blocks)], axis=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("reference", nargs="?")
    parser.add_argument("--runtime-output")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=1e-9)
    parser.add_argument("--weights", help="with --runtime-output: the snapshot the "
                        "run loaded (dit-run --weights), read the same way")
    parser.add_argument("--scheduler-config")
    parser.add_argument("--sigmas")
    parser.add_argument("--guidance-scale", type=float)
    parser.add_argument("--text-mask", help="with --runtime-output: the run's --text-mask")
    args = parser.parse_args()
    sigmas = [float(v) for v in args.sigmas.split(",")] if args.sigmas else None
    if args.runtime_output:
        weights = None
        if args.weights:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
                os.path.abspath(__file__))), "lib"))
            import snapshot  # test/lib/snapshot.py, which imports this file
            weights = snapshot.read_snapshot(args.weights, args.plan)
        text_mask = np.load(args.text_mask) if args.text_mask else None
        ref = simulate(args.plan, args.steps, args.seed, args.scheduler_config, sigmas,
                       args.guidance_scale, weights, text_mask)
        latents = np.load(args.runtime_output)
        m = json.load(open(f"{args.plan}/manifest.json"))
        out = (patchify(latents, m["model"]["patch"], channels_first(m))
               if latents.ndim == 5 else latents)
    else:
        out = simulate(args.plan, args.steps, args.seed)
        ref = simulate(args.reference, args.steps, args.seed)
    sys.exit(report(out, ref, args.tolerance))


def report(out, ref, tolerance, label=""):
    """Prints "[label: ]max relative error E over N values: ok|MISMATCH"
    (the largest difference over the largest reference value) and returns
    the exit status: 0 when ok."""
    if out.shape != ref.shape:
        sys.exit(f"shape {out.shape} differs from the reference's {ref.shape}")
    error = float(np.max(np.abs(out - ref)) / max(np.max(np.abs(ref)), 1e-30))
    verdict = "ok" if error <= tolerance else "MISMATCH"
    print(f"{label + ': ' if label else ''}max relative error {error:.3e} "
          f"over {out.size} values: {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    main()
