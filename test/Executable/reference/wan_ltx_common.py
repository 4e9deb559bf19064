"""Float64 NumPy building blocks of diffusers' transformers, transcribed from
diffusers' own modules (embeddings.py, normalization.py, attention
processors), not from the plan simulator. Each function names the diffusers
code it stands for. Weights are a dict of NumPy arrays keyed by diffusers'
state-dict names, with diffusers' shapes."""
import math

import numpy as np


def linear(w, name, x, bias=True):
    """torch.nn.Linear: x W^T + b."""
    y = x @ w[name + ".weight"].T
    return y + w[name + ".bias"] if bias else y


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu_tanh(x):
    """nn.GELU(approximate="tanh")."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def layer_norm(x, eps, weight=None, bias=None):
    """F.layer_norm over the last dim (biased variance)."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def rms_norm(x, eps, weight=None):
    """torch.nn.RMSNorm / diffusers RMSNorm: x * rsqrt(mean(x^2) + eps) * w."""
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return y * weight if weight is not None else y


def timestep_sinusoid(t, dim, flip_sin_to_cos, downscale_freq_shift, max_period=10000.0):
    """embeddings.get_timestep_embedding (scale 1), in float64."""
    half = dim // 2
    exponent = -math.log(max_period) * np.arange(half, dtype=np.float64)
    exponent = exponent / (half - downscale_freq_shift)
    args = np.asarray(t, dtype=np.float64)[:, None] * np.exp(exponent)[None, :]
    emb = np.concatenate([np.sin(args), np.cos(args)], axis=-1)
    if flip_sin_to_cos:
        emb = np.concatenate([emb[:, half:], emb[:, :half]], axis=-1)
    if dim % 2 == 1:
        emb = np.pad(emb, ((0, 0), (0, 1)))
    return emb


def timestep_embedding(w, name, sample):
    """embeddings.TimestepEmbedding: linear_1, SiLU, linear_2."""
    return linear(w, name + ".linear_2", silu(linear(w, name + ".linear_1", sample)))


def pixart_text_projection(w, name, caption):
    """embeddings.PixArtAlphaTextProjection with act_fn gelu_tanh."""
    return linear(w, name + ".linear_2", gelu_tanh(linear(w, name + ".linear_1", caption)))


def sdpa(q, k, v, mask=None):
    """F.scaled_dot_product_attention on [B, H, L, d], scale 1/sqrt(d), with
    an optional boolean mask broadcast to the scores (True keeps a key)."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(-1, keepdims=True)
    p = np.exp(scores)
    return (p / p.sum(-1, keepdims=True)) @ v


def heads(x, n):
    """[B, L, H*d] -> [B, H, L, d] (unflatten(2, (H, -1)) then the
    processor's transpose to SDPA's layout)."""
    b, l, width = x.shape
    return x.reshape(b, l, n, width // n).transpose(0, 2, 1, 3)


def merge_heads(x):
    """[B, H, L, d] -> [B, L, H*d]."""
    b, h, l, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, l, h * d)


def feed_forward_gelu_tanh(w, name, x):
    """attention.FeedForward(activation_fn="gelu-approximate"): net.0 is
    GELU(dim, inner, approximate="tanh") with its `proj`, net.2 the output."""
    return linear(w, name + ".net.2", gelu_tanh(linear(w, name + ".net.0.proj", x)))


def rotate_pairs(x, cos, sin):
    """Interleaved rotation of channel pairs (2i, 2i+1), as Wan's and LTX's
    apply_rotary_emb: out_even = a cos - b sin, out_odd = a sin + b cos,
    where cos and sin repeat each pair's value twice."""
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos[..., 0::2] - b * sin[..., 0::2]
    out[..., 1::2] = a * sin[..., 1::2] + b * cos[..., 1::2]
    return out
