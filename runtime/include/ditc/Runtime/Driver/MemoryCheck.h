//===- MemoryCheck.h - will the plan fit? asked before loading --*- C++ -*-===//
//
// Before the rendezvous, and before --nproc starts a rank, dit-run estimates
// each rank's peak memory from the plan and compares the ranks that share
// this host with the memory the host has left. A run that cannot fit is
// refused with exit 2 and both numbers, instead of dying in the allocator
// halfway through drawing (or loading) its parameters. docs/runtime.md,
// "Memory check", gives the estimate and the figures it was checked on.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_MEMORYCHECK_H
#define DITC_RUNTIME_MEMORYCHECK_H

#include "ditc/Runtime/Device/CpuDevice.h"
#include "ditc/Runtime/Plan/Program.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

/// A rank's estimated peak, in bytes: parameters in the compute dtype,
/// activations, and the runtime's own fixed footprint. All sums saturate at
/// INT64_MAX, so a hostile manifest cannot wrap them.
struct RankMemoryNeed {
  int64_t rank = 0;
  int64_t paramBytes = 0;      // every parameter slice its programs hold
  int64_t activationBytes = 0; // kActivationFactor x the largest per_step figure
  int64_t fixedBytes = 0;      // kRankFixedBytes
  /// A rank that decodes pictures: the VAE's float32 parameters, and its
  /// decode's peak (the band's, with a patch-parallel VAE), which comes
  /// after the steps' activations are freed.
  int64_t vaeParamBytes = 0, decodeBytes = 0;
  /// A rank that encodes prompts (--prompt): its share of the text
  /// encoders' float32 parameters, resident for the run unless
  /// `textOffloaded` (the plan's text_encoder offload frees them before the
  /// steps), and the encode's peak, which comes before the steps'
  /// activations.
  int64_t textParamBytes = 0, encodeBytes = 0;
  bool textOffloaded = false;
  /// Parameters (the transformer's, the VAE's and the text encoders') and
  /// the largest of the encode's, the steps' and the decode's activations:
  /// what the rank's tensors need. Offloaded encoders count only with the
  /// encode.
  int64_t tensorBytes() const;
  int64_t total() const;
};

/// What one rank costs before any parameter: libtorch, the runtime and its
/// thread pool. tiny-wan's ranks (0.1 MiB of parameters) peak at 86-87 MiB
/// when --nproc forks them (they share the launcher's pages of libtorch)
/// and at 158-164 MiB when a launcher starts each afresh; the lower keeps
/// the estimate under a real peak either way.
constexpr int64_t kRankFixedBytes = int64_t(80) << 20;
/// Peak RSS beyond parameters and the fixed footprint was 1.9-4.8 times the
/// plan's activation_bytes (in the compute dtype) on every plan measured,
/// since the executor frees each value after its last use: step workspaces,
/// per-thread attention scores and what the allocator keeps. The estimate
/// takes less than the least of them, so it stays below a real peak.
constexpr int64_t kActivationFactor = 1;

/// The estimate for `rank`, whose programs (program, then program_2) are
/// `programs`, each validated. Parameters are counted exactly from the
/// programs' slices, in `computeElementBytes` per element; activations come
/// from the manifest's per_step.activation_bytes, converted from the plan's
/// element type (per_step.param_bytes over the parameter count) to the
/// compute dtype.
RankMemoryNeed estimateRankMemory(const Manifest &manifest,
                                  const std::vector<const Program *> &programs,
                                  int64_t rank, int64_t computeElementBytes);


/// Refuses (BadInput, exit 2) when the ranks `needs` (those sharing this
/// host) cannot fit: their sum against hostMemoryAvailable(), and each one
/// against addressSpaceAvailable(). With `onDevice` (NCCL), parameters and
/// activations live on the GPU: the host is asked only for the fixed
/// footprint, and checkDeviceMemory asks the device. The message gives
/// both numbers and each rank's need.
void checkHostMemory(const Manifest &manifest,
                     const std::vector<RankMemoryNeed> &needs,
                     const std::string &dtypeName, bool onDevice);

/// On a GPU: refuses when `need` (parameters and activations) exceeds the
/// device's free memory (cudaMemGetInfo). Does nothing when the device
/// cannot say.
void checkDeviceMemory(const Manifest &manifest, const RankMemoryNeed &need,
                       const Device &device, const std::string &dtypeName);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_MEMORYCHECK_H
