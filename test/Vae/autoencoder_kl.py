"""Float64 NumPy transcription of diffusers' AutoencoderKL decode, written
from diffusers' modules (models/autoencoders/autoencoder_kl.py and vae.py's
Decoder, unet_2d_blocks.py's UNetMidBlock2D and UpDecoderBlock2D,
resnet.py's ResnetBlock2D, upsampling.py's Upsample2D, attention_processor.py's
Attention with its deprecated-attention-block layout, and
image_processor.py's postprocess and numpy_to_pil), not from ditc's runtime.

`decoder_parameters(config)` lists every decoder tensor with its shape,
`decode(config, weights, latents)` maps denormalized latents [B, C, H, W] to
pixels [B, out_channels, H*s, W*s], and `to_bytes(pixels)` converts them as
the pipeline's PIL output does.
"""
import numpy as np

GROUP_NORM_EPS = 1e-6  # the Decoder builds every GroupNorm with eps=1e-6


def up_block_channels(config):
    """(in, out) channels of each up block: reversed block_out_channels,
    the first block taking the mid block's width."""
    widths = list(reversed(config["block_out_channels"]))
    return [(widths[max(i - 1, 0)], widths[i]) for i in range(len(widths))]


def decoder_parameters(config):
    """{name: shape} of every tensor AutoencoderKL.decode reads."""
    shapes = {}

    def conv(name, out, inp, k):
        shapes[name + ".weight"] = (out, inp, k, k)
        shapes[name + ".bias"] = (out,)

    def norm(name, c):
        shapes[name + ".weight"] = (c,)
        shapes[name + ".bias"] = (c,)

    def resnet(name, inp, out):
        norm(name + ".norm1", inp)
        conv(name + ".conv1", out, inp, 3)
        norm(name + ".norm2", out)
        conv(name + ".conv2", out, out, 3)
        if inp != out:
            conv(name + ".conv_shortcut", out, inp, 1)

    latent = config["latent_channels"]
    widest = config["block_out_channels"][-1]
    if config.get("use_post_quant_conv", True):
        conv("post_quant_conv", latent, latent, 1)
    conv("decoder.conv_in", widest, latent, 3)
    resnet("decoder.mid_block.resnets.0", widest, widest)
    if config.get("mid_block_add_attention", True):
        attn = "decoder.mid_block.attentions.0"
        norm(attn + ".group_norm", widest)
        for proj in ("to_q", "to_k", "to_v", "to_out.0"):
            shapes[f"{attn}.{proj}.weight"] = (widest, widest)
            shapes[f"{attn}.{proj}.bias"] = (widest,)
    resnet("decoder.mid_block.resnets.1", widest, widest)
    blocks = up_block_channels(config)
    for i, (inp, out) in enumerate(blocks):
        for j in range(config.get("layers_per_block", 2) + 1):
            resnet(f"decoder.up_blocks.{i}.resnets.{j}", inp if j == 0 else out, out)
        if i + 1 < len(blocks):
            conv(f"decoder.up_blocks.{i}.upsamplers.0.conv", out, out, 3)
    narrow = config["block_out_channels"][0]
    norm("decoder.conv_norm_out", narrow)
    conv("decoder.conv_out", config.get("out_channels", 3), narrow, 3)
    return shapes


def conv2d(x, weight, bias, padding):
    """nn.Conv2d with stride 1 and zero padding, as a sum over kernel taps."""
    b, c, h, w = x.shape
    out_c, _, k, _ = weight.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh, ow = h + 2 * padding - k + 1, w + 2 * padding - k + 1
    out = np.zeros((b, out_c, oh, ow))
    for dy in range(k):
        for dx in range(k):
            patch = xp[:, :, dy:dy + oh, dx:dx + ow]
            out += np.einsum("bchw,oc->bohw", patch, weight[:, :, dy, dx])
    return out + bias[None, :, None, None]


def group_norm(x, groups, weight, bias):
    b, c, h, w = x.shape
    g = x.reshape(b, groups, -1)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    g = (g - mean) / np.sqrt(var + GROUP_NORM_EPS)
    return g.reshape(b, c, h, w) * weight[None, :, None, None] + bias[None, :, None, None]


def silu(x):
    return x / (1.0 + np.exp(-x))


def decode(config, weights, z):
    groups = config.get("norm_num_groups", 32)
    p = weights

    def conv(name, x, padding):
        return conv2d(x, p[name + ".weight"], p[name + ".bias"], padding)

    def norm(name, x):
        return group_norm(x, groups, p[name + ".weight"], p[name + ".bias"])

    def resnet(name, x):
        h = conv(name + ".conv1", silu(norm(name + ".norm1", x)), 1)
        h = conv(name + ".conv2", silu(norm(name + ".norm2", h)), 1)
        if name + ".conv_shortcut.weight" in p:
            x = conv(name + ".conv_shortcut", x, 0)
        return x + h  # output_scale_factor 1

    def attention(name, x):
        # One head of width C (attention_head_dim = block_out_channels[-1]),
        # group norm first, a residual connection, rescale factor 1.
        b, c, h, w = x.shape
        t = norm(name + ".group_norm", x).reshape(b, c, h * w).transpose(0, 2, 1)

        def lin(proj, v):
            return v @ p[f"{name}.{proj}.weight"].T + p[f"{name}.{proj}.bias"]

        q, k, v = lin("to_q", t), lin("to_k", t), lin("to_v", t)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(c)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        out = lin("to_out.0", scores @ v)
        return out.transpose(0, 2, 1).reshape(b, c, h, w) + x

    x = np.asarray(z, dtype=np.float64)
    if config.get("use_post_quant_conv", True):
        x = conv("post_quant_conv", x, 0)
    x = conv("decoder.conv_in", x, 1)
    x = resnet("decoder.mid_block.resnets.0", x)
    if config.get("mid_block_add_attention", True):
        x = attention("decoder.mid_block.attentions.0", x)
    x = resnet("decoder.mid_block.resnets.1", x)
    blocks = up_block_channels(config)
    for i in range(len(blocks)):
        for j in range(config.get("layers_per_block", 2) + 1):
            x = resnet(f"decoder.up_blocks.{i}.resnets.{j}", x)
        if i + 1 < len(blocks):
            x = x.repeat(2, axis=2).repeat(2, axis=3)  # nearest, scale 2
            x = conv(f"decoder.up_blocks.{i}.upsamplers.0.conv", x, 1)
    x = silu(norm("decoder.conv_norm_out", x))
    return conv("decoder.conv_out", x, 1)


def denormalize(config, latents):
    """The FLUX and SD3 pipelines' latents / scaling_factor + shift_factor."""
    shift = config.get("shift_factor") or 0.0
    return np.asarray(latents, dtype=np.float64) / config["scaling_factor"] + shift


def to_bytes(pixels):
    """[B, 3, H, W] float pixels -> [B, H, W, 3] uint8, as the pipeline's
    output_type="pil": (x / 2 + 0.5).clamp(0, 1) in float32, then
    (x * 255).round() (half to even) as uint8."""
    x = np.asarray(pixels, dtype=np.float32) / np.float32(2) + np.float32(0.5)
    x = np.clip(x, 0, 1).transpose(0, 2, 3, 1)
    return (x * np.float32(255)).round().astype(np.uint8)
