//===- DitPassAttrs.h - the dit.* attributes passes hand on ------*- C++ -*-===//
//
// Names of the discardable attributes the partitioner passes set on ops,
// and the only functions that read or write them. The op interfaces'
// implementations (DitShardingRules.cpp, DitParameters.cpp, DitCost.cpp)
// and the passes go through these helpers, so a change of an attribute's
// representation is a change here.
//
//===----------------------------------------------------------------------===//
#ifndef DIT_IR_DITPASSATTRS_H
#define DIT_IR_DITPASSATTRS_H

#include "dit/IR/DitAttrs.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::dit {

/// Per op: one #dit.sharding per result.
constexpr const char *kShardingAttrName = "dit.sharding";
/// On linears: #dit.tp_role<column|row>.
constexpr const char *kTPRoleAttrName = "dit.tp";
/// On TP-split linears: global widths of the pieces of the split dimension.
constexpr const char *kTPSegmentsAttrName = "dit.tp_segments";
/// On norms over a TP-split width: #dit.axes to all-reduce the statistics over.
constexpr const char *kReduceStatsAttrName = "dit.reduce_stats_over";
/// On attention: #dit.attention_plan<heads = [axes], rows = ring|kv_gather|gather|local|none>.
constexpr const char *kAttentionPlanAttrName = "dit.attention_plan";
/// On ring attention after partitioning: the grid axis K/V rotate over.
constexpr const char *kRingAxisAttrName = "dit.ring_axis";

/// A linear's tensor-parallel role: "column", "row", or "" when whole.
llvm::StringRef getTPRole(Operation *op);
void setTPRole(Operation *op, llvm::StringRef role);

/// Global widths of the pieces of a TP-split dimension; empty when one.
llvm::SmallVector<int64_t> getTPSegments(Operation *op);
void setTPSegments(Operation *op, llvm::ArrayRef<int64_t> segments);

/// Whether a norm all-reduces its statistics, and over which mesh axes.
bool hasReduceStats(Operation *op);
void setReduceStatsOver(Operation *op, llvm::ArrayRef<llvm::StringRef> axes);

/// How an attention splits: its heads over `heads` (mesh axis names), its
/// key/value rows by `rows` (ring, kv_gather, gather, local or none).
struct AttentionPlan {
  llvm::SmallVector<std::string> heads;
  std::string rows = "none";
};
std::optional<AttentionPlan> getAttentionPlan(Operation *op);
void setAttentionPlan(Operation *op, const AttentionPlan &plan);

/// The pipeline component a function implements (`dit.component`).
std::optional<PipelineComponent> getComponent(Operation *fn);
/// Whether `fn` is a transformer expert (@transformer or @transformer_2).
bool isTransformerFunction(Operation *fn);

/// The grid axis a ring attention rotates K/V over, once partitioned.
std::optional<int16_t> getRingAxis(Operation *op);
void setRingAxis(Operation *op, int16_t gridAxis);

} // namespace mlir::dit

#endif // DIT_IR_DITPASSATTRS_H
