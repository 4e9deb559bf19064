#!/usr/bin/env python3
"""dit-run's VAE decode against this machine's peak and against torch eager,
side by side in one run.

1. The machine's sgemm peak: libtorch's mm of two 2048 x 2048 float32
   matrices (the libtorch dit-run links), best of 5, with the threads
   dit-run's decode used (its libtorch default).
2. A VAE with a real model's config (default: FLUX.1-dev's AutoencoderKL,
   models/flux.1-dev/vae/config.json) and random weights under diffusers'
   names (test/Vae/vae_check.py make), a plan of that model at --size
   pixels square, and random latents [1, C, 1, size/8, size/8].
3. dit-run --decode-only on them (--repeats runs; its own line gives the
   decode's time and FLOPs, process start and weight loading excluded),
   and the same decode in torch eager (F.conv2d, F.group_norm,
   F.interpolate, one-head attention) on the same weights, timed the same
   way. The two outputs must agree within 1e-4 relative, else exit 1.

4. The patch-parallel decode: a plan of the model on 2 ranks (--tp-size 2)
   with --vae-parallel-size 2, and dit-run --decode-only --nproc 2 on the
   same latents and weights: two bands of latent rows, one-row halos,
   GroupNorm all-reduces and the attention's K/V all-gathered. Its pixels
   must agree with the one-rank decode's within 1e-5 relative.

Prints per engine the decode time, GFLOP/s and the fraction of the sgemm
peak, dit-run's time over torch eager's, and the 2-rank decode's speedup
over one rank. (On a host whose cores share their floating-point units, two
one-thread ranks cannot beat one two-thread rank: the line shows what the
exchanges cost.)

Usage: bench/vae_decode.py [--build build] [--size 512] [--repeats 3]
                           [--model flux.1-dev]
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sgemm_peak():
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - started)
    return 2 * 2048 ** 3 / best / 1e9


def load_vae_weights(folder):
    """Every F32 tensor of the folder's single safetensors file."""
    with open(os.path.join(folder, "diffusion_pytorch_model.safetensors"), "rb") as f:
        raw = f.read()
    size = struct.unpack("<Q", raw[:8])[0]
    entries = json.loads(raw[8:8 + size])
    entries.pop("__metadata__", None)
    base = 8 + size
    return {name: torch.from_numpy(np.frombuffer(
        raw, "<f4", count=int(np.prod(e["shape"])), offset=base + e["data_offsets"][0])
        .reshape(e["shape"]).copy()) for name, e in entries.items()}


