//===- DitShardingRules.cpp - each op's sharding rule ---------------------===//
//
// DitShardableOpInterface for every op that can appear in a transformer:
// how dit-propagate-sharding decides its results' shardings and which pass
// attributes it records, and how dit-insert-collectives rewrites it to one
// rank's program. Ops with an affine iteration space also implement
// upstream shard::ShardingInterface (loops and indexing maps), which the
// token propagation of norms, rope and modulate follows.
//
//===----------------------------------------------------------------------===//
#include "dit/IR/DitShardingRules.h"
#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::dit;

//===----------------------------------------------------------------------===//
// Upstream ShardingInterface: loops and indexing maps
//===----------------------------------------------------------------------===//

/// `rank` parallel loops over a value's dimensions.
static SmallVector<utils::IteratorType> parallelLoops(Value v) {
  return SmallVector<utils::IteratorType>(
      cast<RankedTensorType>(v.getType()).getRank(),
      utils::IteratorType::parallel);
}

/// The identity map over `rank` loops, once per value.
static SmallVector<AffineMap> identityMaps(MLIRContext *ctx, int64_t rank,
                                           unsigned count) {
  return SmallVector<AffineMap>(count,
                                AffineMap::getMultiDimIdentityMap(rank, ctx));
}

/// The first `rank` of `loops` loops, in order.
static AffineMap leadingLoops(MLIRContext *ctx, int64_t loops, int64_t rank) {
  SmallVector<AffineExpr> dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(loops, 0, dims, ctx);
}

/// A `[B, N, D]` adaLN chunk table read by an elementwise op over
/// `[B, S, D]` (rank 3): the batch and feature loops index it, the token
/// loop does not (every token reads the same chunk). Its chunk dimension
/// gets a loop of its own, the last (loop `rank`), which no result reads:
/// upstream maps admit no constant index, and the chunks are only ever
/// replicated.
static AffineMap chunkTableMap(MLIRContext *ctx, int64_t rank) {
  return AffineMap::get(rank + 1, 0,
                        {getAffineDimExpr(0, ctx), getAffineDimExpr(rank, ctx),
                         getAffineDimExpr(rank - 1, ctx)},
                        ctx);
}

static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

// linear: loops (batch..., n, k); k is a sum reduction. The weight is an
// attribute, not an operand, so the maps relate the input and the result.
SmallVector<utils::IteratorType> LinearOp::getLoopIteratorTypes() {
  SmallVector<utils::IteratorType> loops = parallelLoops(getResult());
  loops.push_back(utils::IteratorType::reduction);
  return loops;
}

SmallVector<shard::ReductionKind> LinearOp::getReductionLoopIteratorKinds() {
  return {shard::ReductionKind::Sum};
}

SmallVector<AffineMap> LinearOp::getIndexingMaps() {
  MLIRContext *ctx = getContext();
  int64_t rank = rankOf(getResult()), loops = rank + 1;
  SmallVector<AffineExpr> in, out;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    in.push_back(getAffineDimExpr(d, ctx));
    out.push_back(getAffineDimExpr(d, ctx));
  }
  in.push_back(getAffineDimExpr(rank, ctx));      // k
  out.push_back(getAffineDimExpr(rank - 1, ctx)); // n
  return {AffineMap::get(loops, 0, in, ctx), AffineMap::get(loops, 0, out, ctx)};
}

// Norms: every loop parallel. A feature split is legal only with the
// statistics all-reduced (dit.reduce_stats_over), which the dit rule adds.
#define DIT_IDENTITY_SHARDING(Op)                                              \
  SmallVector<utils::IteratorType> Op::getLoopIteratorTypes() {                \
    return parallelLoops(getResult());                                         \
  }                                                                            \
  SmallVector<AffineMap> Op::getIndexingMaps() {                               \
    return identityMaps(getContext(), rankOf(getResult()), 2);                 \
  }
DIT_IDENTITY_SHARDING(LayerNormOp)
DIT_IDENTITY_SHARDING(RMSNormOp)
DIT_IDENTITY_SHARDING(RotaryEmbeddingOp)
DIT_IDENTITY_SHARDING(SincosPosEmbedOp)
// A gated activation reads two halves of its input's features; TP splits
// each half separately (dit.tp_segments), so the feature loop indexes both.
DIT_IDENTITY_SHARDING(ActivationOp)
#undef DIT_IDENTITY_SHARDING

