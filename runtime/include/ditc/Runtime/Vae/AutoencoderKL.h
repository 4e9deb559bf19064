//===- AutoencoderKL.h - diffusers' AutoencoderKL decoder -------*- C++ -*-===//
//
// The image VAE of FLUX.1 and SD3/3.5 (diffusers' AutoencoderKL), decode
// side only: post_quant_conv where the config has it, then the Decoder
// (conv_in, a mid block of resnet, attention and resnet, the up blocks in
// reverse channel order with nearest-neighbour x2 upsampling after every
// block but the last, GroupNorm, SiLU and conv_out). Parameters keep
// diffusers' state-dict names and shapes, so a snapshot's vae/ folder loads
// as it is, and the names a run needs are known from config.json alone
// before any tensor is read.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_VAE_AUTOENCODERKL_H
#define DITC_RUNTIME_VAE_AUTOENCODERKL_H

#include "ditc/Runtime/Vae/Bands.h"
#include "ditc/Runtime/Vae/Parameters.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

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

/// The latents a FLUX or SD3 pipeline hands the VAE:
/// latents / scaling_factor + shift_factor, in float32.
at::Tensor denormalizeLatents(const AutoencoderKLConfig &config,
                              const at::Tensor &latents);

/// AutoencoderKL.decode on `latents` [B, latent_channels, H, W] (already
/// denormalized): pixels [B, out_channels, H * s, W * s] in float32, where s
/// is the spatial compression. `params` holds every decoder parameter.
/// `work`, when given, receives the FLOPs computed. With `bands`, `latents`
/// is this rank's band of rows and so are the pixels (Bands.h).
at::Tensor decodeAutoencoderKL(const AutoencoderKLConfig &config,
                               const VaeParameters &params,
                               const at::Tensor &latents,
                               DecodeWork *work = nullptr, Bands *bands = nullptr);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_AUTOENCODERKL_H
