//===- ShardingAttrs.h - attribute names the partitioner passes share -*- C++ -*-===//
//
// The names and accessors live with the op interfaces that set them
// (dit/IR/DitPassAttrs.h); the passes use them under ditc:: as before.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TRANSFORMS_SHARDINGATTRS_H
#define DITC_TRANSFORMS_SHARDINGATTRS_H

#include "dit/IR/DitPassAttrs.h"

namespace ditc {

using mlir::dit::kAttentionPlanAttrName;
using mlir::dit::kReduceStatsAttrName;
using mlir::dit::kRingAxisAttrName;
using mlir::dit::kShardingAttrName;
using mlir::dit::kTPRoleAttrName;
using mlir::dit::kTPSegmentsAttrName;

} // namespace ditc

#endif // DITC_TRANSFORMS_SHARDINGATTRS_H
