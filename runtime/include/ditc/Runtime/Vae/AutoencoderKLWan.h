//===- AutoencoderKLWan.h - diffusers' Wan and Qwen-Image VAEs --*- C++ -*-===//
//
// The causal video VAE of Wan 2.1 and 2.2 (diffusers' AutoencoderKLWan) and
// Qwen-Image's copy of Wan 2.1's (AutoencoderKLQwenImage), decode side only.
// The decode runs one latent frame at a time, as AutoencoderKLWan._decode
// does: every causal 3-D convolution keeps the last two frames it saw (the
// feature cache), so memory holds one chunk (1 frame for the first latent
// frame, 4 for each later one) plus the caches, never the whole video.
// Also: RMS norm over channels, per-frame single-head attention in the mid
// block, upsample2d/upsample3d resamples (time_conv doubles the frames of
// every chunk but the first), Wan 2.2's residual up blocks (DupUp3D
// shortcut) and its patchified output, and the pipelines' denormalisation
// latents * latents_std + latents_mean.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_VAE_AUTOENCODERKLWAN_H
#define DITC_RUNTIME_VAE_AUTOENCODERKLWAN_H

#include "ditc/Runtime/Vae/Bands.h"
#include "ditc/Runtime/Vae/Parameters.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

/// The decode side of an AutoencoderKLWan or AutoencoderKLQwenImage
/// config.json, validated.
struct WanVaeConfig {
  std::string path;      // config.json, for messages
  std::string className; // AutoencoderKLWan or AutoencoderKLQwenImage
  int64_t zDim = 0;
  /// decoder_base_dim where the config has it (Wan 2.2), else base_dim.
  int64_t decoderBaseDim = 0;
  std::vector<int64_t> dimMult;
  int64_t numResBlocks = 0;
  /// temperal_downsample reversed: up block i doubles the frames when true.
  std::vector<bool> temporalUpsample;
  /// Wan 2.2's residual up blocks (is_residual).
  bool residual = false;
  /// Channels of conv_out: out_channels (Wan) or input_channels (Qwen).
  int64_t convOutChannels = 3;
  /// patch_size (Wan 2.2 TI2V: 2); 1 when the config has none.
  int64_t patchSize = 1;
  std::vector<double> latentsMean, latentsStd;

  /// Channels of a decoded pixel: conv_out's channels over patch_size^2.
  int64_t pixelChannels() const;
  /// Pixels per latent row or column: 2^(up blocks that upsample) x patch.
  int64_t spatialCompression() const;
  /// Frames decoded from `latentFrames`: 1 + (F - 1) x 2^(temporal ups).
  int64_t pixelFrames(int64_t latentFrames) const;
};

/// Reads and checks `config` (parsed from `path`): the class, the channel
/// multipliers and res-block count within bounds, one temperal_downsample
/// entry per upsampling block, latents_mean and latents_std of z_dim
/// entries (every std positive), and a patch_size that divides the output
/// channels. Throws BadInput naming the file, the field, the value and what
/// is allowed.
WanVaeConfig parseWanVaeConfig(const nlohmann::json &config,
                               const std::string &path);

/// Every parameter the decode reads, in execution order, under diffusers'
/// names ("decoder.up_blocks.0.upsamplers.0.time_conv.weight", ...).
std::vector<VaeParameter> wanVaeDecoderParameters(const WanVaeConfig &config);

/// Bytes the decode holds at its peak for a batch of `batch` latents of
/// `frames` x `height` x `width`: the widest chunk activation (4 frames),
/// every convolution's two-frame cache, and the decoded video.
int64_t wanVaeDecodePeakBytes(const WanVaeConfig &config, int64_t batch,
                              int64_t frames, int64_t height, int64_t width);

/// The pipelines' step before the decode (Wan, Qwen-Image):
/// latents * latents_std + latents_mean per channel, in float32.
at::Tensor denormalizeWanLatents(const WanVaeConfig &config,
                                 const at::Tensor &latents);

/// AutoencoderKLWan.decode (or AutoencoderKLQwenImage's) on `latents`
/// [B, z_dim, F, H, W], already denormalized: pixels
/// [B, pixelChannels, pixelFrames(F), H * s, W * s] in float32, clamped to
/// [-1, 1] as diffusers' _decode clamps. `work`, when given, receives the
/// FLOPs computed. With `bands`, `latents` is this rank's band of rows and
/// so are the pixels (Bands.h).
at::Tensor decodeWanVae(const WanVaeConfig &config, const VaeParameters &params,
                        const at::Tensor &latents, DecodeWork *work = nullptr,
                        Bands *bands = nullptr);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_AUTOENCODERKLWAN_H
