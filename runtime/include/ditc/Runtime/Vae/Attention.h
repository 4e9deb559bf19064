//===- Attention.h - the VAE mid blocks' one-head attention -----*- C++ -*-===//
//
// Both VAE families attend with one head as wide as the channels over every
// pixel of an image (AutoencoderKL) or of each frame (Wan). The score matrix
// is pixels x pixels, so it is computed a block of query rows at a time.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_VAE_ATTENTION_H
#define DITC_RUNTIME_VAE_ATTENTION_H

#include "ditc/Runtime/Vae/Parameters.h"

#include <ATen/ATen.h>

namespace ditc::runtime {

/// softmax(q k^T / sqrt(C)) v for q, k, v of [N, pixels, C], `queryRows`
/// queries at a time (one latent row's pixels, so that a band's queries are
/// computed in the same products as on one rank: Bands.h). Adds the two
/// score products' FLOPs to `work` (the projections are the caller's).
at::Tensor pixelAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                          int64_t queryRows, DecodeWork &work);

/// at::linear over `x` ([N, pixels, C]), `tilePixels` pixels at a time
/// (one latent row's: Bands.h).
at::Tensor linearPixelTiles(const at::Tensor &x, const at::Tensor &weight,
                            const at::Tensor &bias, int64_t tilePixels);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_ATTENTION_H
