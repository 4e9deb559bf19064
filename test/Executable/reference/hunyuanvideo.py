"""float64 NumPy transcription of diffusers' HunyuanVideoTransformer3DModel
(models/transformers/transformer_hunyuan_video.py), text-to-video.

forward(w, config, latents, text, timestep, pooled, guidance, mask=None)
takes the diffusers state dict `w` (name -> array; the Conv3d patch kernel
`x_embedder.proj.weight` [D, C, pt, p, p]), the transformer's config.json
dict, latents [B, C, F, H, W], the text [B, L, E], timesteps [B], the
pooled text [B, P], the embedded guidance [B] and the text mask [B, L]
(all ones when None), and returns the model output [B, C, F, H, W].
"""
import numpy as np

from video_common import (gelu_tanh, heads, layer_norm, linear, merge_heads,
                    rms_norm, rope_1d, rotate_interleaved, sdpa, silu,
                    timestep_features, timestep_mlp)

DEFAULTS = {
    "in_channels": 16, "out_channels": 16, "num_attention_heads": 24,
    "attention_head_dim": 128, "num_layers": 20, "num_single_layers": 40,
    "num_refiner_layers": 2, "mlp_ratio": 4.0, "patch_size": 2,
    "patch_size_t": 1, "guidance_embeds": True, "rope_theta": 256.0,
    "rope_axes_dim": (16, 56, 56),
}


def pixart_projection(w, name, x):
    """PixArtAlphaTextProjection(act_fn="silu"): linear_1, SiLU, linear_2."""
    return linear(w, name + ".linear_2", silu(linear(w, name + ".linear_1", x)))


def token_refiner(w, cfg, text, timestep, mask):
    """HunyuanVideoTokenRefiner `context_embedder`."""
    r = "context_embedder"
    n = cfg["num_attention_heads"]
    m = mask.astype(np.float64)[..., None]
    pooled = (text * m).sum(axis=1) / m.sum(axis=1)
    temb = (timestep_mlp(w, r + ".time_text_embed.timestep_embedder",
                         timestep_features(timestep, 256))
            + pixart_projection(w, r + ".time_text_embed.text_embedder", pooled))
    x = linear(w, r + ".proj_in", text)
    keep = mask.astype(bool)
    # Self-attention mask: both tokens valid, and key 0 always visible.
    attn_mask = keep[:, None, None, :] & keep[:, None, :, None]
    attn_mask[:, :, :, 0] = True
    for j in range(cfg["num_refiner_layers"]):
        p = f"{r}.token_refiner.refiner_blocks.{j}"
        h = layer_norm(x, 1e-6, w[p + ".norm1.weight"], w[p + ".norm1.bias"])
        q = heads(linear(w, p + ".attn.to_q", h), n)
        k = heads(linear(w, p + ".attn.to_k", h), n)
        v = heads(linear(w, p + ".attn.to_v", h), n)
        o = linear(w, p + ".attn.to_out.0", merge_heads(sdpa(q, k, v, attn_mask)))
        gate_msa, gate_mlp = np.split(linear(w, p + ".norm_out.linear", silu(temb)), 2, axis=1)
        x = x + o * gate_msa[:, None]
        h = layer_norm(x, 1e-6, w[p + ".norm2.weight"], w[p + ".norm2.bias"])
        # FeedForward(activation_fn="linear-silu").
        ff = linear(w, p + ".ff.net.2", silu(linear(w, p + ".ff.net.0.proj", h)))
        x = x + ff * gate_mlp[:, None]
    return x


def rotary(cfg, frames, rows, cols):
    """HunyuanVideoRotaryPosEmbed: cos, sin [F*H*W, head_dim]."""
    grids = np.meshgrid(np.arange(frames), np.arange(rows), np.arange(cols), indexing="ij")
    cos, sin = [], []
    for dim, grid in zip(cfg["rope_axes_dim"], grids):
        c, s = rope_1d(dim, grid.reshape(-1), cfg["rope_theta"])
        cos.append(c)
        sin.append(s)
    return np.concatenate(cos, axis=1), np.concatenate(sin, axis=1)


def attention(w, a, n, img, txt, rot, mask, dual):
    """HunyuanVideoAttnProcessor2_0: rotary on the video rows, then joint
    attention over [video ; text] with the key mask."""
    def qk_norm(x, name):
        return rms_norm(x, 1e-6, w[name + ".weight"])

    length = txt.shape[1]
    if not dual:
        x = np.concatenate([img, txt], axis=1)
        q = qk_norm(heads(linear(w, a + ".to_q", x), n), a + ".norm_q")
        k = qk_norm(heads(linear(w, a + ".to_k", x), n), a + ".norm_k")
        v = heads(linear(w, a + ".to_v", x), n)
        q[:, :, :-length] = rotate_interleaved(q[:, :, :-length], *rot)
        k[:, :, :-length] = rotate_interleaved(k[:, :, :-length], *rot)
    else:
        q = qk_norm(heads(linear(w, a + ".to_q", img), n), a + ".norm_q")
        k = qk_norm(heads(linear(w, a + ".to_k", img), n), a + ".norm_k")
        v = heads(linear(w, a + ".to_v", img), n)
        q, k = rotate_interleaved(q, *rot), rotate_interleaved(k, *rot)
        eq = qk_norm(heads(linear(w, a + ".add_q_proj", txt), n), a + ".norm_added_q")
        ek = qk_norm(heads(linear(w, a + ".add_k_proj", txt), n), a + ".norm_added_k")
        ev = heads(linear(w, a + ".add_v_proj", txt), n)
        q = np.concatenate([q, eq], axis=2)
        k = np.concatenate([k, ek], axis=2)
        v = np.concatenate([v, ev], axis=2)
    o = merge_heads(sdpa(q, k, v, mask))
    return o[:, :-length], o[:, -length:]


