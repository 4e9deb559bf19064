//===- Initializer.h - deterministic parameters, noise and text -*- C++ -*-===//
//
// Random tensors are a pure function of (seed, name, flat index): element i
// of the tensor named N is the Box-Muller normal of the SplitMix64 bits at
// counters 2i and 2i+1 under the key SHA-256("<seed>:<N>")[0:8]. A rank
// therefore draws exactly its slice of a parameter, bit-identical to the
// same slice of the one-rank run's tensor, without drawing the rest.
// test/Executable/simulate_plan.py computes the same numbers in NumPy.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_INITIALIZER_H
#define DITC_RUNTIME_INITIALIZER_H

#include "ditc/Runtime/Plan/Program.h"

#include <ATen/ATen.h>

namespace ditc::runtime {

/// The 64-bit key of the tensor named `name` under `seed`.
uint64_t streamKey(int64_t seed, const std::string &name);

/// Standard normal number `index` of the stream `key`, in double.
double counterNormal(uint64_t key, uint64_t index);

/// The whole tensor `name` of `shape`, as float32 standard normals.
at::Tensor drawNormal(int64_t seed, const std::string &name,
                      const std::vector<int64_t> &shape);

/// This rank's slice of a parameter (float32): base + scale * normal, with
/// scale 0.5/sqrt(fan_in) for matrices and 0.1 for vectors, and base 1 for
/// a norm's weight vector. Zero for a row-parallel bias off tp coordinate 0.
at::Tensor drawParameter(int64_t seed, const ParamSpec &spec, int64_t tpSize,
                         int64_t tpIndex);

/// The stream name of a parameter of `expert`: the parameter's own name for
/// the first transformer, "<expert>.<name>" for another (Wan2.2 A14B's
/// experts share parameter names but not weights).
std::string parameterStreamName(const std::string &expert, const std::string &name);

/// Latent block `block` of the initial noise as patch tokens
/// [B, S/blocks, pt*ph*pw*C], features in the manifest's feature_order: the noise is drawn in latent layout
/// [B, C, F, H, W] and patchified, so every split sees the same numbers.
at::Tensor drawNoiseBlock(int64_t seed, const Manifest &manifest, int64_t block);

/// Patch tokens [B, S, pt*ph*pw*C] (features in the manifest's
/// feature_order) back to latents [B, C, F, H, W].
at::Tensor unpatchify(const at::Tensor &tokens, const Manifest &manifest);

/// The inverse of unpatchify for one rank: latents [B, C, F, H, W] as patch
/// tokens [B, S / n, pt*ph*pw*C], block `block` of the n latent blocks.
at::Tensor patchifyBlock(const at::Tensor &latents, const Manifest &manifest,
                         int64_t block);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_INITIALIZER_H
