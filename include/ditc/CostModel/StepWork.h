//===- StepWork.h - what one rank computes and sends per call -----*- C++ -*-===//
//
// The cost model prices work read from partitioned IR, never re-derived from
// the model's formulas: dit-mesh-layout, dit-propagate-sharding and
// dit-insert-collectives run on the imported module for one (tp, ulysses,
// ring, kv_gather) shape, and the ops of @transformer give each block's
// local FLOPs and bytes per op class, its collectives, its parameters, and
// the activations that cross to the next block (what a pipeline stage cut
// there would send). CFG, PP and DP do not change any op's local shape, so
// the model applies them to this work (CostModel.h). No MLIR in this header.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_STEPWORK_H
#define DITC_COSTMODEL_STEPWORK_H

#include "ditc/Analysis/Deployment.h"
#include "ditc/CostModel/HardwareProfile.h"

#include <array>
#include <map>
#include <vector>

namespace ditc {

/// The op classes the roofline prices differently.
enum class OpClass { Gemm, Attention, Elementwise };
constexpr size_t kNumOpClasses = 3;
const char *opClassName(OpClass opClass);

/// FLOPs and bytes moved through memory, per op class.
struct ComputeWork {
  /// `bytes` counts operands, results and the weights the ops read;
  /// `weightBytes` is the weights' part of it.
  std::array<double, kNumOpClasses> flops{}, bytes{}, weightBytes{};
  /// Attention FLOPs by the keys one call of the attention kernel sees
  /// (the whole key sequence, or one ring hop's block): a kernel's
  /// efficiency grows with the keys per call (HardwareProfile::
  /// attentionHalfKeys). Attention FLOPs not listed here run at full
  /// efficiency.
  std::map<double, double> attentionFlopsByKeys;
  /// Output elements ring attention merges with the online softmax, summed
  /// over merges; each costs HardwareProfile::ringMergeBytes of memory
  /// traffic (its FLOPs are in the elementwise class).
  double ringMergeElements = 0;
  /// Ops the rank launches per call (compute and collectives alike); each
  /// costs HardwareProfile::kernelLaunch. A batched call launches once.
  double launches = 0;
  void add(OpClass c, double f, double b, double weights = 0) {
    flops[size_t(c)] += f;
    bytes[size_t(c)] += b;
    weightBytes[size_t(c)] += weights;
  }
  void add(const ComputeWork &other, double times = 1.0);
  /// The same ops on `batch` requests concatenated along the batch
  /// dimension: batch times the FLOPs and activation bytes, the weights
  /// read once.
  ComputeWork batched(double batch) const;
  double totalFlops() const { return flops[0] + flops[1] + flops[2]; }
};

/// One collective as a rank issues it: `bytes` is the rank's input buffer
/// (for a ring shift, the K and V blocks one hop moves).
struct CollectiveWork {
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::vector<Axis> axes;
  double bytes = 0;
  int64_t hops = 1;          // ring shifts: hops per call
  double overlapFlops = 0;   // ring shifts: attention FLOPs per hop to hide behind
  double overlapKeys = 0;    // ring shifts: keys per call of that attention
  /// An all_reduce completing a row-parallel linear, which the runtime
  /// issues once per row chunk (overlap_row_chunks > 1): the plan's chunk
  /// count, and the reduced tensor's batch elements and rows per element
  /// that tileRowChunks cuts. 0 chunks: one message (collectiveMessages).
  int64_t rowChunks = 0;
  int64_t rowItems = 1;
  int64_t rowsPerItem = 0;
};

struct BlockWork {
  ComputeWork compute;
  std::vector<CollectiveWork> collectives;
  double paramBytes = 0;
  /// Bytes of the values made at or before this block and used after it.
  double cutBytes = 0;
};

/// One call of the transformer on one rank, for one sharding shape.
struct TransformerWork {
  Degrees shape;               // only tp, ulysses, ring, kv_gather matter
  BlockWork prologue;          // embeddings before the first block
  std::vector<BlockWork> blocks; // the ops after the last block count in it
  double peakActivationBytes = 0;
  double latentBytes = 0;      // the rank's slice of one branch's prediction
  double elementBytes = 2;
  /// The rank's slice of the second expert's parameters (@transformer_2,
  /// Wan 2.2 A14B), which stay resident beside the first's as diffusers
  /// keeps both experts on the device; 0 for one expert.
  double otherExpertParamBytes = 0;
};

} // namespace ditc

#endif // DITC_COSTMODEL_STEPWORK_H