/// The loops of an op over `[B, S, D]` that also reads a chunk table: one
/// per result dimension, then the table's chunk loop.
static SmallVector<utils::IteratorType> loopsWithChunks(Value result) {
  SmallVector<utils::IteratorType> loops = parallelLoops(result);
  loops.push_back(utils::IteratorType::parallel);
  return loops;
}

SmallVector<utils::IteratorType> ModulateOp::getLoopIteratorTypes() {
  return loopsWithChunks(getResult());
}

SmallVector<AffineMap> ModulateOp::getIndexingMaps() {
  int64_t rank = rankOf(getResult());
  AffineMap x = leadingLoops(getContext(), rank + 1, rank);
  return {x, chunkTableMap(getContext(), rank), x};
}

SmallVector<utils::IteratorType> ResidualAddOp::getLoopIteratorTypes() {
  return getGate() ? loopsWithChunks(getResult()) : parallelLoops(getResult());
}

SmallVector<AffineMap> ResidualAddOp::getIndexingMaps() {
  int64_t rank = rankOf(getResult());
  if (!getGate())
    return identityMaps(getContext(), rank, 3);
  AffineMap x = leadingLoops(getContext(), rank + 1, rank);
  return {x, x, chunkTableMap(getContext(), rank), x};
}

//===----------------------------------------------------------------------===//
// Embeddings and conditioning: replicated features
//===----------------------------------------------------------------------===//

LogicalResult TimestepEmbeddingOp::propagateSharding(ShardingContext &context) {
  context.annotate(*this, {ValueSharding()});
  return success();
}

/// A pooling of replicated rows is replicated; sharded rows or features
/// would each need an all-reduce the op does not perform.
static LogicalResult propagatePooling(Operation *op, Value input,
                                      ShardingContext &context) {
  ValueSharding in = context.of(input);
  if (in.tpSplit || in.tokens == TokenKind::Image)
    return op->emitError() << "pools a sequence that is split over ranks; "
                              "only a replicated sequence (the text) may be "
                              "pooled";
  context.annotate(op, {ValueSharding()});
  return success();
}

LogicalResult TokenMeanOp::propagateSharding(ShardingContext &context) {
  return propagatePooling(*this, getInput(), context);
}

LogicalResult AttentionPoolOp::propagateSharding(ShardingContext &context) {
  return propagatePooling(*this, getInput(), context);
}

LogicalResult AdaLNModulationOp::propagateSharding(ShardingContext &context) {
  context.annotate(*this, {ValueSharding()});
  return success();
}

LogicalResult PatchEmbedOp::propagateSharding(ShardingContext &context) {
  ValueSharding v;
  v.tokens = TokenKind::Image;
  context.annotate(*this, {v});
  return success();
}

/// A rank embeds its block of the token grid; a position table is indexed
/// by the block's place in the grid.
LogicalResult PatchEmbedOp::partition(PartitionContext &context) {
  if (failed(context.setLocalTypes(*this)))
    return failure();
  auto sharding = cast<ShardingAttr>(
      (*this)->getAttrOfType<ArrayAttr>(kShardingAttrName)[0]);
  if (getPosEmbed() && !sharding.axesOf(1).empty())
    setSequenceShards(context.getMesh().sequenceShards());
  return success();
}

//===----------------------------------------------------------------------===//
// Linear: the tensor-parallel pairs
//===----------------------------------------------------------------------===//

/// Does `linear`'s result reach attention q/k/v, or an MLP activation,
/// through ops that keep the feature layout (norms, rope, stream concat)?
/// Such a linear is the column-parallel half of a TP pair.
/// `reason` names what it feeds, for explanations.
static bool feedsHeadsOrMLP(LinearOp linear, bool &feedsGated,
                            std::string &reason) {
  SmallVector<Value> work{linear.getResult()};
  feedsGated = false;
  bool found = false;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<AttentionOp>(user)) {
        found = true;
        reason = "attention heads";
      } else if (auto act = dyn_cast<ActivationOp>(user)) {
        found = true;
        feedsGated |= act.getKind() == ActivationKind::SwiGLU ||
                      act.getKind() == ActivationKind::GeGLU;
        reason = feedsGated ? "a gated MLP activation (its two halves split "
                              "separately)"
                            : "an MLP activation";
      } else if (isa<RMSNormOp, LayerNormOp, RotaryEmbeddingOp,
                     ConcatStreamsOp>(user)) {
        work.push_back(user->getResult(0));
      }
    }
  }
  return found;
}

