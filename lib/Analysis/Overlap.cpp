//===- Overlap.cpp - Where the runtime may overlap exchanges with compute -===//

#include "ditc/Analysis/Overlap.h"
#include "ditc/Transforms/ShardingAttrs.h"

using namespace mlir;

namespace ditc {

/// How many head groups a Ulysses attention's exchanges may be pipelined
/// in, or 0 when they may not. The runtime may then issue the q/k/v
/// all_to_all and the output all_to_all once per group of heads, so that
/// group g's attention runs while group g + 1's input and group g - 1's
/// output travel (docs/runtime.md, "Overlap"). That needs the exact
/// shape InsertCollectives gives a Ulysses attention, in consecutive ops:
///   %x = shard.all_to_all %stacked split_axis 3 concat_axis 1   [B, S/U, 3, W]
///   %q, %k, %v = dit.unstack %x axis 2
///   %o = dit.attention %q, %k, %v                                (no ring)
///   %y = shard.all_to_all %o split_axis 1 concat_axis 2 (same axes)
/// with %x, %q, %k, %v and %o used nowhere else: each head is then
/// independent of the others from the first exchange to the last, so
/// splitting the heads changes no value.
int64_t pipelinableUlyssesHeads(dit::AttentionOp attention) {
  if (attention->hasAttr(kRingAxisAttrName) || attention->getNumOperands() != 3)
    return 0;
  auto unstack = attention->getOperand(0).getDefiningOp<dit::UnstackOp>();
  if (!unstack || unstack->getNumResults() != 3 || unstack.getAxis() != 2 ||
      unstack->getNextNode() != attention.getOperation())
    return 0;
  for (unsigned i = 0; i < 3; ++i)
    if (attention->getOperand(i) != unstack->getResult(i) ||
        !unstack->getResult(i).hasOneUse())
      return 0;
  auto in = unstack->getOperand(0).getDefiningOp<shard::AllToAllOp>();
  if (!in || !in->hasOneUse() || in->getNextNode() != unstack.getOperation() ||
      in.getSplitAxis() != 3 || in.getConcatAxis() != 1 ||
      cast<ShapedType>(in.getType()).getRank() != 4)
    return 0;
  if (!attention->hasOneUse())
    return 0;
  auto out = dyn_cast<shard::AllToAllOp>(*attention->getUsers().begin());
  if (!out || attention->getNextNode() != out.getOperation() ||
      out.getSplitAxis() != 1 || out.getConcatAxis() != 2 ||
      out.getGridAxes() != in.getGridAxes())
    return 0;
  return int64_t(attention.getNumHeads());
}

/// Chosen, the count is the largest of 4, 3 and 2 dividing the local heads:
/// exposed time is about 1/G of the raw exchange, and each further group
/// adds a message per exchange.
int64_t overlapHeadGroups(dit::AttentionOp attention, int64_t requested) {
  int64_t heads = pipelinableUlyssesHeads(attention);
  if (heads == 0 || requested == 1)
    return 0;
  if (requested > 1)
    return heads % requested == 0 ? requested : 0;
  for (int64_t groups : {4, 3, 2})
    if (heads % groups == 0)
      return groups;
  return 0;
}

/// How many row chunks the all_reduce completing a row-parallel linear may
/// run in, or 0. With the linear just before it and nothing else reading
/// the partial product, the runtime may compute the product chunk by chunk
/// of token rows and all_reduce chunk i while it computes chunk i + 1: each
/// output row depends only on its own input row, and the sum is
/// elementwise, so the chunks' results are the rows of the whole. Up to 4
/// chunks: the runtime cuts only whole GEMM tiles of rows, so fewer where
/// the rows are few.
int64_t overlapRowChunks(shard::AllReduceOp reduce) {
  auto linear = reduce->getOperand(0).getDefiningOp<dit::LinearOp>();
  if (!linear || linear->getNextNode() != reduce.getOperation() ||
      !linear->hasOneUse() || dit::getTPRole(linear) != "row")
    return 0;
  return 4;
}

} // namespace ditc
