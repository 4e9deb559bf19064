//===- PropagateSharding.cpp - the dit-propagate-sharding pass ------------===//
//
// One forward walk over each transformer function decides, for every value,
// which token kind it carries (image, text, joint, or a non-token tensor)
// and whether its feature dimension is split over tp, and records the
// result as #dit.sharding annotations. Decisions are local and explainable:
// each one follows from the op and its operands' shardings, plus one look
// ahead for linears (does the output feed attention heads or an MLP?).
//
//===----------------------------------------------------------------------===//
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"
#include "ditc/Transforms/ShardingAttrs.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace ditc {
#define GEN_PASS_DEF_PROPAGATESHARDING
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

enum class Tokens { None, Image, Text, Joint };

/// What the walk knows about one value.
struct ValueSharding {
  Tokens tokens = Tokens::None;
  bool tpSplit = false;            // feature (last) dimension split over tp
  SmallVector<int64_t> segments;   // global widths of the TP-split pieces
  int64_t textTokens = 0;          // for joint sequences
};

/// Does `linear`'s result reach attention q/k/v, or an MLP activation,
/// through ops that keep the feature layout (norms, rope, stream concat)?
/// Such a linear is the column-parallel half of a TP pair.
/// `reason` names what it feeds, for explanations.
bool feedsHeadsOrMLP(LinearOp linear, bool &feedsGated, std::string &reason) {
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

struct PropagateShardingPass
    : impl::PropagateShardingBase<PropagateShardingPass> {
  using PropagateShardingBase::PropagateShardingBase;

  MeshInfo mesh;
  SmallVector<Attribute> sequenceAxes; // ring, kv_gather, ulysses > 1
  int64_t tp = 1;
  llvm::DenseMap<Value, ValueSharding> known;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> info = readMeshInfo(module);
    if (failed(info))
      return signalPassFailure();
    mesh = *info;
    Builder b(&getContext());
    for (Axis axis : mesh.sequenceAxes())
      sequenceAxes.push_back(b.getStringAttr(axisName(axis)));
    tp = mesh.size(Axis::TP);
    if (mesh.size(Axis::Ring) > 1 && mesh.size(Axis::KVGather) > 1) {
      module.emitError() << "ring " << mesh.size(Axis::Ring) << " and kv_gather "
                         << mesh.size(Axis::KVGather)
                         << " both split rows; the partitioner supports one "
                            "(see --dit-check-legality)";
      return signalPassFailure();
    }

    for (auto fn : module.getOps<func::FuncOp>()) {
      auto component = fn->getAttrOfType<StringAttr>(
          DitDialect::kComponentAttrName);
      if (fn.isExternal() ||
          (component && !component.getValue().starts_with("transformer")))
        continue;
      if (failed(propagate(fn)))
        return signalPassFailure();
    }
  }

  /// The annotation for one value of `type`.
  ShardingAttr shardingOf(const ValueSharding &v, Type type, bool partial) {
    Builder b(&getContext());
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<Attribute> dims(tensor.getRank(), b.getArrayAttr({}));
    bool tokens = v.tokens != Tokens::None && tensor.getRank() == 3;
    if (tokens && v.tokens != Tokens::Text)
      dims[1] = b.getArrayAttr(sequenceAxes);
    if (v.tpSplit && tp > 1)
      dims.back() = b.getArrayAttr({b.getStringAttr("tp")});
    ArrayAttr partialAxes;
    if (partial && tp > 1)
      partialAxes = b.getArrayAttr({b.getStringAttr("tp")});
    return ShardingAttr::get(&getContext(), b.getArrayAttr(dims),
                             v.tokens == Tokens::Joint ? v.textTokens : 0,
                             partialAxes);
  }

  void annotate(Operation *op, ArrayRef<ValueSharding> results,
                bool partial = false) {
    SmallVector<Attribute> attrs;
    for (auto [value, sharding] : llvm::zip(op->getResults(), results)) {
      known[value] = sharding;
      attrs.push_back(shardingOf(sharding, value.getType(), partial));
    }
    op->setAttr(kShardingAttrName, ArrayAttr::get(&getContext(), attrs));
  }

  void explainDecision(Operation *op, const Twine &why) {
    if (explain)
      op->emitRemark() << why;
  }

  LogicalResult propagate(func::FuncOp fn) {
    // Arguments: latents, timesteps, text, [pooled text], [guidance].
    for (BlockArgument arg : fn.getArguments()) {
      ValueSharding v;
      auto type = cast<RankedTensorType>(arg.getType());
      if (arg.getArgNumber() == 2 && type.getRank() == 3)
        v.tokens = Tokens::Text;
      known[arg] = v;
    }
    WalkResult result = fn.walk([&](Operation *op) -> WalkResult {
      if (isa<func::ReturnOp>(op) || op == fn.getOperation())
        return WalkResult::advance();
      return visit(op);
    });
    return failure(result.wasInterrupted());
  }

  ValueSharding of(Value v) { return known.lookup(v); }

  WalkResult visit(Operation *op) {
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    if (isa<TimestepEmbeddingOp, AdaLNModulationOp>(op)) {
      annotate(op, {ValueSharding()});
      return WalkResult::advance();
    }
    if (isa<PatchEmbedOp>(op)) {
      ValueSharding v;
      v.tokens = Tokens::Image;
      annotate(op, {v});
      return WalkResult::advance();
    }
    if (auto linear = dyn_cast<LinearOp>(op)) {
      ValueSharding in = of(linear.getInput()), out = in;
      out.tpSplit = false;
      out.segments.clear();
      int64_t width = cast<RankedTensorType>(linear.getType()).getShape().back();
      if (in.tpSplit && tp > 1) {
        op->setAttr(kTPRoleAttrName, b.getStringAttr("row"));
        if (in.segments.size() > 1)
          op->setAttr(kTPSegmentsAttrName, b.getDenseI64ArrayAttr(in.segments));
        explainDecision(op, "'" + linear.getWeight() +
                                "' is row-parallel over tp: its input is split "
                                "over tp, so its output is a partial sum");
        annotate(op, {out}, /*partial=*/true);
        return WalkResult::advance();
      }
      bool gated = false;
      std::string reason;
      if (tp > 1 && in.tokens != Tokens::None &&
          feedsHeadsOrMLP(linear, gated, reason)) {
        out.tpSplit = true;
        out.segments = gated ? SmallVector<int64_t>{width / 2, width / 2}
                             : SmallVector<int64_t>{width};
        op->setAttr(kTPRoleAttrName, b.getStringAttr("column"));
        if (gated)
          op->setAttr(kTPSegmentsAttrName, b.getDenseI64ArrayAttr(out.segments));
        explainDecision(op, "'" + linear.getWeight() +
                                "' is column-parallel over tp: its output "
                                "feeds " + reason);
      }
      annotate(op, {out});
      return WalkResult::advance();
    }
    if (isa<LayerNormOp, RMSNormOp>(op)) {
      ValueSharding in = of(op->getOperand(0));
      bool grouped = op->getAttr("group_size") != nullptr;
      if (in.tpSplit && tp > 1 && !grouped) {
        op->setAttr(kReduceStatsAttrName,
                    b.getArrayAttr({b.getStringAttr("tp")}));
        explainDecision(op, "norm spans a width split over tp: its statistics "
                            "are all-reduced over tp");
      }
      annotate(op, {in});
      return WalkResult::advance();
    }
    if (isa<RotaryEmbeddingOp, ModulateOp>(op)) {
      annotate(op, {of(op->getOperand(0))});
      return WalkResult::advance();
    }
    if (auto add = dyn_cast<ResidualAddOp>(op)) {
      ValueSharding residual = of(add.getResidual()), branch = of(add.getBranch());
      if (residual.tpSplit != branch.tpSplit)
        return op->emitError() << "residual and branch disagree on the tp "
                                  "split of their features";
      annotate(op, {residual});
      return WalkResult::advance();
    }
    if (auto act = dyn_cast<ActivationOp>(op)) {
      ValueSharding v = of(act.getInput());
      if (v.tpSplit) {
        int64_t width = cast<RankedTensorType>(act.getType()).getShape().back();
        v.segments = {width};
      }
      annotate(op, {v});
      return WalkResult::advance();
    }
    if (auto attention = dyn_cast<AttentionOp>(op))
      return visitAttention(attention);
    if (auto concat = dyn_cast<ConcatStreamsOp>(op)) {
      ValueSharding text = of(concat.getText()), image = of(concat.getImage());
      if (text.tpSplit != image.tpSplit)
        return op->emitError() << "text and image streams disagree on the tp "
                                  "split of their features";
      ValueSharding v = image;
      v.tokens = Tokens::Joint;
      v.textTokens = cast<RankedTensorType>(concat.getText().getType()).getDimSize(1);
      annotate(op, {v});
      return WalkResult::advance();
    }
    if (auto split = dyn_cast<SplitStreamsOp>(op)) {
      ValueSharding in = of(split.getInput()), text = in, image = in;
      text.tokens = Tokens::Text;
      image.tokens = Tokens::Image;
      text.textTokens = image.textTokens = 0;
      annotate(op, {text, image});
      return WalkResult::advance();
    }
    if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
      ValueSharding v = of(concat.getInputs()[0]);
      v.segments.clear();
      for (Value input : concat.getInputs()) {
        ValueSharding part = of(input);
        if (part.tpSplit != v.tpSplit)
          return op->emitError() << "concatenated features disagree on their "
                                    "tp split";
        v.segments.push_back(
            cast<RankedTensorType>(input.getType()).getShape().back());
      }
      annotate(op, {v});
      return WalkResult::advance();
    }
    if (auto unpatchify = dyn_cast<UnpatchifyOp>(op)) {
      ValueSharding in = of(unpatchify.getInput());
      if (in.tpSplit)
        return op->emitError() << "unpatchify needs whole features";
      // The latents stay in patch-token layout, split like the image tokens
      // (dit-insert-collectives keeps the denoising state in that layout).
      op->setAttr("dit.latent_layout", b.getStringAttr("patch_tokens"));
      op->setAttr(kShardingAttrName, b.getArrayAttr({shardingOf(
                                         in, unpatchify.getInput().getType(),
                                         false)}));
      known[unpatchify.getResult()] = in;
      return WalkResult::advance();
    }
    return op->emitError() << "dit-propagate-sharding does not know how to "
                              "shard '"
                           << op->getName() << "'";
  }

  WalkResult visitAttention(AttentionOp attention) {
    Builder b(&getContext());
    ValueSharding q = of(attention.getInputs()[0]);
    SmallVector<Attribute> heads;
    if (tp > 1) {
      if (!q.tpSplit)
        return attention.emitError()
               << "attention under tp " << tp
               << " needs column-parallel q/k/v projections";
      heads.push_back(b.getStringAttr("tp"));
    }
    int64_t ulysses = mesh.size(Axis::Ulysses);
    bool sequenceSplit = !sequenceAxes.empty() && q.tokens != Tokens::Text &&
                         q.tokens != Tokens::None;
    std::string rows = "none";
    if (attention.getKind() == AttentionKind::Cross) {
      rows = "local";
    } else if (sequenceSplit && !attention.getShardOverSp()) {
      rows = "gather";
    } else if (sequenceSplit) {
      if (ulysses > 1)
        heads.push_back(b.getStringAttr("ulysses"));
      if (mesh.size(Axis::Ring) > 1)
        rows = "ring";
      else if (mesh.size(Axis::KVGather) > 1)
        rows = "kv_gather";
    }
    attention->setAttr(
        kAttentionPlanAttrName,
        b.getDictionaryAttr({b.getNamedAttr("heads", b.getArrayAttr(heads)),
                             b.getNamedAttr("rows", b.getStringAttr(rows))}));
    if (explain) {
      std::string headList;
      for (Attribute h : heads)
        headList += (headList.empty() ? "" : " x ") +
                    cast<StringAttr>(h).getValue().str();
      attention.emitRemark()
          << stringifyAttentionKind(attention.getKind()) << " attention: heads over "
          << (headList.empty() ? "nothing" : headList) << ", rows " << rows;
    }
    ValueSharding out = q;
    out.segments = {cast<RankedTensorType>(attention.getType()).getShape().back()};
    annotate(attention, {out});
    return WalkResult::advance();
  }
};

} // namespace
} // namespace ditc
