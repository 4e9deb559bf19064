//===- VaeDecodeCost.h - the VAE decode's work, memory and time -*- C++ -*-===//
//
// What decoding one request's latents costs, per band of a patch-parallel
// decode (docs/axes/vae.md): the convolutions' and the mid-block
// attention's FLOPs, the bytes the activations move, the weights, the
// activation peak of the widest band, and the exchanges (halo rows before
// every 3x3 convolution, GroupNorm sums, K/V). The decoder's layers are
// walked from the snapshot's vae/config.json as diffusers builds them; the
// runtime's decoders (runtime/lib/Vae) run the same layers. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_VAEDECODECOST_H
#define DITC_COSTMODEL_VAEDECODECOST_H

#include "ditc/CostModel/HardwareProfile.h"
#include "ditc/CostModel/StepWork.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ditc {

/// The latents one decode takes: [batch, channels, frames, rows, width].
struct VaeDecodeShape {
  int64_t batch = 1, latentFrames = 1, latentRows = 1, latentWidth = 1;
};

struct VaeDecodeWork {
  /// The widest band's compute (Gemm: convolutions and projections;
  /// Attention: the score products; Elementwise: norms and activations).
  ComputeWork compute;
  double convolutionFlops = 0, attentionFlops = 0;
  double paramBytes = 0;
  /// Float32 activations alive at once in the widest band, at their peak.
  double peakActivationBytes = 0;
  /// Bytes each band sends per decode: halo rows (to each neighbour), and
  /// what the all-reduces and all-gathers carry; and how many exchanges.
  double haloBytes = 0, gatherBytes = 0, reduceBytes = 0;
  int64_t haloExchanges = 0, gathers = 0, reductions = 0;
  int64_t bands = 1;
};

/// The decode of `shape` by the VAE of `vaeConfig` (a vae/config.json's
/// text) over `bands` equal bands of latent rows (the widest band is
/// priced). nullopt for a class ditc cannot decode (its cost is unknown).
std::optional<VaeDecodeWork> vaeDecodeWork(const std::string &vaeConfig,
                                           const VaeDecodeShape &shape, int64_t bands);

/// A rank's bytes while it decodes beside `residentBytes` (the
/// transformer's parameters and the encoders not offloaded): the VAE's and
/// its band's peak. `ditc search` and memory-fit count it alike.
inline double decodePeakBytes(const VaeDecodeWork &work, double residentBytes) {
  return residentBytes + work.paramBytes + work.peakActivationBytes;
}

/// Seconds of the decode on `hw`: the widest band's compute (float32 at
/// the profile's rates for `ranksOnHost` busy ranks) plus its exchanges on
/// the intra-node link (the bands are ranks of one replica).
double vaeDecodeSeconds(const VaeDecodeWork &work, const HardwareProfile &hw,
                        int64_t ranksOnHost);

} // namespace ditc

#endif // DITC_COSTMODEL_VAEDECODECOST_H