LogicalResult LinearOp::propagateSharding(ShardingContext &context) {
  int64_t tp = context.tp();
  ValueSharding in = context.of(getInput()), out = in;
  out.tpSplit = false;
  out.segments.clear();
  int64_t width = lastDim(getResult());
  if (in.tpSplit && tp > 1) {
    setTPRole(*this, "row");
    if (in.segments.size() > 1)
      setTPSegments(*this, in.segments);
    context.explain(*this, "'" + getWeight() +
                               "' is row-parallel over tp: its input is split "
                               "over tp, so its output is a partial sum");
    context.annotate(*this, {out}, /*partial=*/true);
    return success();
  }
  bool gated = false;
  std::string reason;
  if (tp > 1 && in.tokens != TokenKind::None &&
      feedsHeadsOrMLP(*this, gated, reason)) {
    out.tpSplit = true;
    out.segments = gated ? SmallVector<int64_t>{width / 2, width / 2}
                         : SmallVector<int64_t>{width};
    setTPRole(*this, "column");
    if (gated)
      setTPSegments(*this, out.segments);
    context.explain(*this, "'" + getWeight() +
                               "' is column-parallel over tp: its output "
                               "feeds " + reason);
  }
  context.annotate(*this, {out});
  return success();
}

/// A row-parallel linear's partial sums are all-reduced over tp.
LogicalResult LinearOp::partition(PartitionContext &context) {
  if (failed(context.setLocalTypes(*this)))
    return failure();
  if (getTPRole(*this) != "row")
    return success();
  OpBuilder &b = context.getBuilder();
  b.setInsertionPointAfter(*this);
  Value reduce = context.allReduce(getLoc(), getResult(),
                                   {context.getMesh().gridAxis("tp")});
  getResult().replaceAllUsesExcept(reduce, reduce.getDefiningOp());
  return success();
}

//===----------------------------------------------------------------------===//
// Norms, rope, modulation, residuals, activations
//===----------------------------------------------------------------------===//

/// A norm over a TP-split width all-reduces its statistics over tp.
static LogicalResult propagateNorm(Operation *op, ShardingContext &context) {
  ValueSharding in = context.ofTokenSource(op);
  bool grouped = op->getAttr("group_size") != nullptr;
  if (in.tpSplit && context.tp() > 1 && !grouped) {
    setReduceStatsOver(op, {"tp"});
    context.explain(op, "norm spans a width split over tp: its statistics "
                        "are all-reduced over tp");
  }
  context.annotate(op, {in});
  return success();
}

static std::optional<ImplicitCollective> normCollective(Operation *op) {
  if (!hasReduceStats(op))
    return std::nullopt;
  return ImplicitCollective{"all_reduce_stats", /*gridAxis=*/-1};
}

LogicalResult LayerNormOp::propagateSharding(ShardingContext &context) {
  return propagateNorm(*this, context);
}
std::optional<ImplicitCollective> LayerNormOp::getImplicitCollective() {
  return normCollective(*this);
}
LogicalResult RMSNormOp::propagateSharding(ShardingContext &context) {
  return propagateNorm(*this, context);
}
std::optional<ImplicitCollective> RMSNormOp::getImplicitCollective() {
  return normCollective(*this);
}

/// An op over a block of the token grid (rope, the sin/cos table): it keeps
/// its input's sharding, and after partitioning a rank works on its block,
/// so the op records how many blocks the sequence is cut into. Returns the
/// result's sharding for the op's own further attributes.
template <typename GridOp>
static FailureOr<ShardingAttr> partitionGridBlock(GridOp op,
                                                  PartitionContext &context) {
  if (failed(context.setLocalTypes(op)))
    return failure();
  auto sharding = cast<ShardingAttr>(
      op->template getAttrOfType<ArrayAttr>(kShardingAttrName)[0]);
  if (!sharding.axesOf(1).empty())
    op.setSequenceShards(context.getMesh().sequenceShards());
  return sharding;
}

LogicalResult RotaryEmbeddingOp::propagateSharding(ShardingContext &context) {
  context.annotate(*this, {context.ofTokenSource(*this)});
  return success();
}

