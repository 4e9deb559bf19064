"""float64 NumPy transcription of diffusers' MochiTransformer3DModel
(models/transformers/transformer_mochi.py, MochiAttention and
MochiAttnProcessor2_0 in attention_processor.py,
MochiCombinedTimestepCaptionEmbedding and MochiAttentionPool in
embeddings.py).

forward(w, config, latents, text, timestep, mask=None) takes the diffusers
state dict `w` (name -> array; the per-frame Conv2d patch kernel
`patch_embed.proj.weight` [D, C, p, p]), the transformer's config.json
dict, latents [B, C, F, H, W], the text [B, L, E], timesteps [B] (the
pipeline passes 1000 * (1 - sigma)) and the text mask [B, L] (all ones when
None), and returns the model output [B, C, F, H, W].

With a text mask (dit-run's --text-mask), the masked mean and the
compaction of the valid text rows are diffusers'.
"""
import numpy as np

from video_common import (heads, layer_norm, linear, merge_heads, rms_norm, sdpa,
                    silu, timestep_features, timestep_mlp)

DEFAULTS = {
    "patch_size": 2, "num_attention_heads": 24, "attention_head_dim": 128,
    "num_layers": 48, "pooled_projection_dim": 1536, "in_channels": 12,
    "out_channels": None, "text_embed_dim": 4096, "time_embed_dim": 256,
}


def attention_pool(w, name, x, mask, n=8):
    """MochiAttentionPool (8 heads): a query from the masked mean attends
    over [mean ; tokens]."""
    m = mask.astype(np.float64)[:, :, None]
    m = m / np.maximum(m.sum(axis=1, keepdims=True), 1)
    pooled = (x * m).sum(axis=1, keepdims=True)
    xs = np.concatenate([pooled, x], axis=1)
    kv = linear(w, name + ".to_kv", xs)
    e = x.shape[2]
    k, v = heads(kv[..., :e], n), heads(kv[..., e:], n)
    q = heads(linear(w, name + ".to_q", xs[:, :1]), n)
    keep = np.concatenate([np.ones((x.shape[0], 1), bool), mask.astype(bool)], axis=1)
    o = merge_heads(sdpa(q, k, v, keep[:, None, None, :]))[:, 0]
    return linear(w, name + ".to_out", o)


def rotary(w, frames, rows, cols):
    """MochiRoPE with the learned pos_frequencies [3, heads, d/2]: centred
    row/column positions scaled to a 192 x 192 area; cos, sin [N, heads, d/2]."""
    scale = (192 * 192 / (rows * cols)) ** 0.5

    def centers(n):
        edges = np.linspace(-n * scale / 2, n * scale / 2, n + 1)
        return (edges[:-1] + edges[1:]) / 2

    grid = np.meshgrid(np.arange(frames, dtype=np.float64), centers(rows), centers(cols),
                       indexing="ij")
    pos = np.stack(grid, axis=-1).reshape(-1, 3)
    angles = np.einsum("nd,dhf->nhf", pos, w["pos_frequencies"])
    return np.cos(angles), np.sin(angles)


