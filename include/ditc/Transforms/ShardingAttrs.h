//===- ShardingAttrs.h - attribute names the partitioner passes share -*- C++ -*-===//
#ifndef DITC_TRANSFORMS_SHARDINGATTRS_H
#define DITC_TRANSFORMS_SHARDINGATTRS_H

namespace ditc {

/// Per op: one #dit.sharding per result.
constexpr const char *kShardingAttrName = "dit.sharding";
/// On linears: "column" or "row".
constexpr const char *kTPRoleAttrName = "dit.tp";
/// On TP-split linears: global widths of the pieces of the split dimension.
constexpr const char *kTPSegmentsAttrName = "dit.tp_segments";
/// On norms over a TP-split width: axes to all-reduce the statistics over.
constexpr const char *kReduceStatsAttrName = "dit.reduce_stats_over";
/// On attention: {heads = [axes], rows = "ring"|"kv_gather"|"gather"|"local"|"none"}.
constexpr const char *kAttentionPlanAttrName = "dit.attention_plan";
/// On ring attention after partitioning: the grid axis K/V rotate over.
constexpr const char *kRingAxisAttrName = "dit.ring_axis";

} // namespace ditc

#endif // DITC_TRANSFORMS_SHARDINGATTRS_H
