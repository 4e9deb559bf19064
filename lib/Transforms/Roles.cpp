//===- Roles.cpp - the collectives a role program issues ------------------===//
#include "ditc/Transforms/Roles.h"
#include "ditc/Transforms/ShardingAttrs.h"

#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ditc {

namespace {

std::string typesOf(TypeRange types) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(types, os);
  return out;
}

void collect(func::FuncOp fn, std::vector<CollectiveCall> &calls,
             llvm::SmallPtrSetImpl<Operation *> &active) {
  if (!active.insert(fn).second)
    return; // no recursion in dit programs; guard anyway
  fn.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr());
          callee && !callee.isExternal())
        collect(callee, calls, active);
      return;
    }
    CollectiveCall c;
    c.op = op;
    if (auto send = dyn_cast<shard::SendOp>(op)) {
      c.kind = "send";
      c.gridAxes.assign(send.getGridAxes().begin(), send.getGridAxes().end());
      c.peer = send.getDestination().empty() ? -1 : send.getDestination()[0];
      c.signature = "send " + typesOf(op->getResultTypes());
    } else if (auto recv = dyn_cast<shard::RecvOp>(op)) {
      c.kind = "recv";
      c.gridAxes.assign(recv.getGridAxes().begin(), recv.getGridAxes().end());
      c.peer = recv.getSource() ? (*recv.getSource())[0] : -1;
      // Only the tensor moves; recv's operand is a placeholder.
      c.signature = "recv " + typesOf(op->getResultTypes());
    } else if (auto shardable = dyn_cast<dit::DitShardableOpInterface>(op)) {
      // dit ops that communicate themselves (ring attention, a norm's
      // statistics all-reduce) say so through their interface.
      std::optional<dit::ImplicitCollective> implicit =
          shardable.getImplicitCollective();
      if (!implicit)
        return;
      c.kind = implicit->kind;
      c.gridAxes.push_back(implicit->gridAxis); // -1: tp, resolved below
    } else if (op->getDialect() &&
               op->getDialect()->getNamespace() == "shard" &&
               !isa<shard::AllSliceOp>(op)) {
      // Every other shard communication op (all_reduce, all_gather,
      // all_to_all, broadcast, gather, reduce, reduce_scatter, scatter,
      // shift): members must agree on all of its attributes.
      auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
      if (!axes)
        return;
      c.kind = op->getName().stripDialect().str();
      c.gridAxes.assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
    } else {
      return;
    }
    if (c.signature.empty()) {
      std::string attrs;
      llvm::raw_string_ostream os(attrs);
      for (NamedAttribute a : op->getAttrs())
        if (a.getName() != "grid" && !a.getName().getValue().starts_with("dit.block"))
          os << " " << a.getName().getValue() << "=" << a.getValue();
      os.flush();
      c.signature = c.kind + " (" + typesOf(op->getOperandTypes()) + ") -> (" +
                    typesOf(op->getResultTypes()) + ")" + attrs;
    }
    if (op->hasAttr(kBetweenStepsAttrName))
      c.signature += " between steps";
    calls.push_back(std::move(c));
  });
  active.erase(fn);
}

} // namespace

std::vector<CollectiveCall> collectCollectives(func::FuncOp fn) {
  std::vector<CollectiveCall> calls;
  llvm::SmallPtrSet<Operation *, 8> active;
  collect(fn, calls, active);
  // Statistics reductions run on the tp axis of the module's grid.
  if (auto module = fn->getParentOfType<ModuleOp>())
    if (FailureOr<MeshInfo> mesh = readMeshInfo(module); succeeded(mesh))
      for (CollectiveCall &c : calls)
        if (c.kind == "all_reduce_stats")
          c.gridAxes = {mesh->gridAxis(Axis::TP)};
  return calls;
}

} // namespace ditc
