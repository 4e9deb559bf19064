//===- AutoencoderKLWan.cpp - diffusers' Wan and Qwen-Image VAEs ----------===//
#include "ditc/Runtime/Vae/AutoencoderKLWan.h"
#include "ditc/Runtime/Vae/Attention.h"
#include "ditc/Runtime/Vae/Bands.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <tuple>

namespace ditc::runtime {

namespace {

// F.normalize's default eps: the norm is clamped below at 1e-12.
constexpr double kRmsNormEps = 1e-12;
// CACHE_T in diffusers: a causal convolution keeps its last two input frames.
constexpr int64_t kCachedFrames = 2;

/// The decoder's per-chunk walk, with the feature cache that carries the
/// last frames of every causal convolution from one chunk to the next.
class WanDecoder {
public:
  /// `latentRows`: the latent rows this rank decodes (its band's).
  WanDecoder(const WanVaeConfig &config, const VaeParameters &params,
             DecodeWork &work, Bands *bands, int64_t latentRows)
      : config(config), params(params), work(work), blocks(wanUpBlocks(config)),
        bands(bands && bands->count() > 1 ? bands : nullptr),
        latentRows(latentRows) {}

  /// One latent frame [B, z, 1, h, w] (after post_quant_conv) to its
  /// frames of pixels; `firstChunk` for latent frame 0.
  at::Tensor chunk(at::Tensor x, bool firstChunk) {
    slot = 0;
    x = cachedConv("decoder.conv_in", x);
    x = resnet("decoder.mid_block.resnets.0", x);
    x = attention("decoder.mid_block.attentions.0", x);
    x = resnet("decoder.mid_block.resnets.1", x);
    for (size_t i = 0; i < blocks.size(); ++i)
      x = upBlock(i, x, firstChunk);
    x = at::silu(rmsNorm("decoder.norm_out", x));
    return cachedConv("decoder.conv_out", x);
  }

  at::Tensor pointwiseConv(const std::string &name, const at::Tensor &x) {
    return conv3d(name, x, at::Tensor(), 0, 0);
  }

private:
  /// A cache slot: empty (diffusers' None), "Rep" (an upsample3d that has
  /// seen only the first chunk), or the last frames seen.
  struct Slot {
    bool rep = false;
    at::Tensor frames;
  };

  const at::Tensor &param(const std::string &name) const {
    auto found = params.find(name);
    if (found == params.end())
      throw std::logic_error("VAE parameter " + name + " was not loaded");
    return found->second;
  }

  Slot &nextSlot() {
    if (slot == cache.size())
      cache.emplace_back();
    return cache[slot++];
  }

  /// WanCausalConv3d: zero padding of 2 x pad frames in front (less the
  /// cached frames put there instead) and `pad` columns on each side; `x`
  /// already holds `halo` rows above and below (a band's neighbours' or
  /// zeros). One latent row's output rows at a time (Bands.h).
  at::Tensor conv3d(const std::string &name, at::Tensor x,
                    const at::Tensor &cached, int64_t pad, int64_t halo) {
    const at::Tensor &weight = param(name + ".weight");
    int64_t frontFrames = 2 * ((weight.size(2) - 1) / 2);
    if (cached.defined() && frontFrames > 0) {
      x = at::cat({cached, x}, 2);
      frontFrames -= cached.size(2);
    }
    if (frontFrames > 0 || pad > 0)
      x = at::constant_pad_nd(x, {pad, pad, 0, 0, frontFrames, 0});
    int64_t tileRows = (x.size(3) - 2 * halo) / latentRows;
    at::Tensor out =
        convolveRowTiles(x, weight, param(name + ".bias"), tileRows, halo, {0, 0, 0});
    work.convolutionFlops += 2.0 * double(out.numel()) * double(weight[0].numel());
    return out;
  }

  /// The last two input frames, for the next chunk: where this chunk has
  /// one frame, the previous cache's last frame goes before it.
  static at::Tensor framesToCache(const at::Tensor &x, const Slot &previous) {
    int64_t t = x.size(2);
    at::Tensor kept = x.narrow(2, t - std::min(kCachedFrames, t), std::min(kCachedFrames, t)).clone();
    if (kept.size(2) < kCachedFrames && previous.frames.defined())
      kept = at::cat({previous.frames.narrow(2, previous.frames.size(2) - 1, 1), kept}, 2);
    return kept;
  }

  /// A causal convolution with a feature-cache slot (3x3x3, padding 1).
  /// A band caches its frames with their halo rows, so the next chunk's
  /// cached frames need no exchange.
  at::Tensor cachedConv(const std::string &name, const at::Tensor &input) {
    Slot &state = nextSlot();
    at::Tensor x = bands ? bands->withHalo(input, 1) : withZeroRows(input, 1);
    at::Tensor keep = framesToCache(x, state);
    at::Tensor out = conv3d(name, x, state.frames, 1, 1);
    state.frames = keep;
    return out;
  }

