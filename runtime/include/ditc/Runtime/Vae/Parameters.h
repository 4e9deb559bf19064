//===- Parameters.h - VAE parameters under diffusers' names -----*- C++ -*-===//
//
// What every VAE class shares: the list of parameters a decode reads (names
// and shapes known from config.json alone, before any tensor is read), their
// loading from a snapshot's vae/ folder or their seeded draw, and the count
// of what a decode computed.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_VAE_PARAMETERS_H
#define DITC_RUNTIME_VAE_PARAMETERS_H

#include "ditc/Vae/DecoderConfig.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ditc::checkpoint {
class TransformerWeights;
}

namespace ditc::runtime {

using vae::VaeParameter;

/// The decoder's parameters as float32 tensors, by name.
using VaeParameters = std::map<std::string, at::Tensor>;

/// Reads every parameter of `wanted` from a vae folder's weights (F32, F16
/// or BF16, widened to float32). Throws BadInput naming the weights file
/// and the tensor when one is missing, has another shape or holds a NaN.
VaeParameters loadVaeParameters(const std::vector<VaeParameter> &wanted,
                                const checkpoint::TransformerWeights &weights);

/// Draws every parameter from `seed`: normal values scaled by 1/sqrt(fan-in)
/// for weights, small normal values for biases, norm scales (GroupNorm's
/// `.weight`, RMS norm's `.gamma`) near 1, so that a decode of random
/// weights stays finite (the quick start's picture).
VaeParameters seededVaeParameters(const std::vector<VaeParameter> &wanted,
                                  uint64_t seed);

/// The float32 bytes of `parameters`.
int64_t vaeParameterBytes(const std::vector<VaeParameter> &parameters);

/// What one decode computed: multiply-adds counted as 2 FLOPs, in the
/// convolutions and in the mid block's attention (its projections and its
/// two score products); norms and activations are left out.
struct DecodeWork {
  double convolutionFlops = 0, attentionFlops = 0;
  double flops() const { return convolutionFlops + attentionFlops; }
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_PARAMETERS_H
