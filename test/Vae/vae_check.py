#!/usr/bin/env python3
"""Tiny VAE snapshots and checks of dit-run's decode against the float64
transcriptions (autoencoder_kl.py for AutoencoderKL, autoencoder_kl_wan.py for
AutoencoderKLWan and AutoencoderKLQwenImage). Standard library and NumPy
only, plus ffprobe and ffmpeg for videos.

  vae_check.py make OUT --config CONFIG.json [--seed S] [--dtype f32|f16|bf16]
               [--shards N] [--break shape:NAME|missing:NAME|dtype:NAME|truncate]
               [--transformer MODEL_DIR] [--encoder]
      OUT/model_index.json and OUT/vae/ (CONFIG.json and random weights under
      diffusers' names and shapes): a pipeline folder for --weights; with
      --transformer, also MODEL_DIR's transformer config, so that ditc compile
      OUT gives a plan whose VAE is this one. --break
      spoils it on purpose: NAME stored with a wrong shape, left out, or as
      F64 (valid safetensors that dit-run refuses), or the file cut short.
      --encoder adds tensors of the encoder side (encoder.conv_in,
      quant_conv), as a whole autoencoder's file holds them.
  vae_check.py check SNAPSHOT --latents L.npy --pixels P.npy (--png OUT.png | --mp4 OUT.mp4)
      Decodes L ([B, C, F, H, W]) with the snapshot's VAE in float64 as the
      model's pipeline does and prints the largest error of P (dit-run
      --save-pixels) relative to the largest reference value. Then reads every
      PNG back (zlib, all five filters) and checks its bytes are P converted as
      diffusers converts them, and within one level of the float64 reference's
      bytes; or probes every MP4 (ffprobe: H.264, yuv420p, size, frame count,
      frame rate) and decodes it back (ffmpeg) to compare with P's frames.
  vae_check.py parity ONE.npy BANDS.npy [--exact]
      Compares the pixels of a one-rank decode with a patch-parallel one
      (dit-run --save-pixels): the largest difference relative to the largest
      one-rank value, within --tolerance (1e-6); with --exact, every value
      equal.
"""
import argparse
import json
import os
import struct
import sys
import zlib

import numpy as np

import subprocess

import autoencoder_kl as ref
import autoencoder_kl_wan as ref_wan
from snapshot import read_safetensors, write_weights


