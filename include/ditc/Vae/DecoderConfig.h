//===- DecoderConfig.h - a VAE's config.json, decode side -------*- C++ -*-===//
//
// What ditc knows of a diffusers VAE before any tensor is read: its
// config.json, validated, the up blocks its decoder builds, and every
// parameter the decode reads under diffusers' state-dict names. No torch and
// no MLIR: the importer builds @vae_decode's graph from it, the cost model
// prices that graph, and dit-run's decoders (runtime/lib/Vae) run it, so the
// three read one description of the decoder.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_VAE_DECODERCONFIG_H
#define DITC_VAE_DECODERCONFIG_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ditc::vae {

/// One decoder parameter under its diffusers name, with its shape.
struct VaeParameter {
  std::string name;
  std::vector<int64_t> shape;
};

//===----------------------------------------------------------------------===//
// AutoencoderKL (FLUX.1, SD3/3.5)
//===----------------------------------------------------------------------===//

/// diffusers' Decoder passes eps=1e-6 to every GroupNorm it builds (the
/// resnets', the attention's and conv_norm_out), whatever the config says.
constexpr double kAutoencoderKLGroupNormEps = 1e-6;

/// The decode side of an AutoencoderKL config.json, validated.
struct AutoencoderKLConfig {
  std::string path; // config.json, for messages
  int64_t latentChannels = 0, outChannels = 0, layersPerBlock = 0;
  int64_t normGroups = 0;
  std::vector<int64_t> blockOutChannels;
  bool postQuantConv = true, midBlockAttention = true;
  /// The pipeline's latents / scaling_factor + shift_factor (FLUX, SD3).
  double scalingFactor = 1.0, shiftFactor = 0.0;

  /// Pixels per latent row or column: 2^(up blocks - 1).
  int64_t spatialCompression() const;
  /// Channels into and out of up block `i`, as diffusers' Decoder builds
  /// them: block i turns reversed(block_out_channels)[i - 1] (the mid
  /// block's width for i = 0) into reversed(block_out_channels)[i].
  std::pair<int64_t, int64_t> upBlockChannels(size_t i) const;
};

/// Reads and checks `config` (parsed from `path`): `_class_name` is
/// AutoencoderKL, every up block is UpDecoderBlock2D, act_fn is silu, and
/// every channel count is positive and divisible by norm_num_groups. Throws
/// BadInput naming the file, the field, the value and what is allowed.
AutoencoderKLConfig parseAutoencoderKLConfig(const nlohmann::json &config,
                                             const std::string &path);

/// Every parameter the decode reads, in execution order.
std::vector<VaeParameter>
autoencoderKLDecoderParameters(const AutoencoderKLConfig &config);

//===----------------------------------------------------------------------===//
// AutoencoderKLWan (Wan 2.1, 2.2) and AutoencoderKLQwenImage
//===----------------------------------------------------------------------===//

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

/// One up block as WanDecoder3d (or QwenImageDecoder3d) builds it.
struct WanUpBlock {
  int64_t in = 0, out = 0;
  bool upsamples = false, temporal = false;
  /// Output channels of the resample's Conv2d: out (residual) or out / 2.
  int64_t resampleOut = 0;
};

/// The decoder's up blocks, in execution order.
std::vector<WanUpBlock> wanUpBlocks(const WanVaeConfig &config);

/// The resample module of up block `block`: "upsampler" in Wan 2.2's
/// residual blocks, "upsamplers.0" otherwise.
std::string wanUpsamplerName(const WanVaeConfig &config, size_t block);

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

} // namespace ditc::vae

#endif // DITC_VAE_DECODERCONFIG_H
