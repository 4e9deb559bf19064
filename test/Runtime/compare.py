#!/usr/bin/env python3
"""Prints the dtype and max |a - b| / max |b| of two .npy arrays."""
import sys

import numpy as np

a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
if a.shape != b.shape:
    sys.exit(f"shapes differ: {a.shape} vs {b.shape}")
error = np.max(np.abs(a.astype(np.float64) - b)) / max(np.max(np.abs(b)), 1e-30)
print(f"dtype {a.dtype}, max relative error {error:.3e}")
