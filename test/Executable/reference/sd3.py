"""Stable Diffusion 3 / 3.5 in float64 NumPy, transcribed from diffusers'
models/transformers/transformer_sd3.py (SD3Transformer2DModel),
models/attention.py (JointTransformerBlock, FeedForward),
attention_processor.py (JointAttnProcessor2_0, Attention's qk_norm),
embeddings.py (PatchEmbed with pos_embed_max_size,
CombinedTimestepTextProjEmbeddings) and normalization.py (AdaLayerNormZero,
SD35AdaLayerNormZeroX, AdaLayerNormContinuous). Independent of ditc's
plans: it reads a state dict."""
import numpy as np

from common import (feed_forward, heads, layer_norm, linear, rms_norm, sdpa,
                    silu, text_projection, timestep_embedding,
                    timestep_features)

EPS = 1e-6


def patch_embed(w, cfg, latents):
    """PatchEmbed: Conv2d(kernel = stride = p) flattened to [B, N, D] in
    row-major (h, w) order, plus the centre crop of the persistent table
    pos_embed.pos_embed [1, M*M, D]."""
    p = cfg.get("patch_size", 2)
    b, c, H, W = latents.shape
    h, wd = H // p, W // p
    kernel = w["pos_embed.proj.weight"]  # [D, C, p, p]
    patches = latents.reshape(b, c, h, p, wd, p).transpose(0, 2, 4, 1, 3, 5)
    x = patches.reshape(b, h * wd, c * p * p) @ kernel.reshape(kernel.shape[0], -1).T
    x = x + w["pos_embed.proj.bias"]
    m = cfg.get("pos_embed_max_size", 96)
    if h > m or wd > m:
        raise ValueError(f"{h}x{wd} patches exceed pos_embed_max_size {m}")
    top, left = (m - h) // 2, (m - wd) // 2
    table = w["pos_embed.pos_embed"].reshape(1, m, m, -1)
    return x + table[:, top:top + h, left:left + wd, :].reshape(1, h * wd, -1)


def chunks(w, name, temb, n):
    emb = linear(w, name, silu(temb))
    return [c[:, None, :] for c in np.split(emb, n, axis=1)]


def qk(w, p, x, proj, norm, cfg):
    """A projection split into heads, RMS-normalized per head when the
    model has qk_norm="rms_norm"."""
    y = heads(linear(w, p + "." + proj, x), cfg["num_attention_heads"])
    if cfg.get("qk_norm") == "rms_norm":
        y = rms_norm(y, w[p + "." + norm + ".weight"], EPS)
    return y


def joint_attention(w, p, cfg, img, txt):
    """JointAttnProcessor2_0: image rows first, then the text rows."""
    q = qk(w, p, img, "to_q", "norm_q", cfg)
    k = qk(w, p, img, "to_k", "norm_k", cfg)
    v = heads(linear(w, p + ".to_v", img), cfg["num_attention_heads"])
    if txt is None:
        return sdpa(q, k, v), None
    qt = qk(w, p, txt, "add_q_proj", "norm_added_q", cfg)
    kt = qk(w, p, txt, "add_k_proj", "norm_added_k", cfg)
    vt = heads(linear(w, p + ".add_v_proj", txt), cfg["num_attention_heads"])
    o = sdpa(np.concatenate([q, qt], 1), np.concatenate([k, kt], 1),
             np.concatenate([v, vt], 1))
    S = img.shape[1]
    return o[:, :S], o[:, S:]


def block(w, i, cfg, img, txt, temb):
    """JointTransformerBlock i; returns (img, txt), txt None after the last
    (context_pre_only) block."""
    p = f"transformer_blocks.{i}"
    last = i == cfg["num_layers"] - 1
    dual = i in cfg.get("dual_attention_layers", ())
    normed = layer_norm(img, EPS)
    if dual:
        (shift, scale, gate, shift_mlp, scale_mlp, gate_mlp,
         shift2, scale2, gate2) = chunks(w, p + ".norm1.linear", temb, 9)
        h2 = normed * (1 + scale2) + shift2
    else:
        shift, scale, gate, shift_mlp, scale_mlp, gate_mlp = chunks(
            w, p + ".norm1.linear", temb, 6)
    h = normed * (1 + scale) + shift
    if last:
        # AdaLayerNormContinuous: scale, then shift.
        cscale, cshift = chunks(w, p + ".norm1_context.linear", temb, 2)
    else:
        cshift, cscale, cgate, cshift2, cscale2, cgate2 = chunks(
            w, p + ".norm1_context.linear", temb, 6)
    ht = layer_norm(txt, EPS) * (1 + cscale) + cshift
    oi, ot = joint_attention(w, p + ".attn", cfg, h, ht)
    img = img + gate * linear(w, p + ".attn.to_out.0", oi)
    if dual:
        o2, _ = joint_attention(w, p + ".attn2", cfg, h2, None)
        img = img + gate2 * linear(w, p + ".attn2.to_out.0", o2)
    hm = layer_norm(img, EPS) * (1 + scale_mlp) + shift_mlp
    img = img + gate_mlp * feed_forward(w, p + ".ff", hm)
    if last:
        return img, None
    txt = txt + cgate * linear(w, p + ".attn.to_add_out", ot)
    hm = layer_norm(txt, EPS) * (1 + cscale2) + cshift2
    txt = txt + cgate2 * feed_forward(w, p + ".ff_context", hm)
    return img, txt


def forward(w, cfg, hidden_states, encoder_hidden_states, pooled_projections, timestep):
    """SD3Transformer2DModel.forward: latents [B, C, H, W] in and out;
    `timestep` is the scheduler's t (0..1000), as StableDiffusion3Pipeline
    passes it."""
    b, _, H, W = hidden_states.shape
    p = cfg.get("patch_size", 2)
    img = patch_embed(w, cfg, hidden_states)
    temb = timestep_embedding(w, "time_text_embed.timestep_embedder",
                              timestep_features(np.asarray(timestep, dtype=np.float64)))
    temb = temb + text_projection(w, "time_text_embed.text_embedder", pooled_projections)
    txt = linear(w, "context_embedder", encoder_hidden_states)
    for i in range(cfg["num_layers"]):
        img, txt = block(w, i, cfg, img, txt, temb)
    scale, shift = chunks(w, "norm_out.linear", temb, 2)
    img = layer_norm(img, EPS) * (1 + scale) + shift
    out = linear(w, "proj_out", img)
    c = cfg.get("out_channels") or cfg.get("in_channels", 16)
    h, wd = H // p, W // p
    out = out.reshape(b, h, wd, p, p, c).transpose(0, 5, 1, 3, 2, 4)  # nhwpqc->nchpwq
    return out.reshape(b, c, h * p, wd * p)


def velocity(w, cfg, latents, text, pooled, sigma):
    b = latents.shape[0]
    return forward(w, cfg, latents, text, pooled, np.full([b], sigma * 1000.0))
