"""float64 NumPy transcription of diffusers' CogVideoXTransformer3DModel
(models/transformers/cogvideox_transformer_3d.py) and of what
CogVideoXPipeline hands it (the rotary tables of
_prepare_rotary_positional_embeddings).

forward(w, config, latents, text, timestep) takes the diffusers state dict
`w` (name -> array, checkpoint layouts: Conv2d patch kernel [D, C, p, p]
for 1.0), the transformer's config.json dict, latents in CogVideoX's own
layout [B, F, C, H, W], the text [B, L, E] and the timesteps [B], and
returns the model output [B, F, C, H, W].
"""
import numpy as np

from video_common import (gelu_tanh, heads, layer_norm, linear, merge_heads,
                    rope_1d, rotate_interleaved, sdpa, silu,
                    timestep_features, timestep_mlp)

DEFAULTS = {
    "num_attention_heads": 30, "attention_head_dim": 64, "out_channels": 16,
    "flip_sin_to_cos": True, "freq_shift": 0, "time_embed_dim": 512,
    "norm_eps": 1e-5, "patch_size": 2, "patch_size_t": None,
    "sample_width": 90, "sample_height": 60, "sample_frames": 49,
    "temporal_compression_ratio": 4, "max_text_seq_length": 226,
    "spatial_interpolation_scale": 1.875, "temporal_interpolation_scale": 1.0,
    "use_rotary_positional_embeddings": False, "attention_bias": True,
}