/// A rank rotates its block of the token grid, and its heads.
LogicalResult RotaryEmbeddingOp::partition(PartitionContext &context) {
  FailureOr<ShardingAttr> sharding = partitionGridBlock(*this, context);
  if (failed(sharding))
    return failure();
  int64_t headShards = context.product(*sharding, 2);
  setNumHeads(getNumHeads() / headShards);
  // An ltx table spans all heads, so a rank needs to know which block of
  // them it holds; the runtime finds it from the rank's tp coordinate.
  if (isLtxStyle() && headShards > 1) {
    auto axes = sharding->axesOf(2);
    if (axes.size() != 1 || axes[0] != MeshAxis::TP)
      return emitOpError() << "an ltx rope's heads may be split by tp only";
    setHeadShards(headShards);
  }
  return success();
}

LogicalResult SincosPosEmbedOp::propagateSharding(ShardingContext &context) {
  context.annotate(*this, {context.ofTokenSource(*this)});
  return success();
}

/// A rank adds the embedding of its block of the token grid.
LogicalResult SincosPosEmbedOp::partition(PartitionContext &context) {
  return success(succeeded(partitionGridBlock(*this, context)));
}

LogicalResult ModulateOp::propagateSharding(ShardingContext &context) {
  context.annotate(*this, {context.ofTokenSource(*this)});
  return success();
}

LogicalResult ResidualAddOp::propagateSharding(ShardingContext &context) {
  ValueSharding residual = context.of(getResidual()),
                branch = context.of(getBranch());
  if (residual.tpSplit != branch.tpSplit)
    return emitError() << "residual and branch disagree on the tp "
                          "split of their features";
  context.annotate(*this, {residual});
  return success();
}

LogicalResult ActivationOp::propagateSharding(ShardingContext &context) {
  ValueSharding v = context.of(getInput());
  if (v.tpSplit)
    v.segments = {lastDim(getResult())};
  context.annotate(*this, {v});
  return success();
}

//===----------------------------------------------------------------------===//
// Attention: heads and rows
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::propagateSharding(ShardingContext &context) {
  const MeshContext &mesh = context.getMesh();
  ValueSharding q = context.of(getInputs()[0]);
  AttentionPlan plan;
  int64_t tp = context.tp();
  if (tp > 1) {
    if (!q.tpSplit)
      return emitError() << "attention under tp " << tp
                         << " needs column-parallel q/k/v projections";
    plan.heads.push_back("tp");
  }
  bool sequenceSplit = !context.getSequenceAxes().empty() &&
                       q.tokens != TokenKind::Text &&
                       q.tokens != TokenKind::None;
  if (getKind() == AttentionKind::Cross) {
    plan.rows = "local";
  } else if (sequenceSplit && !getShardOverSp()) {
    plan.rows = "gather";
  } else if (sequenceSplit) {
    if (mesh.size("ulysses") > 1)
      plan.heads.push_back("ulysses");
    if (mesh.size("ring") > 1)
      plan.rows = "ring";
    else if (mesh.size("kv_gather") > 1)
      plan.rows = "kv_gather";
  }
  setAttentionPlan(*this, plan);
  if (context.isExplaining()) {
    std::string headList;
    for (const std::string &h : plan.heads)
      headList += (headList.empty() ? "" : " x ") + h;
    emitRemark() << stringifyAttentionKind(getKind()) << " attention: heads over "
                 << (headList.empty() ? "nothing" : headList) << ", rows "
                 << plan.rows;
  }
  ValueSharding out = q;
  out.segments = {lastDim(getResult())};
  context.annotate(*this, {out});
  return success();
}

std::optional<ImplicitCollective> AttentionOp::getImplicitCollective() {
  std::optional<int16_t> ring = getRingAxis(*this);
  if (!ring)
    return std::nullopt;
  return ImplicitCollective{"ring_attention", *ring};
}

namespace {
/// The collectives around one partitioned attention.
struct AttentionPartitioner {
  PartitionContext &context;
  OpBuilder &b;
  Location loc;
  bool joint;
  int64_t text;
  TextPosition pos;

  int16_t ulyssesAxis() const {
    return context.getMesh().gridAxis("ulysses");
  }

