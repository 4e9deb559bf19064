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
#include "ditc/Vae/DecoderConfig.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

// The config and its parameters are ditc/Vae/DecoderConfig.h's.
using vae::AutoencoderKLConfig;
using vae::autoencoderKLDecoderParameters;
using vae::parseAutoencoderKLConfig;

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