  /// WanRMS_norm over channels (dim 1): x / max(|x|_2, eps) * sqrt(C) * gamma.
  at::Tensor rmsNorm(const std::string &name, const at::Tensor &x) const {
    at::Tensor norm = at::linalg_vector_norm(x, 2, {1}, /*keepdim=*/true)
                          .clamp_min(kRmsNormEps);
    return x / norm * std::sqrt(double(x.size(1))) * param(name + ".gamma");
  }

  at::Tensor resnet(const std::string &name, const at::Tensor &x) {
    at::Tensor shortcut = params.count(name + ".conv_shortcut.weight")
                              ? pointwiseConv(name + ".conv_shortcut", x)
                              : x;
    at::Tensor h = cachedConv(name + ".conv1", at::silu(rmsNorm(name + ".norm1", x)));
    h = cachedConv(name + ".conv2", at::silu(rmsNorm(name + ".norm2", h)));
    return h + shortcut;
  }

  /// WanAttentionBlock: one head as wide as the channels, over the pixels
  /// of each frame separately.
  at::Tensor attention(const std::string &name, const at::Tensor &x) {
    int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
    at::Tensor frames = x.permute({0, 2, 1, 3, 4}).reshape({b * t, c, h, w});
    at::Tensor normed = rmsNorm(name + ".norm", frames);
    int64_t tileRows = h / latentRows;
    at::Tensor qkv = convolveRowTiles(normed, param(name + ".to_qkv.weight"),
                                      param(name + ".to_qkv.bias"), tileRows, 0, {0, 0})
                         .reshape({b * t, 3 * c, h * w})
                         .transpose(1, 2); // [bt, hw, 3c]
    at::Tensor q = qkv.narrow(2, 0, c), k = qkv.narrow(2, c, c), v = qkv.narrow(2, 2 * c, c);
    int64_t pixels = h * w;
    // Four C x C projections (to_qkv is three); pixelAttention counts the
    // score products.
    work.attentionFlops +=
        2.0 * double(b * t) * double(pixels) * double(c) * 4.0 * double(c);
    if (bands) {
      // The band's queries attend to every pixel of their frame.
      std::vector<int64_t> sizes;
      for (int64_t rows : bands->latentRows())
        sizes.push_back(rows * w);
      std::tie(k, v) = bands->gatherKeysValues(k, v, sizes);
    }
    at::Tensor attended = pixelAttention(q, k, v, tileRows * w, work)
                              .transpose(1, 2)
                              .reshape({b * t, c, h, w});
    at::Tensor out = convolveRowTiles(attended, param(name + ".proj.weight"),
                                      param(name + ".proj.bias"), tileRows, 0, {0, 0});
    return out.reshape({b, t, c, h, w}).permute({0, 2, 1, 3, 4}) + x;
  }

  /// WanResample in upsample2d or upsample3d mode.
  at::Tensor resample(const std::string &name, at::Tensor x, bool temporal) {
    int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
    if (temporal) {
      Slot &state = nextSlot();
      if (!state.rep && !state.frames.defined()) {
        // The first chunk: its frames are not doubled.
        state.rep = true;
      } else {
        // After "Rep" there is no previous frame: zeros stand for it.
        at::Tensor keep = framesToCache(x, state);
        if (keep.size(2) < kCachedFrames)
          keep = at::cat({at::zeros_like(keep), keep}, 2);
        // "Rep" convolves with zero padding, as if the cache held zeros.
        x = conv3d(name + ".time_conv", x, state.rep ? at::Tensor() : state.frames, 0, 0);
        state.rep = false;
        state.frames = keep;
        // Channels [0, c) are each frame's first half-step, [c, 2c) its
        // second: interleave them in time.
        x = x.reshape({b, 2, c, t, h, w}).permute({0, 2, 3, 1, 4, 5}).reshape({b, c, 2 * t, h, w});
        t *= 2;
      }
    }
    at::Tensor frames = x.permute({0, 2, 1, 3, 4}).reshape({b * t, c, h, w});
    // nearest-exact at scale 2 picks source index floor((i + 0.5) / 2) = i / 2.
    frames = at::upsample_nearest2d(frames, {2 * h, 2 * w});
    const at::Tensor &weight = param(name + ".resample.1.weight");
    frames = convolveRowTiles(bands ? bands->withHalo(frames, 1) : withZeroRows(frames, 1),
                              weight, param(name + ".resample.1.bias"),
                              frames.size(2) / latentRows, 1, {0, 1});
    work.convolutionFlops += 2.0 * double(frames.numel()) * double(weight[0].numel());
    int64_t outC = frames.size(1);
    return frames.reshape({b, t, outC, 2 * h, 2 * w}).permute({0, 2, 1, 3, 4});
  }

  /// DupUp3D: each input channel repeated, then spread over a
  /// factor_t x 2 x 2 block of (frames, rows, columns) of the output
  /// channels; the first chunk keeps only its last frame of each block.
  static at::Tensor dupUp(const at::Tensor &x, int64_t outChannels,
                          int64_t factorT, bool firstChunk) {
    int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
    int64_t factor = factorT * 4;
    int64_t repeats = outChannels * factor / c;
    at::Tensor y = x.repeat_interleave(repeats, 1)
                       .reshape({b, outChannels, factorT, 2, 2, t, h, w})
                       .permute({0, 1, 5, 2, 6, 3, 7, 4})
                       .reshape({b, outChannels, t * factorT, h * 2, w * 2});
    if (firstChunk)
      y = y.narrow(2, factorT - 1, y.size(2) - (factorT - 1));
    return y;
  }

