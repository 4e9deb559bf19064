//===- TextEncodeCost.h - the text encoders' work, memory and time -*- C++ -*-===//
//
// What encoding one request's prompts costs on one rank of the encoding
// group (docs/axes/text-encoder.md): the work is read from @text_encoder's
// graphs after dit-partition-text-encoder has split them over the group's
// tp ranks (WorkExtraction.h), as the transformer's is read from its
// partitioned IR. One call encodes one prompt batch through every encoder;
// a request with classifier-free guidance encodes its negative prompt in a
// second call. The group's first rank then broadcasts the embeddings to the
// rest of its replica. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_TEXTENCODECOST_H
#define DITC_COSTMODEL_TEXTENCODECOST_H

#include "ditc/CostModel/HardwareProfile.h"
#include "ditc/CostModel/StepWork.h"

#include <cstdint>

namespace ditc {

struct TextEncodeWork {
  /// The encoders' tensor-parallel degree this work was partitioned for.
  int64_t tpSize = 1;
  /// One call, every encoder, one rank's share (the op classes as the
  /// transformer's: linears on the GEMM roofline, attention, the rest).
  ComputeWork compute;
  /// One rank's share of every encoder's parameters.
  double paramBytes = 0;
  /// The most bytes of values alive at once while one encoder runs, the
  /// finished encoders' outputs included.
  double peakActivationBytes = 0;
  /// The all-reduces after each row-parallel linear: count and bytes per
  /// call, summed over encoders.
  int64_t allReduces = 0;
  double allReduceBytes = 0;
  /// The embeddings one call hands the transformer (what the broadcast
  /// carries).
  double outputBytes = 0;
  bool bf16 = true;
};

/// Seconds to encode one request's prompts: `calls` calls (guidance
/// branches that run) of `work` at the profile's rates for `ranksOnHost`
/// busy ranks, their all-reduces on the intra-node link, and the broadcast
/// of the embeddings from the group's first rank to the `replicaRanks`
/// ranks of its replica (a pipelined tree: one transfer of the bytes plus a
/// latency per level).
/// A rank's bytes while its encoders run beside `residentBytes` (the
/// transformer's parameters, which dit-run loads before the first
/// request): the encoders' share and their encode's peak. `ditc search`
/// and memory-fit count it alike.
inline double encodePeakBytes(const TextEncodeWork &work, double residentBytes) {
  return residentBytes + work.paramBytes + work.peakActivationBytes;
}

double textEncodeSeconds(const TextEncodeWork &work, const HardwareProfile &hw,
                         int64_t calls, int64_t replicaRanks, int64_t ranksOnHost);

} // namespace ditc

#endif // DITC_COSTMODEL_TEXTENCODECOST_H