def zero_norm(w, name, x, temb, chunks):
    """AdaLayerNormZero / AdaLayerNormZeroSingle (LayerNorm eps 1e-6)."""
    parts = np.split(linear(w, name, silu(temb)), chunks, axis=1)
    h = layer_norm(x, 1e-6) * (1 + parts[1][:, None]) + parts[0][:, None]
    return h, parts


def forward(w, config, latents, text, timestep, pooled, guidance, mask=None):
    cfg = dict(DEFAULTS, **{k: v for k, v in config.items() if not k.startswith("_")})
    latents = np.asarray(latents, dtype=np.float64)
    text = np.asarray(text, dtype=np.float64)
    timestep = np.asarray(timestep, dtype=np.float64)
    b, c, f, h, wd = latents.shape
    p, pt = cfg["patch_size"], cfg["patch_size_t"]
    n = cfg["num_attention_heads"]
    if mask is None:
        mask = np.ones(text.shape[:2])
    ff_, fh, fw = f // pt, h // p, wd // p
    rot = rotary(cfg, ff_, fh, fw)

    # HunyuanVideoConditionEmbedding.
    temb = (timestep_mlp(w, "time_text_embed.timestep_embedder", timestep_features(timestep, 256))
            + pixart_projection(w, "time_text_embed.text_embedder", np.asarray(pooled, dtype=np.float64)))
    if cfg["guidance_embeds"]:
        temb = temb + timestep_mlp(w, "time_text_embed.guidance_embedder",
                                   timestep_features(np.asarray(guidance, dtype=np.float64), 256))

    # HunyuanVideoPatchEmbed: Conv3d with stride = kernel, tokens (f, h, w).
    kernel = w["x_embedder.proj.weight"]
    x = latents.reshape(b, c, ff_, pt, fh, p, fw, p).transpose(0, 2, 4, 6, 1, 3, 5, 7)
    img = x.reshape(b, ff_ * fh * fw, -1) @ kernel.reshape(kernel.shape[0], -1).T + w["x_embedder.proj.bias"]
    txt = token_refiner(w, cfg, text, timestep, mask)

    # Keys: every video token, and the text tokens the mask keeps (the
    # forward keeps the first sum(mask) text tokens).
    valid = img.shape[1] + mask.sum(axis=1).astype(int)
    keys = np.arange(img.shape[1] + txt.shape[1])[None, :] < valid[:, None]
    attn_mask = keys[:, None, None, :]

    for i in range(cfg["num_layers"]):
        p_ = f"transformer_blocks.{i}"
        hi, mi = zero_norm(w, p_ + ".norm1.linear", img, temb, 6)
        ht, mt = zero_norm(w, p_ + ".norm1_context.linear", txt, temb, 6)
        oi, ot = attention(w, p_ + ".attn", n, hi, ht, rot, attn_mask, dual=True)
        oi = linear(w, p_ + ".attn.to_out.0", oi)
        ot = linear(w, p_ + ".attn.to_add_out", ot)
        img = img + oi * mi[2][:, None]
        txt = txt + ot * mt[2][:, None]
        hi = layer_norm(img, 1e-6) * (1 + mi[4][:, None]) + mi[3][:, None]
        ht = layer_norm(txt, 1e-6) * (1 + mt[4][:, None]) + mt[3][:, None]
        img = img + mi[5][:, None] * linear(w, p_ + ".ff.net.2",
                                            gelu_tanh(linear(w, p_ + ".ff.net.0.proj", hi)))
        txt = txt + mt[5][:, None] * linear(w, p_ + ".ff_context.net.2",
                                            gelu_tanh(linear(w, p_ + ".ff_context.net.0.proj", ht)))

    length = txt.shape[1]
    for i in range(cfg["num_single_layers"]):
        p_ = f"single_transformer_blocks.{i}"
        x = np.concatenate([img, txt], axis=1)
        hx, m = zero_norm(w, p_ + ".norm.linear", x, temb, 3)
        mlp = gelu_tanh(linear(w, p_ + ".proj_mlp", hx))
        oi, ot = attention(w, p_ + ".attn", n, hx[:, :-length], hx[:, -length:], rot,
                           attn_mask, dual=False)
        out = linear(w, p_ + ".proj_out",
                     np.concatenate([np.concatenate([oi, ot], axis=1), mlp], axis=2))
        x = x + m[2][:, None] * out
        img, txt = x[:, :-length], x[:, -length:]

    # AdaLayerNormContinuous(elementwise_affine=False, eps=1e-6): scale, shift.
    scale, shift = np.split(linear(w, "norm_out.linear", silu(temb)), 2, axis=1)
    img = layer_norm(img, 1e-6) * (1 + scale[:, None]) + shift[:, None]
    out = linear(w, "proj_out", img)
    out = out.reshape(b, ff_, fh, fw, -1, pt, p, p).transpose(0, 4, 1, 5, 2, 6, 3, 7)
    return out.reshape(b, -1, f, h, wd)
