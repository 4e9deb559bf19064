//===- BatchBranches.cpp - the dit-batch-branches pass --------------------===//
//
// A role that runs several guidance branches through the same transformer
// calls it once on their concatenated batch, as diffusers' pipelines do with
// `torch.cat([latents] * 2)`: every weight is read once per step instead of
// once per branch, and each op works on k times the rows.
//
//===----------------------------------------------------------------------===//
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"
#include "VerifiedPass.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/MapVector.h"

namespace ditc {
#define GEN_PASS_DEF_BATCHBRANCHES
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

/// Why `op` cannot run on a batch of requests concatenated along dim 0, or
/// an empty string when it can. Dit ops say so with the BatchParallel trait
/// (DitTraits.h); the upstream ops a partitioned transformer holds can,
/// unless they move data along dim 0.
std::string batchRefusal(Operation &op) {
  if (op.hasTrait<BatchParallel>() || isa<func::ReturnOp, tensor::EmptyOp,
                                          shard::AllReduceOp>(op))
    return "";
  std::optional<int64_t> axis;
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    axis = concat.getDim();
  else if (auto stack = dyn_cast<StackOp>(op))
    axis = stack.getAxis();
  else if (auto unstack = dyn_cast<UnstackOp>(op))
    axis = unstack.getAxis();
  else if (auto split = dyn_cast<SplitOp>(op))
    axis = split.getAxis();
  else if (auto gather = dyn_cast<shard::AllGatherOp>(op))
    axis = gather.getGatherAxis().getSExtValue();
  else if (auto slice = dyn_cast<shard::AllSliceOp>(op))
    axis = slice.getSliceAxis().getSExtValue();
  else if (auto exchange = dyn_cast<shard::AllToAllOp>(op))
    axis = std::min(exchange.getSplitAxis().getSExtValue(),
                    exchange.getConcatAxis().getSExtValue());
  else
    return "'" + op.getName().getStringRef().str() +
           "' is not known to be batch-parallel";
  if (*axis == 0)
    return "'" + op.getName().getStringRef().str() +
           "' works along the batch dimension";
  return "";
}

/// `type` with its batch dimension multiplied by `factor`, or null when it
/// is not a tensor whose dim 0 is `batch`.
RankedTensorType batched(Type type, int64_t batch, int64_t factor) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < 1 || tensor.getDimSize(0) != batch)
    return {};
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] *= factor;
  return tensor.clone(shape);
}

/// One run's batching of a module's roles.
struct BranchBatcher {
  ModuleOp module;
  SymbolTable symbols;
  bool explain;
  /// Each transformer batched so far and its batched copy.
  SmallVector<std::pair<func::FuncOp, func::FuncOp>> copies;
  int64_t groupsBatched = 0;

  BranchBatcher(ModuleOp module, bool explain)
      : module(module), symbols(module), explain(explain) {}

  LogicalResult run() {
    DitDialect &dialect = DitDialect::get(module.getContext());
    SmallVector<func::FuncOp> roles;
    for (auto fn : module.getOps<func::FuncOp>())
      if (dialect.getRoleAttrHelper().getAttr(fn))
        roles.push_back(fn);
    for (func::FuncOp role : roles)
      if (failed(batchRole(role)))
        return failure();
    // A transformer no role calls unbatched any more gives its name to the
    // batched copy: the plan's function keeps the component's name.
    for (auto [original, wide] : copies) {
      if (!SymbolTable::symbolKnownUseEmpty(original, module))
        continue;
      StringAttr name = original.getNameAttr();
      symbols.erase(original);
      if (failed(symbols.rename(wide, name)))
        return wide.emitError() << "cannot take the name @" << name.getValue();
    }
    return success();
  }

  /// Batches each group of calls of `role` to one callee.
  LogicalResult batchRole(func::FuncOp role) {
    llvm::MapVector<StringAttr, SmallVector<func::CallOp>> byCallee;
    for (auto call : role.front().getOps<func::CallOp>())
      byCallee[call.getCalleeAttr().getAttr()].push_back(call);
    for (auto &[name, calls] : byCallee) {
      if (calls.size() < 2)
        continue;
      auto callee = symbols.lookup<func::FuncOp>(name);
      if (!callee || callee.isExternal())
        return calls.front().emitError()
               << "calls @" << name.getValue() << ", which has no body";
      std::string refusal = refusalFor(calls, callee);
      if (!refusal.empty()) {
        if (explain)
          calls.front().emitRemark()
              << "the " << calls.size() << " calls of @" << name.getValue()
              << " stay separate: " << refusal;
        continue;
      }
      FailureOr<func::FuncOp> wide = batchedCallee(callee, calls.size());
      if (failed(wide))
        return failure();
      replaceCalls(calls, *wide);
      ++groupsBatched;
      if (explain)
        role.emitRemark() << "runs its " << calls.size() << " calls of @"
                          << name.getValue() << " as one call of @"
                          << wide->getName();
    }
    return success();
  }

