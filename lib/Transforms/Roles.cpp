//===- Roles.cpp - the collectives a role program issues ------------------===//
#include "ditc/Transforms/Roles.h"
#include "ditc/Transforms/ShardingAttrs.h"

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
    std::string attrs;
    if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      c.kind = "all_reduce";
      c.gridAxes.assign(reduce.getGridAxes().begin(), reduce.getGridAxes().end());
    } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      c.kind = "all_gather";
      c.gridAxes.assign(gather.getGridAxes().begin(), gather.getGridAxes().end());
      attrs = " gather_axis " + std::to_string(gather.getGatherAxis().getSExtValue());
    } else if (auto a2a = dyn_cast<shard::AllToAllOp>(op)) {
      c.kind = "all_to_all";
      c.gridAxes.assign(a2a.getGridAxes().begin(), a2a.getGridAxes().end());
      attrs = " split_axis " + std::to_string(a2a.getSplitAxis().getSExtValue()) +
              " concat_axis " + std::to_string(a2a.getConcatAxis().getSExtValue());
    } else if (auto send = dyn_cast<shard::SendOp>(op)) {
      c.kind = "send";
      c.gridAxes.assign(send.getGridAxes().begin(), send.getGridAxes().end());
      c.peer = send.getDestination().empty() ? -1 : send.getDestination()[0];
    } else if (auto recv = dyn_cast<shard::RecvOp>(op)) {
      c.kind = "recv";
      c.gridAxes.assign(recv.getGridAxes().begin(), recv.getGridAxes().end());
      c.peer = recv.getSource() ? (*recv.getSource())[0] : -1;
    } else if (auto attention = dyn_cast<dit::AttentionOp>(op)) {
      auto ring = op->getAttrOfType<IntegerAttr>(kRingAxisAttrName);
      if (!ring)
        return;
      c.kind = "ring_attention";
      c.gridAxes.push_back(int16_t(ring.getInt()));
    } else if (isa<dit::RMSNormOp, dit::LayerNormOp>(op) &&
               op->hasAttr(kReduceStatsAttrName)) {
      c.kind = "all_reduce_stats";
      c.gridAxes.push_back(-1); // resolved by name below
    } else {
      return;
    }
    if (c.kind == "send" || c.kind == "recv") {
      // Only the tensor moves; recv's operand is a placeholder.
      c.signature = c.kind + " " + typesOf(op->getResultTypes());
    } else {
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