def rotate(x, cos, sin):
    """MochiAttnProcessor2_0's apply_rotary_emb on [B, N, heads, d]: pairs
    (2i, 2i + 1)."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return np.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1).reshape(x.shape)


def swiglu_ff(w, name, x):
    """FeedForward(activation_fn="swiglu", bias=False): hidden * silu(gate)."""
    h = linear(w, name + ".net.0.proj", x, bias=False)
    hidden, gate = np.split(h, 2, axis=-1)
    return linear(w, name + ".net.2", hidden * silu(gate), bias=False)


def block(w, cfg, i, img, txt, temb, rot, mask, last):
    """MochiTransformerBlock (eps 1e-6; q/k RMS norms eps 1e-5)."""
    p = f"transformer_blocks.{i}"
    n, eps = cfg["num_attention_heads"], 1e-6
    scale_msa, gate_msa, scale_mlp, gate_mlp = np.split(
        linear(w, p + ".norm1.linear", silu(temb)), 4, axis=1)
    hi = rms_norm(img, eps) * (1 + scale_msa[:, None])
    if not last:
        e_scale_msa, e_gate_msa, e_scale_mlp, e_gate_mlp = np.split(
            linear(w, p + ".norm1_context.linear", silu(temb)), 4, axis=1)
        ht = rms_norm(txt, eps) * (1 + e_scale_msa[:, None])
    else:
        # MochiLayerNormContinuous.
        ht = rms_norm(txt, eps) * (1 + linear(w, p + ".norm1_context.linear_1", silu(temb))[:, None])

    a = p + ".attn1"
    b, s = img.shape[:2]

    def proj(x, name, norm):
        y = linear(w, a + name, x, bias=False).reshape(b, x.shape[1], n, -1)
        return rms_norm(y, 1e-5, w[a + norm + ".weight"]) if norm else y

    q, k, v = proj(hi, ".to_q", ".norm_q"), proj(hi, ".to_k", ".norm_k"), proj(hi, ".to_v", None)
    eq = proj(ht, ".add_q_proj", ".norm_added_q")
    ek = proj(ht, ".add_k_proj", ".norm_added_k")
    ev = proj(ht, ".add_v_proj", None)
    q, k = rotate(q, *rot), rotate(k, *rot)
    out = np.zeros((b, s + txt.shape[1], n * q.shape[-1]))
    for j in range(b):
        keep = mask[j].astype(bool)
        qq = np.concatenate([q[j], eq[j][keep]], axis=0).transpose(1, 0, 2)[None]
        kk = np.concatenate([k[j], ek[j][keep]], axis=0).transpose(1, 0, 2)[None]
        vv = np.concatenate([v[j], ev[j][keep]], axis=0).transpose(1, 0, 2)[None]
        o = merge_heads(sdpa(qq, kk, vv))[0]
        out[j, :o.shape[0]] = o  # valid rows first, zeros after (diffusers' padding)
    oi = linear(w, a + ".to_out.0", out[:, :s])
    img = img + rms_norm(oi, eps) * np.tanh(gate_msa)[:, None]
    hi = rms_norm(img, eps) * (1 + scale_mlp[:, None])
    img = img + rms_norm(swiglu_ff(w, p + ".ff", hi), eps) * np.tanh(gate_mlp)[:, None]
    if not last:
        ot = linear(w, a + ".to_add_out", out[:, s:])
        txt = txt + rms_norm(ot, eps) * np.tanh(e_gate_msa)[:, None]
        ht = rms_norm(txt, eps) * (1 + e_scale_mlp[:, None])
        txt = txt + rms_norm(swiglu_ff(w, p + ".ff_context", ht), eps) * np.tanh(e_gate_mlp)[:, None]
    return img, txt


def forward(w, config, latents, text, timestep, mask=None):
    cfg = dict(DEFAULTS, **{k: v for k, v in config.items() if not k.startswith("_")})
    latents = np.asarray(latents, dtype=np.float64)
    text = np.asarray(text, dtype=np.float64)
    b, c, f, h, wd = latents.shape
    p = cfg["patch_size"]
    if mask is None:
        mask = np.ones(text.shape[:2])
    # MochiCombinedTimestepCaptionEmbedding.
    temb = (timestep_mlp(w, "time_embed.timestep_embedder",
                         timestep_features(np.asarray(timestep, dtype=np.float64), cfg["time_embed_dim"]))
            + attention_pool(w, "time_embed.pooler", text, mask))
    txt = linear(w, "time_embed.caption_proj", text)
    # PatchEmbed per frame: Conv2d, tokens (f, h, w).
    kernel = w["patch_embed.proj.weight"]
    x = latents.reshape(b, c, f, h // p, p, wd // p, p).transpose(0, 2, 3, 5, 1, 4, 6)
    img = x.reshape(b, f * (h // p) * (wd // p), -1) @ kernel.reshape(kernel.shape[0], -1).T \
        + w["patch_embed.proj.bias"]
    rot = rotary(w, f, h // p, wd // p)
    rot = (rot[0][None], rot[1][None])
    for i in range(cfg["num_layers"]):
        img, txt = block(w, cfg, i, img, txt, temb, rot, mask, i == cfg["num_layers"] - 1)
    # AdaLayerNormContinuous(elementwise_affine=False, eps=1e-6): scale, shift.
    scale, shift = np.split(linear(w, "norm_out.linear", silu(temb)), 2, axis=1)
    img = layer_norm(img, 1e-6) * (1 + scale[:, None]) + shift[:, None]
    out = linear(w, "proj_out", img)
    out = out.reshape(b, f, h // p, wd // p, p, p, -1).transpose(0, 6, 1, 2, 4, 3, 5)
    return out.reshape(b, -1, f, h, wd)
