//===- PartitionTextEncoder.cpp - the dit-partition-text-encoder pass -----===//
//
// Tensor parallelism of the text encoders: with the text_encoder
// placement's tp_size T > 1, each encoder graph in @text_encoder's
// components becomes one rank's program of T. The split is Megatron's, read
// from the graph (textEncoderTPRole): column-parallel linears into each
// attention and feed-forward, heads / T in the attention and in T5's
// relative position bias, row-parallel linears out of them followed by an
// all-reduce of the partial sums on @text_encoder_tp. Everything between
// two all-reduces is whole on every rank, so the norms, residuals, pooling
// and CLIP's projection need nothing. dit-run's encoders
// (runtime/lib/Text) split the same way and are held to this program's
// all-reduce count (docs/plan-format.md, text_encoder).
//
//===----------------------------------------------------------------------===//
#include "VerifiedPass.h"

#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/Legality.h"
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"

#include "dit/IR/DitDialect.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace ditc {
#define GEN_PASS_DEF_PARTITIONTEXTENCODER
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;

namespace ditc {
namespace {

/// `type` with dimension `dim` divided by `tp`, or failure (with an error
/// on `op`) when it does not divide.
FailureOr<RankedTensorType> splitType(Operation *op, Type type, int64_t dim, int64_t tp,
                          StringRef what) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  if (dim < 0)
    dim += int64_t(shape.size());
  if (shape[dim] % tp != 0) {
    op->emitError() << "text_encoder tp_size " << tp << " does not divide the "
                    << shape[dim] << " " << what << " (see --dit-check-legality's "
                    << "text-encoder-heads)";
    return failure();
  }
  shape[dim] /= tp;
  return tensor.clone(shape);
}

struct PartitionTextEncoderPass
    : VerifiedPass<impl::PartitionTextEncoderBase<PartitionTextEncoderPass>> {
  void runOnModule() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>("text_encoder");
    if (!fn || fn.isExternal())
      return;
    Deployment deployment = deploymentFromModule(module);
    const Placement *encoder = deployment.find("text_encoder");
    int64_t tp = encoder ? encoder->degrees[Axis::TP] : 1;
    if (tp < 2)
      return;
    SmallVector<dit::ComponentOp> components;
    fn.walk([&](dit::ComponentOp op) {
      if (op.getKind() == dit::ComponentKind::TextEncoder)
        components.push_back(op);
    });
    if (components.empty())
      return;
    OpBuilder b(module.getContext());
    if (!SymbolTable::lookupSymbolIn(module, kTextEncoderGridName)) {
      b.setInsertionPointToStart(module.getBody());
      shard::GridOp::create(b, module.getLoc(), kTextEncoderGridName,
                            b.getDenseI64ArrayAttr({tp}));
    }
    for (dit::ComponentOp component : components) {
      if (component.getBody().empty()) {
        component.emitError() << "text_encoder tp_size " << tp << " splits '"
                              << component.getClassName()
                              << "', but ditc has no graph of it";
        return signalPassFailure();
      }
      if (failed(partition(b, component, tp)))
        return signalPassFailure();
    }
  }

  /// Rewrites one encoder's body in program order: each op's local type
  /// follows from its operands', which were rewritten before it.
  LogicalResult partition(OpBuilder &b, dit::ComponentOp component, int64_t tp) {
    SmallVector<Operation *> ops;
    for (Operation &op : component.getBody().front())
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (auto linear = dyn_cast<dit::LinearOp>(op)) {
        StringRef role = dit::textEncoderTPRole(linear);
        if (role.empty())
          continue;
        dit::setTPRole(linear, role);
        if (role == "column") {
          FailureOr<RankedTensorType> local =
              splitType(linear, linear.getType(), -1, tp, "output features of " +
                                                              linear.getWeight().str());
          if (failed(local))
            return failure();
          linear.getResult().setType(*local);
          continue;
        }
        // Row-parallel: the input is already this rank's slice; the
        // output's partial sums are all-reduced before anything reads them.
        b.setInsertionPointAfter(linear);
        Value sum = shard::AllReduceOp::create(b, linear.getLoc(), linear.getType(),
                                               kTextEncoderGridName, ArrayRef<int16_t>{0},
                                               linear.getResult(), shard::ReductionKind::Sum);
        linear.getResult().replaceAllUsesExcept(sum, sum.getDefiningOp());
        ++numAllReduces;
        continue;
      }
      if (auto attention = dyn_cast<dit::AttentionOp>(op)) {
        int64_t heads = attention.getNumHeads();
        if (heads % tp != 0)
          return attention.emitError()
                 << "text_encoder tp_size " << tp << " does not divide the " << heads
                 << " attention heads (see --dit-check-legality's text-encoder-heads)";
        attention.setNumHeads(heads / tp);
        attention.getResult().setType(cast<RankedTensorType>(attention.getInputs()[0].getType()));
        continue;
      }
      if (auto bias = dyn_cast<dit::RelativePositionBiasOp>(op)) {
        FailureOr<RankedTensorType> local = splitType(bias, bias.getType(), 1, tp, "bias heads");
        if (failed(local))
          return failure();
        bias.getResult().setType(*local);
        continue;
      }
      if (isa<dit::ActivationOp, dit::MulOp>(op))
        op->getResult(0).setType(op->getOperand(0).getType());
    }
    return success();
  }
};

} // namespace
} // namespace ditc
