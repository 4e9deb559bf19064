#!/usr/bin/env python3
"""Comparisons shared by the runtime tests, and, as a script, prints the
dtype and max |a - b| / max |b| of two .npy arrays:

    compare.py A.npy B.npy
"""
import json
import os
import sys

import numpy as np


def relative_error(out, ref):
    """max |out - ref| / max |ref|, in float64."""
    ref = np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(np.asarray(out, dtype=np.float64) - ref)) /
                 max(float(np.max(np.abs(ref))), 1e-30))


def world_size(plan):
    """The number of ranks a plan folder is compiled for."""
    with open(os.path.join(plan, "manifest.json")) as f:
        return json.load(f)["mesh"]["num_gpus"]


def replica0_output(plan, output):
    """The file dit-run writes for dp replica 0 given --output `output`: the
    path itself, or OUT.dp0.npy when the plan has dp replicas (each replica
    serves its own request and writes OUT.dp<i>.npy)."""
    with open(os.path.join(plan, "manifest.json")) as f:
        axes = json.load(f)["mesh"]["axes"]
    if next(a["size"] for a in axes if a["name"] == "dp") == 1:
        return output
    return output[:-len(".npy")] + ".dp0.npy" if output.endswith(".npy") else output + ".dp0.npy"


def main():
    a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
    if a.shape != b.shape:
        sys.exit(f"shapes differ: {a.shape} vs {b.shape}")
    print(f"dtype {a.dtype}, max relative error {relative_error(a, b):.3e}")


if __name__ == "__main__":
    main()
