"""Small float64 NumPy building blocks for the family references.

Each helper states the diffusers (or torch) function it stands for. They
take and return NumPy float64 arrays; weights are plain arrays looked up by
their diffusers state-dict name.
"""
import math

import numpy as np

# The building blocks the Wan/LTX references use, the same modules here.
from wan_ltx_common import gelu_tanh, layer_norm, linear, rms_norm, silu  # noqa: F401


def timestep_features(t, dim, flip_sin_to_cos=True, shift=0.0, max_period=10000.0):
    """diffusers.models.embeddings.get_timestep_embedding."""
    half = dim // 2
    exponent = -math.log(max_period) * np.arange(half, dtype=np.float64) / (half - shift)
    args = np.asarray(t, dtype=np.float64)[:, None] * np.exp(exponent)[None, :]
    emb = np.concatenate([np.sin(args), np.cos(args)], axis=-1)
    if flip_sin_to_cos:
        emb = np.concatenate([emb[:, half:], emb[:, :half]], axis=-1)
    return emb


def timestep_mlp(w, name, features):
    """diffusers TimestepEmbedding with SiLU: linear_1, SiLU, linear_2."""
    return linear(w, name + ".linear_2", silu(linear(w, name + ".linear_1", features)))


def sdpa(q, k, v, mask=None):
    """F.scaled_dot_product_attention on [B, H, S, d], with an optional
    boolean mask broadcast to the scores (True keeps a key)."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(-1, keepdims=True)
    p = np.exp(scores)
    p = p / p.sum(-1, keepdims=True)
    return p @ v


def heads(x, n):
    """[B, S, n * d] -> [B, n, S, d]."""
    b, s, width = x.shape
    return x.reshape(b, s, n, width // n).transpose(0, 2, 1, 3)


def merge_heads(x):
    """[B, n, S, d] -> [B, S, n * d]."""
    b, n, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, n * d)


def rotate_interleaved(x, cos, sin):
    """diffusers apply_rotary_emb(use_real=True, use_real_unbind_dim=-1):
    channel pairs (2i, 2i + 1) are (real, imaginary); cos and sin are
    [S, d] with each frequency repeated twice."""
    real, imag = x[..., 0::2], x[..., 1::2]
    rotated = np.stack([-imag, real], axis=-1).reshape(x.shape)
    return x * cos + rotated * sin


def rope_1d(dim, positions, theta):
    """get_1d_rotary_pos_embed(use_real=True, repeat_interleave_real=True):
    cos and sin [len(positions), dim]."""
    freqs = 1.0 / theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.outer(np.asarray(positions, dtype=np.float64), freqs)
    return np.repeat(np.cos(angles), 2, axis=1), np.repeat(np.sin(angles), 2, axis=1)
