"""Float64 NumPy transcription of diffusers' WanTransformer3DModel.forward
(transformer_wan.py), text-to-video: no image embedder, no added k/v.

forward(w, config, hidden_states, timestep, encoder_hidden_states) takes
hidden_states [B, C, F, H, W], timestep [B] (or [B, S] per token, as
Wan2.2 TI2V's expand_timesteps passes it), the text [B, L, text_dim], and
returns the output [B, C_out, F, H, W]."""
import numpy as np

from wan_ltx_common import (feed_forward_gelu_tanh, heads, layer_norm, linear, merge_heads,
                    pixart_text_projection, rms_norm, rotate_pairs, sdpa, silu,
                    timestep_embedding, timestep_sinusoid)


def rope_tables(head_dim, grid, theta=10000.0):
    """WanRotaryPosEmbed: the head dim splits into t, h, w parts
    (h = w = 2 (d // 6), t the rest); each part's get_1d_rotary_pos_embed
    (use_real, repeat_interleave_real) over integer positions, float64."""
    h_dim = w_dim = 2 * (head_dim // 6)
    t_dim = head_dim - h_dim - w_dim
    f, hh, ww = grid
    parts_cos, parts_sin = [], []
    for axis, dim in enumerate([t_dim, h_dim, w_dim]):
        freqs = 1.0 / theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
        pos = np.arange([f, hh, ww][axis], dtype=np.float64)
        angle = np.outer(pos, freqs)
        cos = np.repeat(np.cos(angle), 2, axis=1)
        sin = np.repeat(np.sin(angle), 2, axis=1)
        shape = [1, 1, 1, dim]
        shape[axis] = [f, hh, ww][axis]
        parts_cos.append(np.broadcast_to(cos.reshape(shape), (f, hh, ww, dim)))
        parts_sin.append(np.broadcast_to(sin.reshape(shape), (f, hh, ww, dim)))
    cos = np.concatenate(parts_cos, -1).reshape(1, f * hh * ww, 1, head_dim)
    sin = np.concatenate(parts_sin, -1).reshape(1, f * hh * ww, 1, head_dim)
    # [1, S, 1, d] -> [1, 1, S, d] for q in [B, H, S, d].
    return cos.transpose(0, 2, 1, 3), sin.transpose(0, 2, 1, 3)


def attention(w, name, x, context, n_heads, eps, rope):
    """WanAttention with WanAttnProcessor: q/k RMSNorm over all heads,
    rope on q and k (self-attention), SDPA, to_out.0."""
    kv = x if context is None else context
    q = rms_norm(linear(w, name + ".to_q", x), eps, w[name + ".norm_q.weight"])
    k = rms_norm(linear(w, name + ".to_k", kv), eps, w[name + ".norm_k.weight"])
    v = linear(w, name + ".to_v", kv)
    q, k, v = heads(q, n_heads), heads(k, n_heads), heads(v, n_heads)
    if rope is not None:
        q = rotate_pairs(q, *rope)
        k = rotate_pairs(k, *rope)
    return linear(w, name + ".to_out.0", merge_heads(sdpa(q, k, v)))


def block(w, p, x, text, temb, rope, cfg):
    """WanTransformerBlock.forward."""
    eps, n = cfg["eps"], cfg["num_attention_heads"]
    table = w[p + ".scale_shift_table"]  # [1, 6, D]
    if temb.ndim == 4:  # [B, S, 6, D] per token
        mod = table[None] + temb
        chunk = [mod[:, :, i] for i in range(6)]
    else:  # [B, 6, D]
        mod = table + temb
        chunk = [mod[:, i:i + 1] for i in range(6)]
    shift_msa, scale_msa, gate_msa, c_shift, c_scale, c_gate = chunk
    h = layer_norm(x, eps) * (1 + scale_msa) + shift_msa
    x = x + attention(w, p + ".attn1", h, None, n, eps, rope) * gate_msa
    if cfg.get("cross_attn_norm", True):
        h = layer_norm(x, eps, w[p + ".norm2.weight"], w[p + ".norm2.bias"])
    else:
        h = x
    x = x + attention(w, p + ".attn2", h, text, n, eps, None)
    h = layer_norm(x, eps) * (1 + c_scale) + c_shift
    return x + feed_forward_gelu_tanh(w, p + ".ffn", h) * c_gate


def patch_embedding(w, x, patch):
    """nn.Conv3d(C, D, kernel = stride = patch), flatten(2).transpose(1, 2)."""
    b, c, f, hh, ww = x.shape
    pt, ph, pw = patch
    weight = w["patch_embedding.weight"]  # [D, C, pt, ph, pw]
    xp = x.reshape(b, c, f // pt, pt, hh // ph, ph, ww // pw, pw)
    xp = xp.transpose(0, 2, 4, 6, 1, 3, 5, 7)  # b, f, h, w, c, i, j, k
    xp = xp.reshape(b, (f // pt) * (hh // ph) * (ww // pw), c * pt * ph * pw)
    return xp @ weight.reshape(weight.shape[0], -1).T + w["patch_embedding.bias"]


def forward(w, cfg, hidden_states, timestep, encoder_hidden_states):
    b, c, f, hh, ww = hidden_states.shape
    pt, ph, pw = cfg["patch_size"]
    grid = (f // pt, hh // ph, ww // pw)
    n = cfg["num_attention_heads"]
    d = cfg["attention_head_dim"]
    dim = n * d
    rope = rope_tables(d, grid)
    x = patch_embedding(w, hidden_states, (pt, ph, pw))
    timestep = np.asarray(timestep, dtype=np.float64)
    per_token = timestep.ndim == 2
    # WanTimeTextImageEmbedding: Timesteps(flip_sin_to_cos=True, shift 0).
    sin = timestep_sinusoid(timestep.reshape(-1), cfg["freq_dim"], True, 0)
    if per_token:
        sin = sin.reshape(b, -1, cfg["freq_dim"])
    temb = timestep_embedding(w, "condition_embedder.time_embedder", sin)
    proj = linear(w, "condition_embedder.time_proj", silu(temb))
    proj = proj.reshape(*proj.shape[:-1], 6, dim)  # unflatten (.., 6, D)
    text = pixart_text_projection(w, "condition_embedder.text_embedder",
                                  encoder_hidden_states)
    for i in range(cfg["num_layers"]):
        x = block(w, f"blocks.{i}", x, text, proj, rope, cfg)
    table = w["scale_shift_table"]  # [1, 2, D]
    if per_token:
        mod = table[None] + temb[:, :, None]
        shift, scale = mod[:, :, 0], mod[:, :, 1]
    else:
        mod = table + temb[:, None]
        shift, scale = mod[:, 0:1], mod[:, 1:2]
    x = layer_norm(x, cfg["eps"]) * (1 + scale) + shift
    x = linear(w, "proj_out", x)
    x = x.reshape(b, grid[0], grid[1], grid[2], pt, ph, pw, -1)
    x = x.transpose(0, 7, 1, 4, 2, 5, 3, 6)
    return x.reshape(b, -1, f, hh, ww)
