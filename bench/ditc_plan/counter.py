"""The counter-based generator: element i of tensor `name` is a Box-Muller
normal of the counters 2i and 2i+1 under a key from (seed, name), so any
slice of a tensor can be drawn from its flat indices alone."""
import hashlib
import math

import numpy as np


MASK = (1 << 64) - 1


def stream_key(seed, name):
    """The 64-bit key of one named random tensor: the first 8 bytes of
    SHA-256("<seed>:<name>"), little-endian."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def mix64(x):
    """The SplitMix64 finalizer over uint64 arrays (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def normals_at(seed, name, flat):
    """Standard normals of the tensor `name` at the flat (row-major) indices
    `flat`, as a pure function of (seed, name, index), so a rank can draw any
    slice of a tensor without drawing the rest. Element i uses counters 2i
    and 2i+1 (Box-Muller). docs/runtime.md states it; the C++ runtime
    (runtime/lib/IO/Initializer.cpp) computes the same numbers."""
    key = np.uint64(stream_key(seed, name))
    first = np.asarray(flat, dtype=np.uint64) * np.uint64(2)
    golden = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        bits1 = mix64(key + (first + np.uint64(1)) * golden)
        bits2 = mix64(key + (first + np.uint64(2)) * golden)
    u1 = ((bits1 >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)
    u2 = ((bits2 >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)


def counter_normal(seed, name, shape):
    """The whole tensor `name` of `shape`."""
    count = int(np.prod(shape, dtype=np.int64))
    return normals_at(seed, name, np.arange(count, dtype=np.uint64)).reshape(shape)
