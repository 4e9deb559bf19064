//===- PropagateSharding.cpp - the dit-propagate-sharding pass ------------===//
//
// One forward walk over each transformer function decides, for every value,
// which token kind it carries (image, text, joint, or a non-token tensor)
// and whether its feature dimension is split over tp, and records the
// result as #dit.sharding annotations. Decisions are local and explainable:
// each op's rule (DitShardableOpInterface, in dialects/dit/IR/
// DitShardingRules.cpp) follows from the op and its operands' shardings,
// plus one look ahead for linears (does the output feed attention heads or
// an MLP?).
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

namespace ditc {
#define GEN_PASS_DEF_PROPAGATESHARDING
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

struct PropagateShardingPass
    : VerifiedPass<impl::PropagateShardingBase<PropagateShardingPass>> {
  using VerifiedPass::VerifiedPass;

  void runOnModule() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> info = readMeshInfo(module);
    if (failed(info))
      return signalPassFailure();
    const MeshInfo &mesh = *info;
    if (mesh.size(Axis::Ring) > 1 && mesh.size(Axis::KVGather) > 1) {
      module.emitError() << "ring " << mesh.size(Axis::Ring) << " and kv_gather "
                         << mesh.size(Axis::KVGather)
                         << " both split rows; the partitioner supports one "
                            "(see --dit-check-legality)";
      return signalPassFailure();
    }
    // Everything one run learns lives in this context, not in the pass.
    MeshContext meshContext = meshContextOf(mesh);
    ShardingContext context(&getContext(), meshContext, explain);

    for (auto fn : module.getOps<func::FuncOp>()) {
      // A hand-written function without a component is a transformer.
      if (fn.isExternal() ||
          (getComponent(fn) && !isTransformerFunction(fn)))
        continue;
      if (failed(propagate(fn, context)))
        return signalPassFailure();
    }
  }

  /// Each op decides its results' shardings (DitShardableOpInterface).
  LogicalResult propagate(func::FuncOp fn, ShardingContext &context) {
    // Arguments by their dit.input: the text tokens are their own token
    // kind; latents, timesteps, pooled text and guidance start unsplit.
    if (failed(requireStepInput(fn, "latents")))
      return failure();
    for (BlockArgument arg : fn.getArguments()) {
      ValueSharding v;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (stepInputName(arg) == "text" && type && type.getRank() == 3)
        v.tokens = TokenKind::Text;
      context.set(arg, v);
    }
    WalkResult result = fn.walk([&](Operation *op) -> WalkResult {
      if (isa<func::ReturnOp>(op) || op == fn.getOperation())
        return WalkResult::advance();
      auto shardable = dyn_cast<DitShardableOpInterface>(op);
      if (!shardable)
        return op->emitError()
               << "dit-propagate-sharding cannot shard '" << op->getName()
               << "': op does not implement DitShardableOpInterface";
      return failed(shardable.propagateSharding(context))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};

} // namespace
} // namespace ditc
