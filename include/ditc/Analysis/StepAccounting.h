//===- StepAccounting.h - per-step traffic, memory and FLOPs of a role -*- C++ -*-===//
//
// What one rank spends per denoising step running a role program: the bytes
// each collective sends (with the standard algorithms), the parameter slices
// it holds, the peak of its live activations, and the floating-point work of
// its ops. Everything is computed from the partitioned IR alone, so the plan
// emitter and a cost model read the same numbers. docs/plan-format.md
// ("per_step") states the formulas.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_ANALYSIS_STEPACCOUNTING_H
#define DITC_ANALYSIS_STEPACCOUNTING_H

#include "ditc/Transforms/MeshInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc {

/// Per rank and denoising step, for one role program.
struct StepStats {
  std::map<std::string, int64_t> collectives; // by kind
  std::map<std::string, int64_t> bytesSent;   // by axis name ("ring+ulysses")
  int64_t paramBytes = 0;
  int64_t activationBytes = 0; // estimated peak of live values
  /// Floating-point operations (opFlops summed, calls expanded): the
  /// plan's per_step.flops, and what the cost model prices.
  int64_t flops = 0;
};

/// One parameter an op reads, and the slice of it a rank holds.
struct ParamSlice {
  std::string name;           // as in the checkpoint: "blocks.0.attn1.to_q.weight"
  std::vector<int64_t> shape; // global
  /// The dimension split over tp, or -1. The dimension is made of
  /// `segments`, each split evenly over tp.
  int64_t splitDim = -1;
  std::vector<int64_t> segments;
  /// A row-parallel bias: only tp coordinate 0 adds it.
  bool onlyOnTPCoordinate0 = false;
  /// Bytes of the local slice.
  int64_t localBytes = 0;
  /// The shape the checkpoint stores it in, when that differs; else empty.
  std::vector<int64_t> checkpointShape;
};

/// The parameters `op` reads (empty for ops without a `weight`).
std::vector<ParamSlice> parameterSlices(mlir::Operation *op,
                                        const MeshInfo &mesh);

/// The traffic of one communicating op per execution.
struct Traffic {
  std::string kind;  // all_reduce, all_gather, all_to_all, send, recv, shift
  std::string axes;  // axis names joined by "+"
  int64_t count = 0; // collectives issued (a ring attention shifts 2(R-1) times)
  int64_t bytes = 0; // sent by this rank
};

/// The traffic `op` causes itself (not through calls), if it communicates.
std::optional<Traffic> opTraffic(mlir::Operation *op, const MeshInfo &mesh);

/// Floating-point operations of one execution of `op` on this rank's local
/// shapes (0 for calls, data movement and collectives):
///   linear, patch embedding        2 M N K
///   timestep embedding             its two GEMMs
///   adaLN modulation               its GEMM (a table adds one per element)
///   attention                      4 B H Lq Lk d (scores and values); ring
///                                  attention sees every ring member's K/V
///                                  and adds its online-softmax merges
///   norms, elementwise, rope,      one per result element
///   activation, cfg combine,
///   scheduler step
int64_t opFlops(mlir::Operation *op, const MeshInfo &mesh);

/// How ring attention splits one op's keys into calls of the attention
/// kernel: the replicated text rows once, then one block of image rows per
/// ring member; every block after the first is merged into the running
/// output with the online softmax.
struct RingAttentionShape {
  int64_t members = 1;     // ring group size R
  int64_t textKeys = 0;    // keys of the text call (0: no text call)
  int64_t blockKeys = 0;   // image keys per hop
  int64_t merges = 0;      // blocks - 1
  int64_t outputElements = 0; // elements of the op's result (one merge)
};

/// The shape of `op`'s ring attention, or nullopt when it is not one.
std::optional<RingAttentionShape> ringAttentionShape(mlir::Operation *op,
                                                     const MeshInfo &mesh);

/// FLOPs of one online-softmax merge per output element: the running
/// output and the block's output each scaled by their softmax weights and
/// added (2 multiplies, 1 add).
constexpr int64_t kRingMergeFlopsPerElement = 3;

/// The per-step figures of role program `fn`: its own ops plus, for every
/// call, the callee's traffic and FLOPs (once per call) and parameters
/// (each name once). Fails with an error on `fn` when a callee is missing.
mlir::FailureOr<StepStats> accountStep(mlir::func::FuncOp fn,
                                       const MeshInfo &mesh);

} // namespace ditc

#endif // DITC_ANALYSIS_STEPACCOUNTING_H