@torch.no_grad()
def eager_decode(config, w, z):
    """AutoencoderKL.decode as plain torch eager calls."""
    groups = config["norm_num_groups"]
    conv = lambda n, x, p: F.conv2d(x, w[n + ".weight"], w[n + ".bias"], padding=p)
    norm = lambda n, x: F.group_norm(x, groups, w[n + ".weight"], w[n + ".bias"], 1e-6)

    def block(n, x):
        y = conv(n + ".conv2", F.silu(norm(n + ".norm2", conv(
            n + ".conv1", F.silu(norm(n + ".norm1", x)), 1))), 1)
        skip = n + ".conv_shortcut"
        return y + (conv(skip, x, 0) if skip + ".weight" in w else x)

    if config.get("use_post_quant_conv", True):
        z = conv("post_quant_conv", z, 0)
    x = block("decoder.mid_block.resnets.0", conv("decoder.conv_in", z, 1))
    if config.get("mid_block_add_attention", True):
        a = "decoder.mid_block.attentions.0"
        bsz, c, h, wd = x.shape
        t = norm(a + ".group_norm", x).flatten(2).transpose(1, 2)
        q, k, v = (F.linear(t, w[f"{a}.{p}.weight"], w[f"{a}.{p}.bias"])
                   for p in ("to_q", "to_k", "to_v"))
        o = torch.softmax(q @ k.transpose(1, 2) / c ** 0.5, dim=-1) @ v
        o = F.linear(o, w[a + ".to_out.0.weight"], w[a + ".to_out.0.bias"])
        x = x + o.transpose(1, 2).reshape(bsz, c, h, wd)
    x = block("decoder.mid_block.resnets.1", x)
    last = len(config["block_out_channels"]) - 1
    for i in range(last + 1):
        for j in range(config.get("layers_per_block", 2) + 1):
            x = block(f"decoder.up_blocks.{i}.resnets.{j}", x)
        if i < last:
            x = conv(f"decoder.up_blocks.{i}.upsamplers.0.conv",
                     F.interpolate(x, scale_factor=2.0, mode="nearest"), 1)
    return conv("decoder.conv_out", F.silu(norm("decoder.conv_norm_out", x)), 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="flux.1-dev")
    args = parser.parse_args()
    ditc, dit_run = (os.path.join(args.build, "bin", t) for t in ("ditc", "dit-run"))
    config_path = os.path.join(ROOT, "models", args.model, "vae", "config.json")
    with open(config_path) as f:
        config = json.load(f)

    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            os.path.join(ROOT, d) for d in ("test/lib", "bench")))
        subprocess.run([sys.executable, os.path.join(ROOT, "test", "Vae", "vae_check.py"),
                        "make", f"{work}/snap", "--config", config_path],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        subprocess.run([ditc, "compile", args.model, "--height", str(args.size),
                        "--width", str(args.size), "-o", f"{work}/plan"],
                       check=True, stdout=subprocess.DEVNULL)
        side = args.size // 8
        latents = np.random.default_rng(0).standard_normal(
            (1, config["latent_channels"], 1, side, side)).astype(np.float32)
        np.save(f"{work}/lat.npy", latents)

        runs = []
        for r in range(args.repeats):
            out = subprocess.run(
                [dit_run, f"{work}/plan", "--decode-only", "--latents", f"{work}/lat.npy",
                 "--weights", f"{work}/snap", "--output", f"{work}/img{r}.png",
                 "--save-pixels", f"{work}/pix.npy"],
                check=True, capture_output=True, text=True).stderr
            m = re.search(r"in ([0-9.]+) ms \(([0-9.]+) GFLOP.*; ([0-9]+) threads", out)
            runs.append((float(m.group(1)), float(m.group(2)), int(m.group(3))))
        ms, gflop, threads = min(runs)
        torch.set_num_threads(threads)  # the eager peer gets what dit-run used
        pixels = np.load(f"{work}/pix.npy")

        # The same decode in two bands over two ranks.
        subprocess.run([ditc, "compile", args.model, "--height", str(args.size),
                        "--width", str(args.size), "--tp-size", "2",
                        "--vae-parallel-size", "2", "-o", f"{work}/plan2"],
                       check=True, stdout=subprocess.DEVNULL)
        banded = []
        for r in range(args.repeats):
            out = subprocess.run(
                [dit_run, f"{work}/plan2", "--decode-only", "--nproc", "2",
                 "--latents", f"{work}/lat.npy", "--weights", f"{work}/snap",
                 "--output", f"{work}/band{r}.png", "--save-pixels", f"{work}/band.npy"],
                check=True, capture_output=True, text=True).stderr
            m = re.search(r"in ([0-9.]+) ms on ranks", out)
            banded.append(float(m.group(1)))
        band_ms = min(banded)
        band_pixels = np.load(f"{work}/band.npy")

        weights = load_vae_weights(f"{work}/snap/vae")
        z = torch.from_numpy(latents[:, :, 0]) / config["scaling_factor"] + (
            config.get("shift_factor") or 0.0)
        eager_ms = float("inf")
        for _ in range(args.repeats):
            started = time.perf_counter()
            eager = eager_decode(config, weights, z)
            eager_ms = min(eager_ms, (time.perf_counter() - started) * 1e3)
    peak = sgemm_peak()
    err = float(np.abs(pixels - eager.numpy()).max() / np.abs(eager.numpy()).max())

    print(f"VAE decode: {args.model} AutoencoderKL, latents {list(latents.shape)} -> "
          f"pixels {list(pixels.shape)}, {gflop:.1f} GFLOP; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")
    print(f"sgemm peak (2048^3 mm): {peak:.1f} GFLOP/s")
    print(f"{'engine':<26}{'ms':>10}{'GFLOP/s':>10}{'of peak':>9}{'vs eager':>10}")
    for name, t in (("dit-run --decode-only", ms), ("torch eager", eager_ms)):
        print(f"{name:<26}{t:10.1f}{gflop / t * 1e3:10.1f}{gflop / t * 1e3 / peak:9.0%}"
              f"{t / eager_ms:10.2f}")
    band_err = float(np.abs(band_pixels - pixels).max() / np.abs(pixels).max())
    print(f"{'dit-run, 2 ranks x 1 band':<26}{band_ms:10.1f}{gflop / band_ms * 1e3:10.1f}"
          f"{gflop / band_ms * 1e3 / peak:9.0%}{band_ms / eager_ms:10.2f}")
    print(f"patch-parallel speedup on 2 ranks over one rank: {ms / band_ms:.2f}x "
          f"({os.cpu_count()} CPUs on this host)")
    print(f"dit-run vs eager pixels: max relative difference {err:.1e}; "
          f"2 ranks vs 1: {band_err:.1e}")
    if err > 1e-4:
        sys.exit("dit-run's pixels differ from torch eager's")
    if band_err > 1e-5:
        sys.exit("the 2-rank decode's pixels differ from one rank's")


if __name__ == "__main__":
    main()