def make(args):
    with open(args.config) as f:
        config = json.load(f)
    rng = np.random.default_rng(args.seed)
    tensors = {}
    module = ref_wan if config.get("_class_name") in ref_wan.CLASSES else ref
    for name, shape in sorted(module.decoder_parameters(config).items()):
        if name.endswith(".gamma") or (len(shape) == 1 and name.endswith(".weight")):
            value = 1.0 + 0.1 * rng.standard_normal(shape)  # an RMS or group norm scale
        elif len(shape) > 1:
            fan_in = int(np.prod(shape[1:]))
            value = rng.standard_normal(shape) / np.sqrt(fan_in)
        else:
            value = 0.1 * rng.standard_normal(shape)
        tensors[name] = value.astype(np.float32)
    if args.encoder:
        for name, shape in (("encoder.conv_in.weight", (4, 3, 3, 3)),
                            ("encoder.conv_in.bias", (4,)),
                            ("quant_conv.weight", (4, 4, 1, 1))):
            tensors[name] = rng.standard_normal(shape).astype(np.float32)
    dtypes = {}
    kind, _, target = (args.breaks or "").partition(":")
    if kind == "shape":
        tensors[target] = tensors[target].reshape(-1)
    elif kind == "missing":
        del tensors[target]
    elif kind == "dtype":
        dtypes[target] = "F64"
    vae = os.path.join(args.out, "vae")
    os.makedirs(vae, exist_ok=True)
    index = {"_class_name": "DiffusionPipeline"}
    if args.transformer:
        # A whole pipeline folder ditc compile reads: the model's index and
        # transformer config, this VAE.
        with open(os.path.join(args.transformer, "model_index.json")) as f:
            index = json.load(f)
        os.makedirs(os.path.join(args.out, "transformer"), exist_ok=True)
        with open(os.path.join(args.transformer, "transformer", "config.json")) as f:
            transformer = f.read()
        with open(os.path.join(args.out, "transformer", "config.json"), "w") as f:
            f.write(transformer)
    index["vae"] = ["diffusers", config.get("_class_name", "AutoencoderKL")]
    with open(os.path.join(args.out, "model_index.json"), "w") as f:
        json.dump(index, f)
    with open(os.path.join(vae, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    write_weights(vae, tensors, {"f32": "F32", "f16": "F16", "bf16": "BF16"}[args.dtype],
                  args.shards, dtypes)
    if kind == "truncate":
        path = os.path.join(vae, "diffusion_pytorch_model.safetensors")
        os.truncate(path, os.path.getsize(path) - 100)
    print(f"{len(tensors)} tensors in {vae}")


def read_png(path):
    """(height, width, [H, W, 3] uint8) of an 8-bit RGB PNG."""
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG signature"
    pos, idat, header = 8, b"", None
    while pos < len(raw):
        (length,) = struct.unpack(">I", raw[pos:pos + 4])
        kind = raw[pos + 4:pos + 8]
        body = raw[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", raw[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"{path}: bad CRC in {kind}"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert (depth, color, interlace) == (8, 2, 0), f"{path}: not 8-bit RGB"
    data = zlib.decompress(idat)
    stride = width * 3
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = data[y * (stride + 1)]
        line = bytearray(data[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], (prev[i - 3] if i >= 3 else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return height, width, np.frombuffer(b"".join(rows), np.uint8).reshape(height, width, 3)


def video_bytes(pixels):
    """[B, 3, F, H, W] float pixels -> [B, F, H, W, 3] uint8, as export_to_video
    takes the video processor's float frames: (x / 2 + 0.5).clamp(0, 1) in
    float32, then (frame * 255).astype(uint8), which truncates."""
    x = np.asarray(pixels, dtype=np.float32) / np.float32(2) + np.float32(0.5)
    x = np.clip(x, 0, 1).transpose(0, 2, 3, 4, 1)
    return (x * np.float32(255)).astype(np.uint8)


def check_mp4(path, frames, expected_fps):
    """Probes `path` and decodes it to RGB; prints one line; returns its frames."""
    probe = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
         "stream=codec_name,pix_fmt,width,height,r_frame_rate,nb_read_frames", "-of", "json",
         path], check=True, capture_output=True, text=True).stdout)["streams"][0]
    width, height = probe["width"], probe["height"]
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt",
                          "rgb24", "-"], check=True, capture_output=True).stdout
    decoded = np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)
    good = (probe["codec_name"] == "h264" and probe["pix_fmt"] == "yuv420p"
            and int(probe["nb_read_frames"]) == frames.shape[0]
            and decoded.shape == frames.shape and probe["r_frame_rate"] == f"{expected_fps}/1")
    # 4:2:0 keeps chroma at half resolution, so a noisy (random-weight)
    # video loses colour detail by design; the luma plane is kept whole, and
    # its PSNR measures the encoder.
    luma = np.array([0.299, 0.587, 0.114])
    diff = (decoded.astype(float) - frames.astype(float)) @ luma if good else np.array([255.0])
    psnr = 10 * np.log10(255.0 ** 2 / max((diff ** 2).mean(), 1e-12))
    print(f"{os.path.basename(path)}: {probe['codec_name']} {probe['pix_fmt']} {width}x{height}, "
          f"{probe['nb_read_frames']} frames at {probe['r_frame_rate']} fps, decoded back "
          f"{psnr:.1f} dB luma PSNR against the pixels' conversion: "
          f"{'ok' if good and psnr >= 30 else 'FAIL'}")