  at::Tensor upBlock(size_t i, at::Tensor x, bool firstChunk) {
    const WanUpBlock &block = blocks[i];
    std::string name = "decoder.up_blocks." + std::to_string(i);
    at::Tensor input = x;
    for (int64_t j = 0; j <= config.numResBlocks; ++j)
      x = resnet(name + ".resnets." + std::to_string(j), x);
    if (block.upsamples)
      x = resample(wanUpsamplerName(config, i), x, block.temporal);
    if (config.residual && block.upsamples)
      x = x + dupUp(input, block.out, block.temporal ? 2 : 1, firstChunk);
    return x;
  }

  const WanVaeConfig &config;
  const VaeParameters &params;
  DecodeWork &work;
  std::vector<WanUpBlock> blocks;
  Bands *bands; // nullptr: the whole image on this rank
  int64_t latentRows;
  std::vector<Slot> cache;
  size_t slot = 0;
};

/// diffusers' unpatchify: [B, C*p*p, F, H, W] to [B, C, F, H*p, W*p], the
/// channel index being c*p*p + q*p + r for row offset r and column offset q.
at::Tensor unpatchifyPixels(const at::Tensor &x, int64_t p) {
  if (p == 1)
    return x;
  int64_t b = x.size(0), f = x.size(2), h = x.size(3), w = x.size(4);
  int64_t c = x.size(1) / (p * p);
  return x.reshape({b, c, p, p, f, h, w})
      .permute({0, 1, 4, 5, 3, 6, 2})
      .reshape({b, c, f, h * p, w * p});
}

} // namespace

int64_t wanVaeDecodePeakBytes(const WanVaeConfig &config, int64_t batch,
                              int64_t frames, int64_t height, int64_t width) {
  long double widestChunk = 0, caches = 0;
  long double pixels = (long double)height * width;
  long double chunkFrames = 1;
  auto convCache = [&](long double channels) { caches += 2.0L * channels * pixels; };
  std::vector<WanUpBlock> blocks = wanUpBlocks(config);
  convCache(config.zDim);
  // conv_in and the mid block's four convolutions.
  for (int k = 0; k < 4; ++k)
    convCache(blocks.front().in);
  for (const WanUpBlock &block : blocks) {
    widestChunk = std::max(widestChunk, (long double)std::max(block.in, block.out) * pixels * chunkFrames);
    for (int64_t j = 0; j <= config.numResBlocks; ++j) {
      convCache(j == 0 ? block.in : block.out);
      convCache(block.out);
    }
    if (block.upsamples) {
      if (block.temporal) {
        convCache(block.out);
        chunkFrames *= 2;
      }
      // The upsampled frames before the resample's convolution.
      pixels *= 4;
      widestChunk = std::max(widestChunk, (long double)block.out * pixels * chunkFrames);
    }
  }
  convCache(blocks.back().out);
  long double video = (long double)config.convOutChannels * config.pixelFrames(frames) * pixels;
  // The widest chunk tensor five times over (a resnet's input, norm,
  // activation, padded copy and output are alive together), every cache,
  // the decoded video, all float32 and per batch item.
  long double bytes = (5.0L * widestChunk + caches + video) * batch * 4.0L;
  return bytes > 9e18L ? INT64_MAX : int64_t(bytes);
}

at::Tensor denormalizeWanLatents(const WanVaeConfig &config, const at::Tensor &latents) {
  auto stats = [&](const std::vector<double> &values) {
    return at::tensor(std::vector<float>(values.begin(), values.end()), at::kFloat)
        .reshape({1, config.zDim, 1, 1, 1});
  };
  // The pipelines write latents / (1 / std) + mean; in float32 that is not
  // always bitwise latents * std, so it is computed the same way.
  at::Tensor inverseStd = 1.0 / stats(config.latentsStd);
  return latents.to(at::kFloat) / inverseStd + stats(config.latentsMean);
}

at::Tensor decodeWanVae(const WanVaeConfig &config, const VaeParameters &params,
                        const at::Tensor &latents, DecodeWork *work, Bands *bands) {
  at::NoGradGuard noGrad;
  DecodeWork counted;
  WanDecoder decoder(config, params, counted, bands, latents.size(3));
  at::Tensor x = decoder.pointwiseConv("post_quant_conv", latents.to(at::kFloat).contiguous());
  std::vector<at::Tensor> chunks;
  for (int64_t i = 0; i < x.size(2); ++i)
    chunks.push_back(decoder.chunk(x.narrow(2, i, 1), i == 0));
  at::Tensor pixels =
      unpatchifyPixels(at::cat(chunks, 2), config.patchSize).clamp(-1.0, 1.0);
  if (work)
    *work = counted;
  return pixels.contiguous();
}

} // namespace ditc::runtime
