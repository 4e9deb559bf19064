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

/// softmax(q k^T / sqrt(C)) v for q, k, v of [N, pixels, C], the scores
/// never holding more than 1024 query rows x pixels values at once. Adds the
/// two score products' FLOPs to `work` (the projections are the caller's).
at::Tensor pixelAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                          DecodeWork &work);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_ATTENTION_H
