//===- AutoencoderKL.cpp - diffusers' AutoencoderKL decoder ---------------===//
#include "ditc/Runtime/Vae/AutoencoderKL.h"
#include "ditc/Runtime/Vae/Attention.h"
#include "ditc/Runtime/Vae/Bands.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <tuple>

namespace ditc::runtime {

namespace {

constexpr double kGroupNormEps = vae::kAutoencoderKLGroupNormEps;
class KLDecoder {
public:
  KLDecoder(const AutoencoderKLConfig &config, const VaeParameters &params,
            DecodeWork &work, Bands *bands)
      : config(config), params(params), work(work),
        bands(bands && bands->count() > 1 ? bands : nullptr) {}

  at::Tensor run(at::Tensor x) {
    latentRows = x.size(2);
    if (config.postQuantConv)
      x = conv("post_quant_conv", x, 0);
    x = conv("decoder.conv_in", x, 1);
    x = resnet("decoder.mid_block.resnets.0", x);
    if (config.midBlockAttention)
      x = attention("decoder.mid_block.attentions.0", x);
    x = resnet("decoder.mid_block.resnets.1", x);
    size_t blocks = config.blockOutChannels.size();
    for (size_t i = 0; i < blocks; ++i) {
      std::string block = "decoder.up_blocks." + std::to_string(i);
      for (int64_t j = 0; j <= config.layersPerBlock; ++j)
        x = resnet(block + ".resnets." + std::to_string(j), x);
      if (i + 1 < blocks) {
        x = at::upsample_nearest2d(x, {x.size(2) * 2, x.size(3) * 2});
        x = conv(block + ".upsamplers.0.conv", x, 1);
      }
    }
    x = silu(groupNorm("decoder.conv_norm_out", x));
    return conv("decoder.conv_out", x, 1);
  }

private:
  const at::Tensor &param(const std::string &name) const {
    auto found = params.find(name);
    if (found == params.end())
      throw std::logic_error("VAE parameter " + name + " was not loaded");
    return found->second;
  }
  /// Output rows per latent row of `x`: the row tiles (Bands.h).
  int64_t tileRows(const at::Tensor &x) const { return x.size(-2) / latentRows; }
  at::Tensor conv(const std::string &name, const at::Tensor &x,
                  int64_t padding) const {
    const at::Tensor &weight = param(name + ".weight");
    // A band reads its neighbours' edge rows where the image pads.
    at::Tensor input = padding == 0 ? x
                       : bands      ? bands->withHalo(x, padding)
                                    : withZeroRows(x, padding);
    at::Tensor out = convolveRowTiles(input, weight, param(name + ".bias"), tileRows(x),
                                      padding, {padding, padding});
    work.convolutionFlops += 2.0 * double(out.numel()) * double(weight[0].numel());
    return out;
  }
  /// SiLU in place: its input is a norm's fresh output, so no new
  /// full-resolution buffer.
  static at::Tensor silu(at::Tensor x) {
    at::silu_(x);
    return x;
  }
  at::Tensor groupNorm(const std::string &name, const at::Tensor &x) const {
    return bandGroupNorm(bands, x, config.normGroups, param(name + ".weight"),
                         param(name + ".bias"), kGroupNormEps);
  }
  at::Tensor resnet(const std::string &name, const at::Tensor &x) const {
    at::Tensor h = conv(name + ".conv1", silu(groupNorm(name + ".norm1", x)), 1);
    h = conv(name + ".conv2", silu(groupNorm(name + ".norm2", h)), 1);
    at::Tensor shortcut = params.count(name + ".conv_shortcut.weight")
                              ? conv(name + ".conv_shortcut", x, 0)
                              : x;
    return shortcut + h;
  }
  /// One head as wide as the channels (diffusers' attention_head_dim is
  /// block_out_channels[-1]), over every pixel of the latent image.
  at::Tensor attention(const std::string &name, const at::Tensor &x) const {
    int64_t batch = x.size(0), channels = x.size(1);
    at::Tensor h = groupNorm(name + ".group_norm", x)
                       .reshape({batch, channels, -1})
                       .transpose(1, 2); // [B, HW, C]
    // One latent row's pixels at a time, as the convolutions (Bands.h).
    int64_t tilePixels = tileRows(x) * x.size(3);
    auto project = [&](const at::Tensor &in, const std::string &layer) {
      return linearPixelTiles(in, param(name + layer + ".weight"), param(name + layer + ".bias"),
                              tilePixels);
    };
    at::Tensor q = project(h, ".to_q"), k = project(h, ".to_k"), v = project(h, ".to_v");
    int64_t pixels = q.size(1);
    // Four C x C projections; pixelAttention counts the score products.
    work.attentionFlops +=
        2.0 * double(batch) * double(pixels) * double(channels) * 4.0 * double(channels);
    if (bands) {
      // The band's queries attend to every pixel: K and V of all bands.
      std::vector<int64_t> sizes;
      for (int64_t rows : bands->latentRows())
        sizes.push_back(rows * x.size(3));
      std::tie(k, v) = bands->gatherKeysValues(k, v, sizes);
    }
    at::Tensor attended = pixelAttention(q, k, v, tilePixels, work);
    at::Tensor out = project(attended, ".to_out.0");
    return out.transpose(1, 2).reshape(x.sizes()) + x;
  }

  const AutoencoderKLConfig &config;
  const VaeParameters &params;
  DecodeWork &work;
  Bands *bands; // nullptr: the whole image on this rank
  int64_t latentRows = 1; // this rank's
};

} // namespace

at::Tensor denormalizeLatents(const AutoencoderKLConfig &config,
                              const at::Tensor &latents) {
  return latents.to(at::kFloat) / config.scalingFactor + config.shiftFactor;
}

at::Tensor decodeAutoencoderKL(const AutoencoderKLConfig &config,
                               const VaeParameters &params,
                               const at::Tensor &latents, DecodeWork *work,
                               Bands *bands) {
  at::NoGradGuard noGrad;
  DecodeWork counted;
  at::Tensor pixels = KLDecoder(config, params, counted, bands)
                          .run(latents.to(at::kFloat).contiguous());
  if (work)
    *work = counted;
  return pixels;
}

} // namespace ditc::runtime