  /// Why `calls` cannot become one batched call of `callee`; empty when
  /// they can.
  std::string refusalFor(ArrayRef<func::CallOp> calls, func::FuncOp callee) {
    if (!callee.getBody().hasOneBlock())
      return "@" + callee.getName().str() + " has more than one block";
    Block &body = callee.front();
    if (body.getNumArguments() == 0)
      return "@" + callee.getName().str() + " takes no arguments";
    auto first = dyn_cast<RankedTensorType>(body.getArgument(0).getType());
    if (!first || first.getRank() < 1)
      return "its first argument has no batch dimension";
    int64_t batch = first.getDimSize(0);
    for (Value arg : body.getArguments())
      if (!batched(arg.getType(), batch, 1))
        return "an argument of type " + typeString(arg.getType()) +
               " does not lead with the batch " + std::to_string(batch);
    for (Operation &op : body) {
      std::string refusal = batchRefusal(op);
      if (!refusal.empty())
        return refusal;
      for (Type type : op.getResultTypes())
        if (!batched(type, batch, 1))
          return "'" + op.getName().getStringRef().str() + "' yields " +
                 typeString(type) + ", which does not lead with the batch " +
                 std::to_string(batch);
    }
    // Every call moves to the first one's place, so its operands must
    // already be there.
    Operation *at = calls.front();
    for (func::CallOp call : calls)
      for (Value v : call.getOperands())
        if (Operation *def = v.getDefiningOp())
          if (def->getBlock() != at->getBlock() || !def->isBeforeInBlock(at))
            return "an operand of a later call is computed after the first";
    return "";
  }

  /// @<callee>_batch<k>: the callee with every value's batch dimension k
  /// times as large. Reused when another role made it already.
  FailureOr<func::FuncOp> batchedCallee(func::FuncOp callee, int64_t k) {
    std::string name = (callee.getName() + "_batch" + Twine(k)).str();
    if (auto existing = symbols.lookup<func::FuncOp>(name))
      return existing;
    auto wide = cast<func::FuncOp>(callee->clone());
    wide.setName(name);
    Block &body = wide.front();
    int64_t batch = cast<RankedTensorType>(body.getArgument(0).getType()).getDimSize(0);
    for (BlockArgument arg : body.getArguments())
      arg.setType(batched(arg.getType(), batch, k));
    for (Operation &op : body)
      for (OpResult result : op.getResults())
        result.setType(batched(result.getType(), batch, k));
    SmallVector<Type> results;
    for (Value v : body.getTerminator()->getOperands())
      results.push_back(v.getType());
    wide.setType(FunctionType::get(module.getContext(), body.getArgumentTypes(), results));
    symbols.insert(wide, std::next(Block::iterator(callee)));
    if (failed(verify(wide)))
      return wide.emitError() << "the batched copy of @" << callee.getName()
                              << " does not verify";
    copies.emplace_back(callee, wide);
    return wide;
  }

  /// One call of `wide` on the operands concatenated along dim 0, and each
  /// call's results cut back out of it with dit.split.
  void replaceCalls(ArrayRef<func::CallOp> calls, func::FuncOp wide) {
    func::CallOp first = calls.front();
    OpBuilder b(first);
    Location loc = first.getLoc();
    int64_t k = calls.size();
    SmallVector<Value> operands;
    for (unsigned i = 0; i < first.getNumOperands(); ++i) {
      SmallVector<Value> parts;
      for (func::CallOp call : calls)
        parts.push_back(call.getOperand(i));
      operands.push_back(tensor::ConcatOp::create(b, loc, 0, parts));
    }
    auto call = func::CallOp::create(b, loc, wide, operands);
    for (unsigned r = 0; r < call.getNumResults(); ++r) {
      auto split = SplitOp::create(b, loc, call.getResult(r), b.getI64IntegerAttr(0),
                                   b.getI64IntegerAttr(k));
      for (auto [j, old] : llvm::enumerate(calls))
        func::CallOp(old).getResult(r).replaceAllUsesWith(split.getResult(j));
    }
    for (func::CallOp old : calls)
      old->erase();
  }

  static std::string typeString(Type type) {
    std::string out;
    llvm::raw_string_ostream os(out);
    os << type;
    return out;
  }
};

struct BatchBranchesPass
    : VerifiedPass<impl::BatchBranchesBase<BatchBranchesPass>> {
  using VerifiedPass::VerifiedPass;

  void runOnModule() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> mesh = readMeshInfo(module);
    if (failed(mesh))
      return signalPassFailure();
    // With pipeline stages the branch calls are the pipeline's
    // micro-batches: batching them would leave one stage idle while the
    // other works (docs/axes/pp.md).
    if (mesh->size(Axis::PP) > 1) {
      if (explain)
        module.emitRemark() << "branches stay separate calls: with pp "
                            << mesh->size(Axis::PP)
                            << " they are the pipeline's micro-batches";
      return;
    }
    BranchBatcher batcher(module, explain);
    if (failed(batcher.run()))
      return signalPassFailure();
    numBatched += batcher.groupsBatched;
  }
};

} // namespace
} // namespace ditc