def sincos_1d(dim, positions):
    """get_1d_sincos_pos_embed_from_grid: [sin | cos], omega 1/10000^(j/(dim/2))."""
    omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=np.float64) / (dim / 2.0))
    out = np.outer(np.asarray(positions, dtype=np.float64).reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def sincos_3d(dim, width, height, frames, spatial_scale, temporal_scale):
    """get_3d_sincos_pos_embed(dim, (width, height), frames, ...): [T*H*W, dim]."""
    spatial = 3 * dim // 4
    # meshgrid(grid_w, grid_h, indexing="xy"): grid[0] holds the column,
    # grid[1] the row, each [H, W]; the first half embeds grid[0].
    cols, rows = np.meshgrid(np.arange(width) / spatial_scale,
                             np.arange(height) / spatial_scale, indexing="xy")
    emb_spatial = np.concatenate([sincos_1d(spatial // 2, cols),
                                  sincos_1d(spatial // 2, rows)], axis=1)
    emb_temporal = sincos_1d(dim // 4, np.arange(frames) / temporal_scale)
    emb_spatial = np.repeat(emb_spatial[None], frames, axis=0)
    emb_temporal = np.repeat(emb_temporal[:, None], width * height, axis=1)
    return np.concatenate([emb_temporal, emb_spatial], axis=-1).reshape(-1, dim)


def crop_region(src, tgt_width, tgt_height):
    """pipeline_cogvideox.get_resize_crop_region_for_grid (Python round)."""
    tw, th = tgt_width, tgt_height
    h, w = src
    if h / w > th / tw:
        resize_height, resize_width = th, int(round(th / h * w))
    else:
        resize_width, resize_height = tw, int(round(tw / w * h))
    top = int(round((th - resize_height) / 2.0))
    left = int(round((tw - resize_width) / 2.0))
    return (top, left), (top + resize_height, left + resize_width)


def rotary_tables(cfg, grid_height, grid_width, frames):
    """CogVideoXPipeline._prepare_rotary_positional_embeddings with
    get_3d_rotary_pos_embed: cos and sin [T*H*W, head_dim]."""
    dim = cfg["attention_head_dim"]
    p, pt = cfg["patch_size"], cfg["patch_size_t"]
    base_w, base_h = cfg["sample_width"] // p, cfg["sample_height"] // p
    if pt is None:
        (top, left), (bottom, right) = crop_region((grid_height, grid_width), base_w, base_h)
        grid_h = np.linspace(top, bottom * (grid_height - 1) / grid_height, grid_height)
        grid_w = np.linspace(left, right * (grid_width - 1) / grid_width, grid_width)
        grid_t = np.linspace(0, frames * (frames - 1) / frames, frames)
    else:
        frames = (frames + pt - 1) // pt
        grid_h = np.arange(base_h, dtype=np.float64)[:grid_height]
        grid_w = np.arange(base_w, dtype=np.float64)[:grid_width]
        grid_t = np.arange(frames, dtype=np.float64)
        if len(grid_h) < grid_height or len(grid_w) < grid_width:
            raise ValueError("grid larger than the sample's rotary table")
    dt, dh, dw = dim // 4, dim // 8 * 3, dim // 8 * 3
    tables = []
    for part in (0, 1):
        t = rope_1d(dt, grid_t, 10000.0)[part]
        h = rope_1d(dh, grid_h, 10000.0)[part]
        w = rope_1d(dw, grid_w, 10000.0)[part]
        full = np.concatenate([
            np.broadcast_to(t[:, None, None], (frames, grid_height, grid_width, dt)),
            np.broadcast_to(h[None, :, None], (frames, grid_height, grid_width, dh)),
            np.broadcast_to(w[None, None, :], (frames, grid_height, grid_width, dw))],
            axis=-1)
        tables.append(full.reshape(frames * grid_height * grid_width, -1))
    return tables


def patch_embed(w, cfg, text, latents):
    """CogVideoXPatchEmbed.forward: [text_proj(text) ; patches] (+ table)."""
    b, f, c, h, wd = latents.shape
    p, pt = cfg["patch_size"], cfg["patch_size_t"]
    txt = linear(w, "patch_embed.text_proj", text)
    if pt is None:
        kernel = w["patch_embed.proj.weight"]  # Conv2d [D, C, p, p]
        x = latents.reshape(b, f, c, h // p, p, wd // p, p)
        x = x.transpose(0, 1, 3, 5, 2, 4, 6).reshape(b, f * (h // p) * (wd // p), c * p * p)
        img = x @ kernel.reshape(kernel.shape[0], -1).T + w["patch_embed.proj.bias"]
    else:
        x = latents.transpose(0, 1, 3, 4, 2)  # b f h w c
        x = x.reshape(b, f // pt, pt, h // p, p, wd // p, p, c)
        x = x.transpose(0, 1, 3, 5, 7, 2, 4, 6).reshape(b, -1, c * pt * p * p)
        img = linear(w, "patch_embed.proj", x)
    embeds = np.concatenate([txt, img], axis=1)
    if not cfg["use_rotary_positional_embeddings"]:
        # The table covers max_text_seq_length zero rows, then the patches.
        table = sincos_3d(img.shape[-1], wd // p, h // p, f,
                          cfg["spatial_interpolation_scale"],
                          cfg["temporal_interpolation_scale"])
        joint = np.concatenate([np.zeros((cfg["max_text_seq_length"], table.shape[1])), table])
        if joint.shape[0] != embeds.shape[1]:
            raise ValueError("text length differs from max_text_seq_length")
        embeds = embeds + joint[None]
    return embeds


def block(w, cfg, i, img, txt, temb, rotary):
    """CogVideoXBlock.forward with CogVideoXAttnProcessor2_0."""
    p = f"transformer_blocks.{i}"
    n, eps = cfg["num_attention_heads"], cfg["norm_eps"]
    length = txt.shape[1]

    def zero_norm(name, img, txt):
        # CogVideoXLayerNormZero: shift, scale, gate, enc_shift, enc_scale, enc_gate.
        m = linear(w, f"{p}.{name}.linear", silu(temb))
        shift, scale, gate, eshift, escale, egate = np.split(m, 6, axis=1)
        nw, nb = w[f"{p}.{name}.norm.weight"], w[f"{p}.{name}.norm.bias"]
        hi = layer_norm(img, eps, nw, nb) * (1 + scale)[:, None] + shift[:, None]
        ht = layer_norm(txt, eps, nw, nb) * (1 + escale)[:, None] + eshift[:, None]
        return hi, ht, gate[:, None], egate[:, None]

    hi, ht, gate, egate = zero_norm("norm1", img, txt)
    a = f"{p}.attn1"
    x = np.concatenate([ht, hi], axis=1)
    bias = cfg["attention_bias"]
    q = heads(linear(w, a + ".to_q", x, bias), n)
    k = heads(linear(w, a + ".to_k", x, bias), n)
    v = heads(linear(w, a + ".to_v", x, bias), n)
    q = layer_norm(q, 1e-6, w[a + ".norm_q.weight"], w[a + ".norm_q.bias"])
    k = layer_norm(k, 1e-6, w[a + ".norm_k.weight"], w[a + ".norm_k.bias"])
    if rotary is not None:
        q[:, :, length:] = rotate_interleaved(q[:, :, length:], *rotary)
        k[:, :, length:] = rotate_interleaved(k[:, :, length:], *rotary)
    o = linear(w, a + ".to_out.0", merge_heads(sdpa(q, k, v)))
    img = img + gate * o[:, length:]
    txt = txt + egate * o[:, :length]

    hi, ht, gate, egate = zero_norm("norm2", img, txt)
    x = np.concatenate([ht, hi], axis=1)
    ff = linear(w, f"{p}.ff.net.2", gelu_tanh(linear(w, f"{p}.ff.net.0.proj", x)))
    img = img + gate * ff[:, length:]
    txt = txt + egate * ff[:, :length]
    return img, txt


def forward(w, config, latents, text, timestep):
    cfg = dict(DEFAULTS, **{k: v for k, v in config.items() if not k.startswith("_")})
    latents = np.asarray(latents, dtype=np.float64)
    b, f, c, h, wd = latents.shape
    p, pt = cfg["patch_size"], cfg["patch_size_t"]
    inner = cfg["num_attention_heads"] * cfg["attention_head_dim"]
    features = timestep_features(np.asarray(timestep, dtype=np.float64), inner,
                                 cfg["flip_sin_to_cos"], cfg["freq_shift"])
    temb = timestep_mlp(w, "time_embedding", features)
    embeds = patch_embed(w, cfg, np.asarray(text, dtype=np.float64), latents)
    length = text.shape[1]
    txt, img = embeds[:, :length], embeds[:, length:]
    rotary = (rotary_tables(cfg, h // p, wd // p, f)
              if cfg["use_rotary_positional_embeddings"] else None)
    for i in range(cfg["num_layers"]):
        img, txt = block(w, cfg, i, img, txt, temb, rotary)
    eps = cfg["norm_eps"]
    img = layer_norm(img, eps, w["norm_final.weight"], w["norm_final.bias"])
    # AdaLayerNorm(chunk_dim=1): shift, then scale.
    shift, scale = np.split(linear(w, "norm_out.linear", silu(temb)), 2, axis=1)
    img = layer_norm(img, eps, w["norm_out.norm.weight"], w["norm_out.norm.bias"])
    img = img * (1 + scale[:, None]) + shift[:, None]
    out = linear(w, "proj_out", img)
    if pt is None:
        out = out.reshape(b, f, h // p, wd // p, -1, p, p)
        out = out.transpose(0, 1, 4, 2, 5, 3, 6).reshape(b, f, -1, h, wd)
    else:
        out = out.reshape(b, (f + pt - 1) // pt, h // p, wd // p, -1, pt, p, p)
        out = out.transpose(0, 1, 5, 4, 2, 6, 3, 7).reshape(b, f, -1, h, wd)
    return out
