"""Float64 NumPy transcription of diffusers' LTXVideoTransformer3DModel.
forward (transformer_ltx.py) as LTXPipeline calls it (all text tokens
valid, so encoder_attention_mask adds nothing).

forward(w, config, hidden_states, timestep, encoder_hidden_states,
        num_frames, height, width, rope_interpolation_scale)
takes the packed latents [B, F*H*W, C] (patch 1: tokens in (f, h, w)
order, features the channels), timestep [B] and the text [B, L, caption];
returns [B, F*H*W, C_out]. `pack`/`unpack` convert [B, C, F, H, W]."""
import math

import numpy as np

from wan_ltx_common import (feed_forward_gelu_tanh, heads, layer_norm, linear, merge_heads,
                    pixart_text_projection, rms_norm, rotate_pairs, sdpa, silu,
                    timestep_embedding, timestep_sinusoid)

QK_EPS = 1e-5  # LTXAttention's norm_q / norm_k eps, fixed
OUT_EPS = 1e-6  # norm_out = nn.LayerNorm(eps=1e-6)
BASE = (20.0, 2048.0, 2048.0)  # LTXVideoRotaryPosEmbed's base sizes


def pack(latents):
    """LTXPipeline._pack_latents with patch 1: [B, C, F, H, W] -> [B, FHW, C]."""
    b, c = latents.shape[:2]
    return latents.reshape(b, c, -1).transpose(0, 2, 1)


def unpack(tokens, f, h, w):
    b, _, c = tokens.shape
    return tokens.transpose(0, 2, 1).reshape(b, c, f, h, w)


def rope_tables(dim, num_frames, height, width, scale, patch=1, patch_t=1,
                theta=10000.0):
    """LTXVideoRotaryPosEmbed.forward over the whole width `dim`, in float32
    as diffusers computes it ("always compute rope in fp32": its angles reach
    (pi / 2) theta, where float32 rounding is part of the model's numbers):
    fractional coordinates, dim // 6 log-spaced frequencies per axis,
    interleaved (f, h, w) per frequency, dim % 6 unrotated channels first.
    The rest of the reference stays float64."""
    f32 = np.float32
    gf, gh, gw = np.meshgrid(np.arange(num_frames, dtype=f32),
                             np.arange(height, dtype=f32),
                             np.arange(width, dtype=f32), indexing="ij")
    grid = np.stack([gf, gh, gw], 0).reshape(3, -1).T  # [S, 3]
    grid = grid * np.array([scale[0] * patch_t / BASE[0],
                            scale[1] * patch / BASE[1],
                            scale[2] * patch / BASE[2]], dtype=f32)
    n = dim // 6
    freqs = f32(theta) ** np.linspace(math.log(1.0, theta), math.log(theta, theta), n,
                                      dtype=f32)
    freqs = freqs * f32(math.pi) / f32(2.0)
    angle = freqs[None, None, :] * (grid[:, :, None] * f32(2) - f32(1))  # [S, 3, n]
    angle = angle.transpose(0, 2, 1).reshape(grid.shape[0], 3 * n)  # per freq: f, h, w
    cos = np.repeat(np.cos(angle), 2, axis=-1).astype(np.float64)
    sin = np.repeat(np.sin(angle), 2, axis=-1).astype(np.float64)
    pad = dim % 6
    if pad:
        cos = np.concatenate([np.ones((cos.shape[0], pad)), cos], -1)
        sin = np.concatenate([np.zeros((sin.shape[0], pad)), sin], -1)
    return cos[None], sin[None]  # [1, S, dim]


def attention(w, name, x, context, n_heads, rope, cfg):
    """LTXAttention with LTXVideoAttnProcessor: RMSNorm over all heads
    (eps 1e-5), rope over the whole width before splitting heads."""
    kv = x if context is None else context
    bias = cfg.get("attention_bias", True)
    q = rms_norm(linear(w, name + ".to_q", x, bias), QK_EPS, w[name + ".norm_q.weight"])
    k = rms_norm(linear(w, name + ".to_k", kv, bias), QK_EPS, w[name + ".norm_k.weight"])
    v = linear(w, name + ".to_v", kv, bias)
    if rope is not None:
        q = rotate_pairs(q, *rope)
        k = rotate_pairs(k, *rope)
    o = merge_heads(sdpa(heads(q, n_heads), heads(k, n_heads), heads(v, n_heads)))
    return linear(w, name + ".to_out.0", o, cfg.get("attention_out_bias", True))


def block(w, p, x, text, temb, rope, cfg):
    """LTXVideoTransformerBlock.forward."""
    eps = cfg.get("norm_eps", 1e-6)
    affine = cfg.get("norm_elementwise_affine", False)
    n = cfg["num_attention_heads"]
    b = x.shape[0]
    table = w[p + ".scale_shift_table"]  # [6, D]
    ada = table[None, None] + temb.reshape(b, temb.shape[1], 6, -1)
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = [
        ada[:, :, i] for i in range(6)]
    h = rms_norm(x, eps, w[p + ".norm1.weight"] if affine else None)
    h = h * (1 + scale_msa) + shift_msa
    x = x + attention(w, p + ".attn1", h, None, n, rope, cfg) * gate_msa
    x = x + attention(w, p + ".attn2", x, text, n, None, cfg)
    h = rms_norm(x, eps, w[p + ".norm2.weight"] if affine else None)
    h = h * (1 + scale_mlp) + shift_mlp
    return x + feed_forward_gelu_tanh(w, p + ".ff", h) * gate_mlp


def forward(w, cfg, hidden_states, timestep, encoder_hidden_states, num_frames,
            height, width, rope_interpolation_scale):
    n = cfg["num_attention_heads"]
    dim = n * cfg["attention_head_dim"]
    b = hidden_states.shape[0]
    rope = rope_tables(dim, num_frames, height, width, rope_interpolation_scale,
                       cfg.get("patch_size", 1), cfg.get("patch_size_t", 1))
    x = linear(w, "proj_in", hidden_states)
    # AdaLayerNormSingle: PixArtAlphaCombinedTimestepSizeEmbeddings without
    # size conditions = Timesteps(256, flip_sin_to_cos=True, shift 0) and
    # TimestepEmbedding; then linear(silu(.)) to 6 D.
    sin = timestep_sinusoid(np.asarray(timestep, dtype=np.float64).reshape(-1), 256, True, 0)
    embedded = timestep_embedding(w, "time_embed.emb.timestep_embedder", sin)
    temb = linear(w, "time_embed.linear", silu(embedded))
    temb = temb.reshape(b, -1, temb.shape[-1])
    embedded = embedded.reshape(b, -1, embedded.shape[-1])
    text = pixart_text_projection(w, "caption_projection", encoder_hidden_states)
    for i in range(cfg["num_layers"]):
        x = block(w, f"transformer_blocks.{i}", x, text, temb, rope, cfg)
    mod = w["scale_shift_table"][None, None] + embedded[:, :, None]  # [B, 1, 2, D]
    shift, scale = mod[:, :, 0], mod[:, :, 1]
    x = layer_norm(x, OUT_EPS) * (1 + scale) + shift
    return linear(w, "proj_out", x)
