"""Small float64 NumPy building blocks for the family references.

Each helper states the diffusers (or torch) function it stands for. They
take and return NumPy float64 arrays; weights are plain arrays looked up by
their diffusers state-dict name.
"""
import numpy as np

# The building blocks the Wan/LTX references use, the same modules here.
from wan_ltx_common import (gelu_tanh, heads, layer_norm, linear,  # noqa: F401
                            merge_heads, rms_norm, sdpa, silu, timestep_sinusoid)
from wan_ltx_common import timestep_embedding as timestep_mlp  # noqa: F401


def timestep_features(t, dim, flip_sin_to_cos=True, shift=0.0, max_period=10000.0):
    """diffusers.models.embeddings.get_timestep_embedding."""
    return timestep_sinusoid(t, dim, flip_sin_to_cos, shift, max_period)


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
