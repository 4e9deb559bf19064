//===- Overlap.h - Where the runtime may overlap exchanges with compute -*- C++ -*-===//
//
// The partitioned IR shapes in which the runtime may split a collective to
// overlap it with compute: ProgramSerializer writes them into the plan
// (overlap_head_groups, overlap_row_chunks), and the cost model prices the
// split collectives the executor then issues. One decision, read by both.
//
//===----------------------------------------------------------------------===//

#ifndef DITC_ANALYSIS_OVERLAP_H
#define DITC_ANALYSIS_OVERLAP_H

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <cstdint>

namespace ditc {

/// The heads each rank holds in a Ulysses attention whose exchanges may be
/// pipelined in head groups, or 0 when they may not.
int64_t pipelinableUlyssesHeads(mlir::dit::AttentionOp attention);

/// How many head groups a Ulysses attention's exchanges are pipelined in,
/// or 0 when they are not. `requested` is `ditc compile
/// --ulysses-head-groups`: 0 chooses (the largest of 4, 3 and 2 dividing
/// the rank's heads), 1 turns the pipelining off, and G >= 2 asks for G,
/// which must divide the rank's heads (0 when it does not).
int64_t overlapHeadGroups(mlir::dit::AttentionOp attention, int64_t requested = 0);

/// How many row chunks the all_reduce completing a row-parallel linear may
/// run in, or 0 when it may not.
int64_t overlapRowChunks(mlir::shard::AllReduceOp reduce);

} // namespace ditc

#endif // DITC_ANALYSIS_OVERLAP_H