  std::pair<Value, Value> splitStreams(Value joint) {
    SmallVector<int64_t> shape = shapeOf(joint);
    SmallVector<int64_t> textShape = shape, imageShape = shape;
    textShape[1] = text;
    imageShape[1] = shape[1] - text;
    auto split = SplitStreamsOp::create(
        b, loc, withShape(joint.getType(), textShape),
        withShape(joint.getType(), imageShape), joint,
        TextPositionAttr::get(b.getContext(), pos));
    return {split.getText(), split.getImage()};
  }

  Value concatStreams(Value textPart, Value image) {
    SmallVector<int64_t> shape = shapeOf(image);
    shape[1] += shapeOf(textPart)[1];
    return ConcatStreamsOp::create(b, loc, withShape(image.getType(), shape),
                                   textPart, image,
                                   TextPositionAttr::get(b.getContext(), pos));
  }

  Value stack(ValueRange parts) {
    SmallVector<int64_t> shape = shapeOf(parts[0]);
    shape.insert(shape.begin() + 2, int64_t(parts.size()));
    return StackOp::create(b, loc, withShape(parts[0].getType(), shape), parts,
                           b.getI64IntegerAttr(2))
        .getResult();
  }

  SmallVector<Value> unstack(Value packed) {
    SmallVector<int64_t> shape = shapeOf(packed);
    int64_t count = shape[2];
    shape.erase(shape.begin() + 2);
    SmallVector<Type> types(count, withShape(packed.getType(), shape));
    return SmallVector<Value>(
        UnstackOp::create(b, loc, types, packed, b.getI64IntegerAttr(2))
            .getResults());
  }

  /// Q, K and V in one exchange: stacked along a new dim 2, split on the
  /// features, concatenated on the sequence.
  SmallVector<Value> ulyssesIn(ValueRange qkv) {
    if (!joint)
      return unstack(context.allToAll(loc, stack(qkv), ulyssesAxis(),
                                      /*split=*/3, /*concat=*/1));
    SmallVector<Value> texts, images;
    for (Value v : qkv) {
      auto [t, i] = splitStreams(v);
      texts.push_back(t);
      images.push_back(i);
    }
    // Text rows are replicated: each rank takes its heads without traffic.
    SmallVector<Value> localText =
        unstack(context.allSlice(loc, stack(texts), ulyssesAxis(), 3));
    SmallVector<Value> localImage =
        unstack(context.allToAll(loc, stack(images), ulyssesAxis(), 3, 1));
    SmallVector<Value> out;
    for (auto [t, i] : llvm::zip(localText, localImage))
      out.push_back(concatStreams(t, i));
    return out;
  }

  Value ulyssesOut(Value output) {
    if (!joint)
      return context.allToAll(loc, output, ulyssesAxis(), /*split=*/1,
                              /*concat=*/2);
    auto [t, i] = splitStreams(output);
    Value fullText = context.allGather(loc, t, {ulyssesAxis()}, 2);
    Value image = context.allToAll(loc, i, ulyssesAxis(), 1, 2);
    return concatStreams(fullText, image);
  }

  /// All-gathers the image rows of a key or value over `axes`.
  Value gatherRows(Value kv, ArrayRef<int16_t> axes) {
    if (!joint)
      return context.allGather(loc, kv, axes, 1);
    auto [t, i] = splitStreams(kv);
    return concatStreams(t, context.allGather(loc, i, axes, 1));
  }
};
} // namespace

