"""diffusers' AutoencoderKLWan and AutoencoderKLQwenImage decode, transcribed
to float64 NumPy from reading diffusers' modules (autoencoder_kl_wan.py,
autoencoder_kl_qwenimage.py) and the Wan and Qwen-Image pipelines.

diffusers decodes one latent frame at a time and carries the last two input
frames of every causal convolution to the next chunk. This transcription
instead runs every layer over the whole stream of frames at once, which is
the same function:
  - a causal convolution with its cache sees, for each frame, the two frames
    before it in the stream (zeros before the first);
  - an upsample3d resample leaves the first chunk's frame alone (diffusers
    marks its cache "Rep") and runs time_conv over the later frames only,
    with two zero frames before them;
  - Wan 2.2's DupUp3D shortcut drops its first factor_t - 1 frames (the
    first chunk's first_chunk=True);
  - RMS norm, attention and the spatial resample act per frame.
So a match with dit-run's chunked decode checks both readings at once.
"""
import numpy as np

CLASSES = ("AutoencoderKLWan", "AutoencoderKLQwenImage")


def layout(config):
    """(up blocks, conv_out channels, patch size, residual) as WanDecoder3d
    (or QwenImageDecoder3d) builds them."""
    qwen = config["_class_name"] == "AutoencoderKLQwenImage"
    base = config.get("base_dim", 96)
    dim = base if qwen else (config.get("decoder_base_dim") or base)
    mult = config.get("dim_mult", [1, 2, 4, 4])
    residual = (not qwen) and bool(config.get("is_residual", False))
    up_temporal = list(reversed(config.get("temperal_downsample", [False, True, True])))
    dims = [dim * u for u in [mult[-1]] + list(reversed(mult))]
    blocks = []
    for i in range(len(mult)):
        cin, cout = dims[i], dims[i + 1]
        if i > 0 and not residual:
            cin //= 2
        up = i != len(mult) - 1
        blocks.append(dict(cin=cin, cout=cout, up=up, temporal=up and up_temporal[i],
                           resample_out=cout if residual else cout // 2))
    out = config.get("input_channels", 3) if qwen else config.get("out_channels", 3)
    patch = 1 if qwen else (config.get("patch_size") or 1)
    return blocks, out, patch, residual


def up_prefix(residual, i):
    return f"decoder.up_blocks.{i}." + ("upsampler" if residual else "upsamplers.0")


def decoder_parameters(config):
    """{name: shape} of every tensor the decode reads."""
    blocks, out, _, residual = layout(config)
    z = config.get("z_dim", 16)
    shapes = {}

    def conv3d(name, o, i, k):
        shapes[name + ".weight"] = (o, i) + tuple(k)
        shapes[name + ".bias"] = (o,)

    def resnet(name, i, o):
        shapes[name + ".norm1.gamma"] = (i, 1, 1, 1)
        conv3d(name + ".conv1", o, i, (3, 3, 3))
        shapes[name + ".norm2.gamma"] = (o, 1, 1, 1)
        conv3d(name + ".conv2", o, o, (3, 3, 3))
        if i != o:
            conv3d(name + ".conv_shortcut", o, i, (1, 1, 1))

    wide = blocks[0]["cin"]
    conv3d("post_quant_conv", z, z, (1, 1, 1))
    conv3d("decoder.conv_in", wide, z, (3, 3, 3))
    resnet("decoder.mid_block.resnets.0", wide, wide)
    attn = "decoder.mid_block.attentions.0"
    shapes[attn + ".norm.gamma"] = (wide, 1, 1)
    shapes[attn + ".to_qkv.weight"] = (3 * wide, wide, 1, 1)
    shapes[attn + ".to_qkv.bias"] = (3 * wide,)
    shapes[attn + ".proj.weight"] = (wide, wide, 1, 1)
    shapes[attn + ".proj.bias"] = (wide,)
    resnet("decoder.mid_block.resnets.1", wide, wide)
    for i, b in enumerate(blocks):
        for j in range(config.get("num_res_blocks", 2) + 1):
            resnet(f"decoder.up_blocks.{i}.resnets.{j}", b["cin"] if j == 0 else b["cout"], b["cout"])
        if b["up"]:
            p = up_prefix(residual, i)
            shapes[p + ".resample.1.weight"] = (b["resample_out"], b["cout"], 3, 3)
            shapes[p + ".resample.1.bias"] = (b["resample_out"],)
            if b["temporal"]:
                conv3d(p + ".time_conv", 2 * b["cout"], b["cout"], (3, 1, 1))
    last = blocks[-1]["cout"]
    shapes["decoder.norm_out.gamma"] = (last, 1, 1, 1)
    conv3d("decoder.conv_out", out, last, (3, 3, 3))
    return shapes


def windows(x, kernel):
    """Every kernel-sized window of x's trailing axes, as extra axes."""
    return np.lib.stride_tricks.sliding_window_view(x, kernel, axis=tuple(range(2, x.ndim)))


def causal_conv3d(x, w, b, pad):
    """WanCausalConv3d: 2 * (kt // 2) zero frames in front, `pad` on the sides."""
    kt = w.shape[2]
    x = np.pad(x, ((0, 0), (0, 0), (kt - 1, 0), (pad, pad), (pad, pad)))
    win = windows(x, w.shape[2:])  # [B, C, T, H, W, kt, kh, kw]
    out = np.tensordot(win, w, axes=([1, 5, 6, 7], [1, 2, 3, 4]))  # [B, T, H, W, O]
    return out.transpose(0, 4, 1, 2, 3) + b[None, :, None, None, None]


def conv2d(x, w, b, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.tensordot(windows(x, w.shape[2:]), w, axes=([1, 4, 5], [1, 2, 3]))
    return out.transpose(0, 3, 1, 2) + b[None, :, None, None]


def rms_norm(x, gamma):
    norm = np.maximum(np.sqrt((x * x).sum(axis=1, keepdims=True)), 1e-12)
    return x / norm * np.sqrt(x.shape[1]) * gamma


def silu(x):
    return x / (1.0 + np.exp(-x))


def per_frame(x, f):
    """Applies f to [B*T, C, H, W] frames of x [B, C, T, H, W]."""
    b, c, t, h, w = x.shape
    y = f(x.transpose(0, 2, 1, 3, 4).reshape(b * t, c, h, w))
    return y.reshape(b, t, *y.shape[1:]).transpose(0, 2, 1, 3, 4)


def decode(config, weights, z):
    """z [B, z_dim, F, H, W] (denormalized) to pixels [B, C, F', H', W']."""
    blocks, _, patch, residual = layout(config)
    W = {k: np.asarray(v, np.float64) for k, v in weights.items()}

    def conv(name, x, pad=1):
        return causal_conv3d(x, W[name + ".weight"], W[name + ".bias"], pad)

    def resnet(name, x):
        short = conv(name + ".conv_shortcut", x, 0) if name + ".conv_shortcut.weight" in W else x
        h = conv(name + ".conv1", silu(rms_norm(x, W[name + ".norm1.gamma"])))
        h = conv(name + ".conv2", silu(rms_norm(h, W[name + ".norm2.gamma"])))
        return h + short

    def attention(name, x):
        def frames(f):
            n, c, h, w = f.shape
            qkv = conv2d(rms_norm(f, W[name + ".norm.gamma"]), W[name + ".to_qkv.weight"],
                         W[name + ".to_qkv.bias"], 0).reshape(n, 3 * c, h * w).transpose(0, 2, 1)
            q, k, v = qkv[..., :c], qkv[..., c:2 * c], qkv[..., 2 * c:]
            s = q @ k.transpose(0, 2, 1) / np.sqrt(c)
            p = np.exp(s - s.max(-1, keepdims=True))
            o = (p / p.sum(-1, keepdims=True)) @ v
            o = o.transpose(0, 2, 1).reshape(n, c, h, w)
            return conv2d(o, W[name + ".proj.weight"], W[name + ".proj.bias"], 0)
        return per_frame(x, frames) + x

    def resample(name, x, temporal):
        if temporal and x.shape[2] > 1:
            b, c, t, h, w = x.shape
            rest = conv(name + ".time_conv", x[:, :, 1:], 0)  # [B, 2c, t-1, h, w]
            rest = rest.reshape(b, 2, c, t - 1, h, w).transpose(0, 2, 3, 1, 4, 5)
            x = np.concatenate([x[:, :, :1], rest.reshape(b, c, 2 * (t - 1), h, w)], axis=2)
        def spatial(f):
            f = f.repeat(2, axis=2).repeat(2, axis=3)  # nearest(-exact) x2
            return conv2d(f, W[name + ".resample.1.weight"], W[name + ".resample.1.bias"], 1)
        return per_frame(x, spatial)

    def dup_up(x, cout, ft):
        b, c, t, h, w = x.shape
        y = x.repeat(cout * ft * 4 // c, axis=1).reshape(b, cout, ft, 2, 2, t, h, w)
        y = y.transpose(0, 1, 5, 2, 6, 3, 7, 4).reshape(b, cout, t * ft, h * 2, w * 2)
        return y[:, :, ft - 1:]

    x = conv("post_quant_conv", np.asarray(z, np.float64), 0)
    x = conv("decoder.conv_in", x)
    x = resnet("decoder.mid_block.resnets.0", x)
    x = attention("decoder.mid_block.attentions.0", x)
    x = resnet("decoder.mid_block.resnets.1", x)
    for i, blk in enumerate(blocks):
        inp = x
        for j in range(config.get("num_res_blocks", 2) + 1):
            x = resnet(f"decoder.up_blocks.{i}.resnets.{j}", x)
        if blk["up"]:
            x = resample(up_prefix(residual, i), x, blk["temporal"])
            if residual:
                x = x + dup_up(inp, blk["cout"], 2 if blk["temporal"] else 1)
    x = silu(rms_norm(x, W["decoder.norm_out.gamma"]))
    x = conv("decoder.conv_out", x)
    if patch > 1:
        b, cp, f, h, w = x.shape
        c = cp // (patch * patch)
        x = x.reshape(b, c, patch, patch, f, h, w).transpose(0, 1, 4, 5, 3, 6, 2)
        x = x.reshape(b, c, f, h * patch, w * patch)
    return np.clip(x, -1.0, 1.0)


def denormalize(config, latents):
    """The pipelines' latents / (1 / latents_std) + latents_mean."""
    z = config.get("z_dim", 16)
    mean = np.asarray(config["latents_mean"], np.float64).reshape(1, z, 1, 1, 1)
    std = np.asarray(config["latents_std"], np.float64).reshape(1, z, 1, 1, 1)
    return latents * std + mean


def pipeline_decode(config, weights, latents):
    """What the pipeline hands back: a video [B, 3, F', H', W'] for Wan, the
    single frame [B, 3, H', W'] for Qwen-Image."""
    pixels = decode(config, weights, denormalize(config, latents))
    return pixels[:, :, 0] if config["_class_name"] == "AutoencoderKLQwenImage" else pixels
