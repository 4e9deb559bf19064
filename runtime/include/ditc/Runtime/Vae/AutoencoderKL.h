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

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ditc::checkpoint {
class TransformerWeights;
}

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

/// One decoder parameter under its diffusers name, with its shape.
struct VaeParameter {
  std::string name;
  std::vector<int64_t> shape;
};

/// Every parameter the decode reads, in execution order.
std::vector<VaeParameter>
autoencoderKLDecoderParameters(const AutoencoderKLConfig &config);

/// The decoder's parameters as float32 tensors, by name.
using VaeParameters = std::map<std::string, at::Tensor>;

/// Reads every parameter of `config` from a vae folder's weights (F32, F16
/// or BF16, widened to float32). Throws BadInput naming the weights file
/// and the tensor when one is missing or has another shape.
VaeParameters loadVaeParameters(const std::vector<VaeParameter> &wanted,
                                const checkpoint::TransformerWeights &weights);

/// Draws every parameter from `seed`: normal values scaled by 1/sqrt(fan-in)
/// for weights, small normal values for biases, GroupNorm scales near 1, so
/// that a decode of random weights stays finite (the quick start's picture).
VaeParameters seededVaeParameters(const std::vector<VaeParameter> &wanted,
                                  uint64_t seed);

/// The latents a FLUX or SD3 pipeline hands the VAE:
/// latents / scaling_factor + shift_factor, in float32.
at::Tensor denormalizeLatents(const AutoencoderKLConfig &config,
                              const at::Tensor &latents);

/// What one decode computed: multiply-adds counted as 2 FLOPs, in the
/// convolutions and in the mid block's attention (its projections and its
/// two score products); norms and activations are left out.
struct DecodeWork {
  double convolutionFlops = 0, attentionFlops = 0;
  double flops() const { return convolutionFlops + attentionFlops; }
};

/// AutoencoderKL.decode on `latents` [B, latent_channels, H, W] (already
/// denormalized): pixels [B, out_channels, H * s, W * s] in float32, where s
/// is the spatial compression. `params` holds every decoder parameter.
/// `work`, when given, receives the FLOPs computed.
at::Tensor decodeAutoencoderKL(const AutoencoderKLConfig &config,
                               const VaeParameters &params,
                               const at::Tensor &latents,
                               DecodeWork *work = nullptr);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_AUTOENCODERKL_H