def check(args):
    vae = os.path.join(args.snapshot, "vae")
    with open(os.path.join(vae, "config.json")) as f:
        config = json.load(f)
    weights = {}
    for name in os.listdir(vae):
        if name.endswith(".safetensors"):
            weights.update(read_safetensors(os.path.join(vae, name)))
    latents = np.load(args.latents).astype(np.float64)
    if config.get("_class_name") in ref_wan.CLASSES:
        expected = ref_wan.pipeline_decode(config, weights, latents)
    else:
        expected = ref.decode(config, weights, ref.denormalize(config, latents[:, :, 0]))
    pixels = np.load(args.pixels)
    print(f"pixels: {list(pixels.shape)}, reference {list(expected.shape)}")
    if pixels.shape != expected.shape:
        sys.exit("shape mismatch")
    err = np.abs(pixels - expected).max() / np.abs(expected).max()
    verdict = "ok" if err <= args.tolerance else f"ABOVE {args.tolerance}"
    print(f"max relative error {err:.2e}: {verdict}")
    output = args.png or args.mp4
    stem, ext = output[:-4], output[-4:]
    if args.mp4:
        own = video_bytes(pixels)
        for b in range(pixels.shape[0]):
            check_mp4(output if b == 0 else f"{stem}-{b}{ext}", own[b], args.fps)
        return
    own, reference = ref.to_bytes(pixels), ref.to_bytes(expected)
    for b in range(pixels.shape[0]):
        path = output if b == 0 else f"{stem}-{b}{ext}"
        height, width, image = read_png(path)
        exact = np.array_equal(image, own[b])
        off = int(np.abs(image.astype(int) - reference[b].astype(int)).max())
        print(f"{os.path.basename(path)}: {width}x{height} RGB, the pixels' conversion "
              f"{'exactly' if exact else 'NOT'}, reference bytes within {off}: "
              f"{'ok' if exact and off <= 1 else 'FAIL'}")


def parity(args):
    one, bands = np.load(args.one), np.load(args.bands)
    if one.shape != bands.shape:
        print(f"shapes differ: {list(one.shape)} and {list(bands.shape)}: FAIL")
        return
    difference = float(np.abs(one.astype(np.float64) - bands).max())
    relative = difference / max(float(np.abs(one).max()), 1e-30)
    print(f"{args.label} {list(one.shape)}: largest difference {difference:.3g}, "
          f"relative {relative:.3g}: "
          f"{'ok' if relative <= args.tolerance else f'ABOVE {args.tolerance:g}'}")
    if args.exact:
        differing = int((one != bands).sum())
        print(f"bitwise: {differing} of {one.size} values differ: "
              f"{'ok' if differing == 0 else 'FAIL'}")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("out")
    m.add_argument("--config", required=True)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    m.add_argument("--shards", type=int, default=1)
    m.add_argument("--break", dest="breaks")
    m.add_argument("--encoder", action="store_true")
    m.add_argument("--transformer", help="a model folder whose model_index.json and "
                   "transformer/config.json make OUT a pipeline ditc compile reads")
    c = sub.add_parser("check")
    c.add_argument("snapshot")
    c.add_argument("--latents", required=True)
    c.add_argument("--pixels", required=True)
    out = c.add_mutually_exclusive_group(required=True)
    out.add_argument("--png")
    out.add_argument("--mp4")
    c.add_argument("--fps", type=int, default=16)
    c.add_argument("--tolerance", type=float, default=1e-5)
    p = sub.add_parser("parity")
    p.add_argument("one")
    p.add_argument("bands")
    p.add_argument("--exact", action="store_true")
    p.add_argument("--tolerance", type=float, default=1e-6)
    p.add_argument("--label", default="pixels", help="what the arrays hold, for the line")
    args = parser.parse_args()
    {"make": make, "check": check, "parity": parity}[args.command](args)


if __name__ == "__main__":
    main()
