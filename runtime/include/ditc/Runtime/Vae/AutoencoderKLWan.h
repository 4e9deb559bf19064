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
#include "ditc/Vae/DecoderConfig.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

// The config and its parameters are ditc/Vae/DecoderConfig.h's.
using vae::parseWanVaeConfig;
using vae::wanUpBlocks;
using vae::WanUpBlock;
using vae::wanUpsamplerName;
using vae::WanVaeConfig;
using vae::wanVaeDecoderParameters;

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
