//===- InsertCollectives.cpp - the dit-insert-collectives pass ------------===//
//
// Rewrites the annotated transformer and denoising step to the SPMD program
// each rank runs: local shapes everywhere, and upstream shard collectives
// wherever two shardings meet. See Passes.td for the collectives per axis.
// The per-op rewrites (a row-parallel linear's all-reduce, rope's token
// block, attention's heads and rows) are each op's
// DitShardableOpInterface::partition, in dialects/dit/IR/
// DitShardingRules.cpp; this pass drives them and partitions the denoising
// step.
//
//===----------------------------------------------------------------------===//
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"
#include "VerifiedPass.h"
#include "ditc/Transforms/ShardingAttrs.h"
#include "ditc/Transforms/StepInputs.h"

#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"

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

struct InsertCollectivesPass
    : VerifiedPass<impl::InsertCollectivesBase<InsertCollectivesPass>> {
  void runOnModule() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> info = readMeshInfo(module);
    if (failed(info))
      return signalPassFailure();
    // Everything one run builds with lives in this context, not in the pass.
    MeshContext mesh = meshContextOf(*info);
    PartitionContext context(&getContext(), mesh);
    std::optional<RankedTensorType> latentTokens;
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (fn.isExternal() || !isTransformerFunction(fn))
        continue;
      FailureOr<RankedTensorType> tokens = partitionTransformer(fn, context);
      if (failed(tokens))
        return signalPassFailure();
      latentTokens = *tokens;
    }
    if (!latentTokens)
      return;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn.isExternal() &&
          getComponent(fn) == PipelineComponent::DenoiseStep)
        if (failed(partitionDenoiseStep(fn, *latentTokens, context)))
          return signalPassFailure();
    }
  }

  /// Partitions one transformer function; returns the local type of its
  /// latent (patch-token) argument. Each annotated op rewrites itself
  /// (DitShardableOpInterface::partition).
  FailureOr<RankedTensorType> partitionTransformer(func::FuncOp fn,
                                                   PartitionContext &context) {
    OpBuilder b(fn.getContext());
    int64_t sequenceShards = context.getMesh().sequenceShards();
    // The latents arrive as this rank's block of patch tokens.
    FailureOr<BlockArgument> latentsArg = requireStepInput(fn, "latents");
    if (failed(latentsArg))
      return failure();
    BlockArgument latents = *latentsArg;
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
      // Ops propagation did not annotate (the terminator) stay as they are.
      if (!op->hasAttr(kShardingAttrName))
        continue;
      auto shardable = dyn_cast<DitShardableOpInterface>(op);
      if (!shardable)
        return op->emitError()
               << "dit-insert-collectives cannot partition '" << op->getName()
               << "': op does not implement DitShardableOpInterface";
      if (failed(shardable.partition(context)))
        return failure();
    }
    numCollectives += context.takeNumCollectives();
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

  /// CFG: each rank calls the transformer for its branch slots, and one
  /// all-gather over cfg collects every branch's prediction.
  LogicalResult partitionDenoiseStep(func::FuncOp fn, RankedTensorType tokens,
                                     PartitionContext &context) {
    OpBuilder &b = context.getBuilder();
    const MeshContext &mesh = context.getMesh();
    FailureOr<BlockArgument> latents = requireStepInput(fn, "latents");
    if (failed(latents))
      return failure();
    latents->setType(tokens);
    SmallVector<func::CallOp> calls;
    fn.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      // Each call is one guidance branch's prediction of the latents.
      if (call.getNumResults() != 1)
        return call.emitError() << "a branch call of @" << fn.getName()
                                << " must return the one predicted tensor, "
                                   "got "
                                << call.getNumResults() << " results";
      call.getResult(0).setType(tokens);
    }
    int64_t cfg = mesh.size("cfg");
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
      Value all = context.allGather(loc, packed, {mesh.gridAxis("cfg")}, 0);
      numCollectives += context.takeNumCollectives();
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