LogicalResult AttentionOp::partition(PartitionContext &context) {
  if (failed(context.setLocalTypes(*this)))
    return failure();
  const MeshContext &mesh = context.getMesh();
  std::optional<AttentionPlan> plan = getAttentionPlan(*this);
  if (!plan)
    return emitError() << "has no dit.attention_plan; run "
                          "--dit-propagate-sharding first";
  if (getQkvLayout() == QKVLayout::Stacked && mesh.sequenceShards() > 1)
    return emitError()
           << "a stacked-QKV attention cannot be sequence-partitioned";
  bool ulysses = llvm::is_contained(plan->heads, "ulysses");
  StringRef rows = plan->rows;
  OpBuilder &b = context.getBuilder();
  AttentionPartitioner p{context,        b,
                         getLoc(),       getKind() == AttentionKind::Joint,
                         getTextTokens(), getTextPosition()};
  int64_t localHeads = getNumHeads() / mesh.size("tp");

  b.setInsertionPoint(*this);
  SmallVector<Value> qkv(getOperands());
  // The text mask stays whole on every rank: the text is never row-split,
  // and a mask has no heads to split.
  Value keyMask;
  if (getKeyMask()) {
    keyMask = qkv.back();
    qkv.pop_back();
  }
  if (ulysses) {
    qkv = p.ulyssesIn(qkv);
    localHeads /= mesh.size("ulysses");
  }
  if (rows == "kv_gather" || rows == "gather") {
    SmallVector<int16_t> axes;
    if (rows == "kv_gather")
      axes.push_back(mesh.gridAxis("kv_gather"));
    else
      axes = mesh.sequenceGridAxes();
    for (int i : {1, 2})
      qkv[i] = p.gatherRows(qkv[i], axes);
    setGatheredKv(true);
  } else if (rows == "ring") {
    setRingAxis(*this, mesh.gridAxis("ring"));
  }
  SmallVector<Value> operands = qkv;
  if (keyMask)
    operands.push_back(keyMask);
  (*this)->setOperands(operands);
  setNumHeads(localHeads);
  SmallVector<int64_t> outShape = shapeOf(qkv[0]);
  Value original = getResult();
  original.setType(withShape(original.getType(), outShape));
  if (ulysses) {
    // Redirect the attention's consumers to the restored layout.
    SmallVector<OpOperand *> consumers;
    for (OpOperand &use : original.getUses())
      consumers.push_back(&use);
    b.setInsertionPointAfter(*this);
    Value restored = p.ulyssesOut(original);
    for (OpOperand *use : consumers)
      use->set(restored);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Streams and unpatchify
//===----------------------------------------------------------------------===//

LogicalResult ConcatStreamsOp::propagateSharding(ShardingContext &context) {
  ValueSharding text = context.of(getText()), image = context.of(getImage());
  if (text.tpSplit != image.tpSplit)
    return emitError() << "text and image streams disagree on the tp "
                          "split of their features";
  ValueSharding v = image;
  v.tokens = TokenKind::Joint;
  v.textTokens = cast<RankedTensorType>(getText().getType()).getDimSize(1);
  context.annotate(*this, {v});
  return success();
}

LogicalResult SplitStreamsOp::propagateSharding(ShardingContext &context) {
  ValueSharding in = context.of(getInput()), text = in, image = in;
  text.tokens = TokenKind::Text;
  image.tokens = TokenKind::Image;
  text.textTokens = image.textTokens = 0;
  context.annotate(*this, {text, image});
  return success();
}

LogicalResult UnpatchifyOp::propagateSharding(ShardingContext &context) {
  ValueSharding in = context.of(getInput());
  if (in.tpSplit)
    return emitError() << "unpatchify needs whole features";
  // The latents stay in patch-token layout, split like the image tokens
  // (dit-insert-collectives keeps the denoising state in that layout).
  Builder b(getContext());
  (*this)->setAttr("dit.latent_layout",
                   LatentLayoutAttr::get(getContext(), LatentLayout::PatchTokens));
  (*this)->setAttr(kShardingAttrName,
                   b.getArrayAttr({context.shardingOf(
                       in, getInput().getType(), false)}));
  context.set(getResult(), in);
  return success();
}

/// The partitioned transformer returns patch tokens: unpatchify goes.
LogicalResult UnpatchifyOp::partition(PartitionContext &) {
  getResult().replaceAllUsesWith(getInput());
  erase();
  return success();
}

//===----------------------------------------------------------------------===//
// tensor.concat (fused projections): features side by side
//===----------------------------------------------------------------------===//

namespace {
struct ConcatShardingModel
    : DitShardableOpInterface::ExternalModel<ConcatShardingModel,
                                             tensor::ConcatOp> {
  LogicalResult propagateSharding(Operation *op,
                                  ShardingContext &context) const {
    auto concat = cast<tensor::ConcatOp>(op);
    ValueSharding v = context.of(concat.getInputs()[0]);
    v.segments.clear();
    for (Value input : concat.getInputs()) {
      ValueSharding part = context.of(input);
      if (part.tpSplit != v.tpSplit)
        return op->emitError() << "concatenated features disagree on their "
                                  "tp split";
      v.segments.push_back(lastDim(input));
    }
    context.annotate(op, {v});
    return success();
  }
};
} // namespace

void mlir::dit::registerExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ConcatOp::attachInterface<ConcatShardingModel>(*ctx);
  });
}
