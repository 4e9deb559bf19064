"""Float64 NumPy building blocks of the MMDiT references (flux.py, sd3.py,
qwenimage.py), each transcribed from the diffusers module named in its
docstring. They know nothing of ditc's plans: weights come in as a dict of
checkpoint-layout arrays keyed by diffusers' state-dict names."""
import math

import numpy as np

# nn.Linear, SiLU and the tanh GELU, as the Wan/LTX references transcribe them.
from wan_ltx_common import (gelu_tanh, linear, silu,  # noqa: F401
                            timestep_embedding, timestep_sinusoid)
from wan_ltx_common import feed_forward_gelu_tanh as feed_forward  # noqa: F401


class Weights:
    """A state dict (name -> array) that records which names were read, so
    a caller can check that the model used every tensor it was given."""

    def __init__(self, tensors):
        self.tensors = tensors
        self.used = set()

    def __getitem__(self, name):
        if name not in self.tensors:
            raise KeyError(f"the reference needs '{name}', which the weights lack")
        self.used.add(name)
        return np.asarray(self.tensors[name], dtype=np.float64)

    def unused(self):
        return sorted(set(self.tensors) - self.used)


def layer_norm(x, eps):
    """nn.LayerNorm(elementwise_affine=False) over the last dimension."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def rms_norm(x, weight, eps):
    """diffusers' RMSNorm (and torch.nn.RMSNorm) with a weight."""
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return y * weight


def timestep_features(t, dim=256):
    """Timesteps(num_channels=dim, flip_sin_to_cos=True,
    downscale_freq_shift=0): get_timestep_embedding, cosines first."""
    return timestep_sinusoid(t, dim, True, 0)


def text_projection(w, name, pooled):
    """PixArtAlphaTextProjection(act_fn="silu"): linear_1, SiLU, linear_2."""
    return linear(w, name + ".linear_2", silu(linear(w, name + ".linear_1", pooled)))


def heads(x, n):
    """[B, S, n * d] -> [B, S, n, d]."""
    b, s, width = x.shape
    return x.reshape(b, s, n, width // n)


def sdpa(q, k, v, key_mask=None):
    """F.scaled_dot_product_attention on [B, S, H, d] (scale 1/sqrt(d)),
    returned as [B, S, H * d]. `key_mask` [B, Sk] of booleans, as a 2-D
    attn_mask broadcast over queries: a False key gets no weight."""
    b, sq, h, d = q.shape
    qh, kh, vh = (t.transpose(0, 2, 1, 3) for t in (q, k, v))
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if key_mask is not None:
        scores = np.where(key_mask[:, None, None, :], scores, -np.inf)
    scores = scores - scores.max(-1, keepdims=True)
    p = np.exp(scores)
    p = p / p.sum(-1, keepdims=True)
    return (p @ vh).transpose(0, 2, 1, 3).reshape(b, sq, h * d)


def rotate_interleaved(x, angles):
    """apply_rotary_emb(use_real=True, use_real_unbind_dim=-1) with
    repeat_interleave'd cos/sin, which is also the complex multiply of
    view_as_complex(x.reshape(..., -1, 2)): channel pairs (2k, 2k + 1) turn
    by angles[s, k]. x is [B, S, H, d], angles [S, d / 2]."""
    cos = np.cos(angles)[None, :, None, :]
    sin = np.sin(angles)[None, :, None, :]
    real, imag = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = real * cos - imag * sin
    out[..., 1::2] = real * sin + imag * cos
    return out


def rope_angles(positions, axes_dim, theta=10000.0):
    """Per position [S, n_axes] the angles [S, sum(axes_dim) / 2]: axis i
    turns its pairs k by position * theta^(-2k / axes_dim[i])
    (get_1d_rotary_pos_embed, and QwenEmbedRope.rope_params)."""
    parts = []
    for i, dim in enumerate(axes_dim):
        freqs = 1.0 / theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
        parts.append(np.outer(np.asarray(positions[:, i], dtype=np.float64), freqs))
    return np.concatenate(parts, axis=1)
