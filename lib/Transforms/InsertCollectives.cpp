//===- InsertCollectives.cpp - the dit-insert-collectives pass ------------===//
//
// Rewrites the annotated transformer and denoising step to the SPMD program
// each rank runs: local shapes everywhere, and upstream shard collectives
// wherever two shardings meet. See Passes.td for the collectives per axis.
//
//===----------------------------------------------------------------------===//
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"
#include "ditc/Transforms/ShardingAttrs.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace ditc {
#define GEN_PASS_DEF_INSERTCOLLECTIVES
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

RankedTensorType withShape(Type type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, cast<RankedTensorType>(type).getElementType());
}

struct InsertCollectivesPass
    : impl::InsertCollectivesBase<InsertCollectivesPass> {
  MeshInfo mesh;
  SmallVector<int16_t> sequenceGridAxes; // ring, kv_gather, ulysses > 1
  int64_t sequenceShards = 1;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> info = readMeshInfo(module);
    if (failed(info))
      return signalPassFailure();
    mesh = *info;
    for (Axis axis : mesh.sequenceAxes()) {
      sequenceGridAxes.push_back(mesh.gridAxis(axis));
      sequenceShards *= mesh.size(axis);
    }
    std::optional<RankedTensorType> latentTokens;
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      auto component =
          fn->getAttrOfType<StringAttr>(DitDialect::kComponentAttrName);
      if (fn.isExternal() || !component ||
          !component.getValue().starts_with("transformer"))
        continue;
      FailureOr<RankedTensorType> tokens = partitionTransformer(fn);
      if (failed(tokens))
        return signalPassFailure();
      latentTokens = *tokens;
    }
    if (!latentTokens)
      return;
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto component =
          fn->getAttrOfType<StringAttr>(DitDialect::kComponentAttrName);
      if (!fn.isExternal() && component &&
          component.getValue() == "denoise_step")
        if (failed(partitionDenoiseStep(fn, *latentTokens)))
          return signalPassFailure();
    }
  }

  int64_t product(ShardingAttr sharding, unsigned dim) {
    int64_t n = 1;
    for (StringRef name : sharding.axesOf(dim))
      n *= mesh.size(*axisFromName(name.str()));
    return n;
  }

  /// The local type of a value with `sharding` and global type `type`.
  FailureOr<RankedTensorType> localType(Operation *op, Type type,
                                        ShardingAttr sharding) {
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensor.getShape());
    for (unsigned d = 0; d < shape.size(); ++d) {
      int64_t n = product(sharding, d);
      int64_t kept = d == 1 ? sharding.getReplicatedText() : 0;
      if ((shape[d] - kept) % n != 0)
        return op->emitError() << "dimension " << d << " of " << type
                               << " does not split evenly over " << n
                               << " ranks";
      shape[d] = kept + (shape[d] - kept) / n;
    }
    return withShape(type, shape);
  }

  /// Partitions one transformer function; returns the local type of its
  /// latent (patch-token) argument.
  FailureOr<RankedTensorType> partitionTransformer(func::FuncOp fn) {
    OpBuilder b(fn.getContext());
    // The latents arrive as this rank's block of patch tokens.
    BlockArgument latents = fn.getArgument(0);
    PatchEmbedOp embed;
    for (Operation *user : latents.getUsers())
      if (auto op = dyn_cast<PatchEmbedOp>(user))
        embed = op;
    if (!embed)
      return fn.emitError() << "the latents argument feeds no dit.patch_embed";
    auto latentType = cast<RankedTensorType>(latents.getType());
    int64_t channels = latentType.getDimSize(1);
    int64_t patchVolume = 1;
    for (int64_t p : embed.getPatch())
      patchVolume *= p;
    int64_t tokens = cast<RankedTensorType>(embed.getType()).getDimSize(1);
    if (tokens % sequenceShards != 0)
      return embed.emitError() << tokens << " image tokens do not split over "
                               << sequenceShards << " sequence shards";
    RankedTensorType tokenType = withShape(
        latentType, {latentType.getDimSize(0), tokens / sequenceShards,
                     channels * patchVolume});
    latents.setType(tokenType);

    SmallVector<Operation *> ops;
    fn.walk([&](Operation *op) {
      if (op != fn.getOperation())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto unpatchify = dyn_cast<UnpatchifyOp>(op)) {
        unpatchify.getResult().replaceAllUsesWith(unpatchify.getInput());
        unpatchify.erase();
        continue;
      }
      auto shardings = op->getAttrOfType<ArrayAttr>(kShardingAttrName);
      if (!shardings)
        continue;
      for (auto [result, attr] : llvm::zip(op->getResults(), shardings)) {
        FailureOr<RankedTensorType> local =
            localType(op, result.getType(), cast<ShardingAttr>(attr));
        if (failed(local))
          return failure();
        result.setType(*local);
      }
      if (auto rope = dyn_cast<RotaryEmbeddingOp>(op)) {
        auto sharding = cast<ShardingAttr>(shardings[0]);
        if (!sharding.axesOf(1).empty())
          rope.setSequenceShards(sequenceShards);
        rope.setNumHeads(rope.getNumHeads() / product(sharding, 2));
      }
      if (auto linear = dyn_cast<LinearOp>(op)) {
        auto role = op->getAttrOfType<StringAttr>(kTPRoleAttrName);
        if (role && role.getValue() == "row")
          allReduceAfter(b, linear);
      }
      if (auto attention = dyn_cast<AttentionOp>(op))
        if (failed(partitionAttention(b, attention)))
          return failure();
    }
    eraseDeadOps(fn);
    SmallVector<Type> results;
    for (Value v : fn.front().getTerminator()->getOperands())
      results.push_back(v.getType());
    fn.setType(b.getFunctionType(fn.front().getArgumentTypes(), results));
    return tokenType;
  }

  /// No redundant collective: values nobody reads (the text stream of a
  /// last dual-stream block, the text heads of a context-only attention)
  /// and the collectives that fed only them are removed.
  void eraseDeadOps(func::FuncOp fn) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation &op :
           llvm::make_early_inc_range(llvm::reverse(fn.front()))) {
        if (isOpTriviallyDead(&op)) {
          if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::AllToAllOp>(op))
            --numCollectives;
          op.erase();
          changed = true;
        }
      }
    }
  }

  void allReduceAfter(OpBuilder &b, LinearOp linear) {
    b.setInsertionPointAfter(linear);
    auto reduce = shard::AllReduceOp::create(b, 
        linear.getLoc(), linear.getType(), kGridName,
        ArrayRef<int16_t>{mesh.gridAxis(Axis::TP)}, linear.getResult(),
        shard::ReductionKind::Sum);
    linear.getResult().replaceAllUsesExcept(reduce.getResult(), reduce);
    ++numCollectives;
  }

  SmallVector<int64_t> shapeOf(Value v) {
    return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
  }

  Value allToAll(OpBuilder &b, Location loc, Value input, int64_t split,
                 int64_t concat) {
    int64_t n = mesh.size(Axis::Ulysses);
    SmallVector<int64_t> shape = shapeOf(input);
    shape[split] /= n;
    shape[concat] *= n;
    ++numCollectives;
    return shard::AllToAllOp::create(b, 
        loc, withShape(input.getType(), shape), kGridName,
        ArrayRef<int16_t>{mesh.gridAxis(Axis::Ulysses)}, input,
        APInt(64, split), APInt(64, concat));
  }

  Value allGather(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int16_t> axes, int64_t dim) {
    SmallVector<int64_t> shape = shapeOf(input);
    shape[dim] *= mesh.groupSize(axes);
    ++numCollectives;
    return shard::AllGatherOp::create(b, loc, withShape(input.getType(), shape),
                                        kGridName, axes, input, APInt(64, dim));
  }

  Value allSlice(OpBuilder &b, Location loc, Value input, int16_t axis,
                 int64_t dim) {
    SmallVector<int64_t> shape = shapeOf(input);
    shape[dim] /= mesh.groupSize({axis});
    return shard::AllSliceOp::create(b, loc, withShape(input.getType(), shape),
                                       kGridName, ArrayRef<int16_t>{axis},
                                       input, APInt(64, dim));
  }

  std::pair<Value, Value> splitStreams(OpBuilder &b, Location loc, Value joint,
                                       int64_t text, TextPosition position) {
    SmallVector<int64_t> shape = shapeOf(joint);
    SmallVector<int64_t> textShape = shape, imageShape = shape;
    textShape[1] = text;
    imageShape[1] = shape[1] - text;
    auto split = SplitStreamsOp::create(b, 
        loc, withShape(joint.getType(), textShape),
        withShape(joint.getType(), imageShape), joint,
        TextPositionAttr::get(b.getContext(), position));
    return {split.getText(), split.getImage()};
  }

  Value concatStreams(OpBuilder &b, Location loc, Value text, Value image,
                      TextPosition position) {
    SmallVector<int64_t> shape = shapeOf(image);
    shape[1] += shapeOf(text)[1];
    return ConcatStreamsOp::create(b, loc, withShape(image.getType(), shape),
                                     text, image,
                                     TextPositionAttr::get(b.getContext(), position));
  }

  /// Q, K and V in one exchange: stacked along a new dim 2, split on the
  /// features, concatenated on the sequence.
  SmallVector<Value> ulyssesIn(OpBuilder &b, Location loc, ValueRange qkv,
                               bool joint, int64_t text, TextPosition pos) {
    auto stack = [&](ValueRange parts) {
      SmallVector<int64_t> shape = shapeOf(parts[0]);
      shape.insert(shape.begin() + 2, int64_t(parts.size()));
      return StackOp::create(b, loc, withShape(parts[0].getType(), shape), parts,
                               b.getI64IntegerAttr(2))
          .getResult();
    };
    auto unstack = [&](Value packed) {
      SmallVector<int64_t> shape = shapeOf(packed);
      int64_t count = shape[2];
      shape.erase(shape.begin() + 2);
      SmallVector<Type> types(count, withShape(packed.getType(), shape));
      return SmallVector<Value>(
          UnstackOp::create(b, loc, types, packed, b.getI64IntegerAttr(2))
              .getResults());
    };
    if (!joint)
      return unstack(allToAll(b, loc, stack(qkv), /*split=*/3, /*concat=*/1));
    SmallVector<Value> texts, images;
    for (Value v : qkv) {
      auto [t, i] = splitStreams(b, loc, v, text, pos);
      texts.push_back(t);
      images.push_back(i);
    }
    // Text rows are replicated: each rank takes its heads without traffic.
    SmallVector<Value> localText = unstack(
        allSlice(b, loc, stack(texts), mesh.gridAxis(Axis::Ulysses), 3));
    SmallVector<Value> localImage =
        unstack(allToAll(b, loc, stack(images), 3, 1));
    SmallVector<Value> out;
    for (auto [t, i] : llvm::zip(localText, localImage))
      out.push_back(concatStreams(b, loc, t, i, pos));
    return out;
  }

  Value ulyssesOut(OpBuilder &b, Location loc, Value output, bool joint,
                   int64_t text, TextPosition pos) {
    if (!joint)
      return allToAll(b, loc, output, /*split=*/1, /*concat=*/2);
    auto [t, i] = splitStreams(b, loc, output, text, pos);
    Value fullText = allGather(b, loc, t, {mesh.gridAxis(Axis::Ulysses)}, 2);
    Value image = allToAll(b, loc, i, 1, 2);
    return concatStreams(b, loc, fullText, image, pos);
  }

  /// All-gathers the image rows of a key or value over `axes`.
  Value gatherRows(OpBuilder &b, Location loc, Value kv, ArrayRef<int16_t> axes,
                   bool joint, int64_t text, TextPosition pos) {
    if (!joint)
      return allGather(b, loc, kv, axes, 1);
    auto [t, i] = splitStreams(b, loc, kv, text, pos);
    return concatStreams(b, loc, t, allGather(b, loc, i, axes, 1), pos);
  }

  LogicalResult partitionAttention(OpBuilder &b, AttentionOp attention) {
    auto plan = attention->getAttrOfType<DictionaryAttr>(kAttentionPlanAttrName);
    if (!plan)
      return attention.emitError() << "has no dit.attention_plan; run "
                                      "--dit-propagate-sharding first";
    if (attention.getQkvLayout() == QKVLayout::Stacked &&
        mesh.degrees.sequenceShards() > 1)
      return attention.emitError()
             << "a stacked-QKV attention cannot be sequence-partitioned";
    auto heads = cast<ArrayAttr>(plan.get("heads"));
    StringRef rows = cast<StringAttr>(plan.get("rows")).getValue();
    bool ulysses = llvm::any_of(heads, [](Attribute a) {
      return cast<StringAttr>(a).getValue() == "ulysses";
    });
    bool joint = attention.getKind() == AttentionKind::Joint;
    int64_t text = attention.getTextTokens();
    TextPosition pos = attention.getTextPosition();
    Location loc = attention.getLoc();
    int64_t tp = mesh.size(Axis::TP);
    int64_t localHeads = attention.getNumHeads() / tp;

    b.setInsertionPoint(attention);
    SmallVector<Value> qkv(attention.getInputs());
    if (ulysses) {
      qkv = ulyssesIn(b, loc, qkv, joint, text, pos);
      localHeads /= mesh.size(Axis::Ulysses);
    }
    if (rows == "kv_gather" || rows == "gather") {
      SmallVector<int16_t> axes;
      if (rows == "kv_gather")
        axes.push_back(mesh.gridAxis(Axis::KVGather));
      else
        axes = sequenceGridAxes;
      for (int i : {1, 2})
        qkv[i] = gatherRows(b, loc, qkv[i], axes, joint, text, pos);
      attention.setGatheredKv(true);
    } else if (rows == "ring") {
      attention->setAttr(kRingAxisAttrName,
                         b.getI64IntegerAttr(mesh.gridAxis(Axis::Ring)));
    }
    attention->setOperands(qkv);
    attention.setNumHeads(localHeads);
    SmallVector<int64_t> outShape = shapeOf(qkv[0]);
    Value original = attention.getResult();
    original.setType(withShape(original.getType(), outShape));
    if (ulysses) {
      // Redirect the attention's consumers to the restored layout.
      SmallVector<OpOperand *> consumers;
      for (OpOperand &use : original.getUses())
        consumers.push_back(&use);
      b.setInsertionPointAfter(attention);
      Value restored = ulyssesOut(b, loc, original, joint, text, pos);
      for (OpOperand *use : consumers)
        use->set(restored);
    }
    return success();
  }

  /// CFG: each rank calls the transformer for its branch slots, and one
  /// all-gather over cfg collects every branch's prediction.
  LogicalResult partitionDenoiseStep(func::FuncOp fn, RankedTensorType tokens) {
    OpBuilder b(fn.getContext());
    fn.getArgument(0).setType(tokens);
    SmallVector<func::CallOp> calls;
    fn.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls)
      call.getResult(0).setType(tokens);
    int64_t cfg = mesh.size(Axis::CFG);
    int64_t branches = calls.size();
    if (cfg > 1 && branches % cfg != 0)
      return fn.emitError() << "cfg " << cfg << " does not divide the "
                            << branches << " branch calls";
    if (cfg > 1) {
      int64_t slots = branches / cfg;
      b.setInsertionPoint(calls.front());
      Location loc = calls.front().getLoc();
      SmallVector<Value> predictions;
      for (int64_t slot = 0; slot < slots; ++slot) {
        SmallVector<Value> operands;
        for (unsigned i = 0; i < calls.front().getNumOperands(); ++i) {
          SmallVector<Value> perBranch;
          for (func::CallOp call : calls)
            perBranch.push_back(call.getOperand(i));
          bool same = llvm::all_equal(perBranch);
          operands.push_back(
              same ? perBranch.front()
                   : CFGSelectOp::create(b, loc, perBranch.front().getType(),
                                           perBranch, b.getI64IntegerAttr(slot),
                                           b.getI64IntegerAttr(cfg))
                         .getResult());
        }
        auto call = func::CallOp::create(b, loc, calls.front().getCallee(),
                                           TypeRange{tokens}, operands);
        predictions.push_back(call.getResult(0));
      }
      SmallVector<int64_t> stacked(tokens.getShape());
      stacked.insert(stacked.begin(), slots);
      Value packed = StackOp::create(b, loc, withShape(tokens, stacked),
                                       predictions, b.getI64IntegerAttr(0));
      Value all = allGather(b, loc, packed, {mesh.gridAxis(Axis::CFG)}, 0);
      SmallVector<Type> types(branches, tokens);
      auto unstacked =
          UnstackOp::create(b, loc, types, all, b.getI64IntegerAttr(0));
      for (auto [call, value] : llvm::zip(calls, unstacked.getResults())) {
        call.getResult(0).replaceAllUsesWith(value);
        call.erase();
      }
    }
    fn.walk([&](Operation *op) {
      if (isa<CFGCombineOp, SchedulerStepOp>(op))
        op->getResult(0).setType(tokens);
    });
    SmallVector<Type> results;
    for (Value v : fn.front().getTerminator()->getOperands())
      results.push_back(v.getType());
    fn.setType(b.getFunctionType(fn.front().getArgumentTypes(), results));
    return success();
  }
};

} // namespace
} // namespace ditc
