//===- MemoryFit.h - whether a configuration fits its GPUs -------*- C++ -*-===//
//
// The memory-fit rule of `ditc check` and `ditc compile --hardware`: the
// cost model's per-rank peak of the requested configuration, phase by phase
// (the prompt encode, a denoising step, the VAE decode), against the
// profile's memory. A configuration that does not fit is refused before
// anything loads, and the message names the shortfall in GiB and what
// makes up the peak (docs/search.md, "The terms"; docs/legality.md).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_MEMORYFIT_H
#define DITC_COSTMODEL_MEMORYFIT_H

#include "ditc/Analysis/Legality.h"
#include "ditc/CostModel/HardwareProfile.h"
#include "ditc/CostModel/VaeDecodeCost.h"

#include <optional>
#include <string>

namespace ditc {

/// One rank's peak in each phase of a request, in bytes.
struct MemoryPlan {
  /// The step: the transformer's parameters (both experts unless
  /// offloaded), its activations and collective buffers, and the text
  /// encoders when they stay resident.
  double stepBytes = 0;
  double transformerParamBytes = 0, activationBytes = 0, bufferBytes = 0;
  double residentEncoderBytes = 0;
  /// The encode (the transformer's parameters, the encoders and their
  /// activations); 0 when the module holds no encoder graph.
  double encodeBytes = 0;
  /// The decode (the resident parameters, the VAE and its band's
  /// activations); 0 when ditc has no decoder for the VAE.
  double decodeBytes = 0;
  bool twoExperts = false, expertOffload = false, float32 = false;
  double peak() const;
  /// "a denoising step", "the prompt encode" or "the VAE decode".
  const char *peakPhase() const;
};

/// The memory plan of `context`'s deployment (its transformer degrees,
/// text_encoder tp_size and offload, vae_parallel_size, expert offload) on
/// `imported`, an unpartitioned module, for `branchCalls` calls per step.
/// nullopt when the partition passes fail (they report why).
std::optional<MemoryPlan> planMemory(mlir::ModuleOp imported, const LegalityContext &context,
                                     const HardwareProfile &hw, int64_t branchCalls,
                                     const std::string &vaeConfig,
                                     const VaeDecodeShape &vaeShape);

/// memory-fit: an error naming the phase, the peak, its parts, the
/// profile's memory and the shortfall in GiB when the plan's peak exceeds
/// `hw.memoryBytes`; nullopt when it fits.
std::optional<RuleDiagnostic> checkMemoryFit(const MemoryPlan &plan, const HardwareProfile &hw);

} // namespace ditc

#endif // DITC_COSTMODEL_MEMORYFIT_H
