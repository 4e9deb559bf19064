//===- StepAccounting.cpp - per-step traffic, memory and FLOPs of a role --===//
//
// The figures of docs/plan-format.md ("per_step"), computed from the IR the
// partition pipeline leaves: local shapes, the upstream shard collectives,
// the pass attributes that mark ring attention, TP-split linears and norms
// with reduced statistics.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/StepAccounting.h"
#include "ditc/Transforms/ShardingAttrs.h"

#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <algorithm>
#include <set>

using namespace mlir;

namespace ditc {
namespace {

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

int64_t elementBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

int64_t elements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Bytes of a ranked tensor; 0 for anything else (the plan holds tensors
/// only, and the serializer refuses others).
int64_t valueBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  return elements(tensor.getShape()) * elementBytes(tensor.getElementType());
}

std::string axesName(const MeshInfo &mesh, ArrayRef<int16_t> gridAxes) {
  std::string out;
  for (int16_t a : gridAxes)
    out += (out.empty() ? "" : "+") + std::string(axisName(mesh.order[a]));
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

std::vector<ParamSlice> parameterSlices(Operation *op, const MeshInfo &mesh) {
  auto weight = op->getAttrOfType<StringAttr>("weight");
  if (!weight || op->getNumResults() == 0)
    return {};
  std::string name = weight.str();
  int64_t tp = mesh.size(Axis::TP);
  Type elt = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  std::vector<ParamSlice> out;
  auto add = [&](const std::string &param, std::vector<int64_t> shape,
                 int64_t splitDim, std::vector<int64_t> segments,
                 bool rank0Only = false) {
    ParamSlice p;
    p.name = param;
    p.shape = shape;
    std::vector<int64_t> local = shape;
    if (splitDim >= 0 && tp > 1) {
      p.splitDim = splitDim;
      p.segments = segments.empty() ? std::vector<int64_t>{shape[splitDim]}
                                    : segments;
      local[splitDim] /= tp;
    }
    p.onlyOnTPCoordinate0 = rank0Only;
    p.localBytes = elements(local) * elementBytes(elt);
    out.push_back(std::move(p));
  };
  // Each op names its parameters (DitParameterOpInterface).
  SmallVector<dit::ParameterSpec> specs;
  if (auto parameters = dyn_cast<dit::DitParameterOpInterface>(op))
    parameters.getParameters(tp, specs);
  for (const dit::ParameterSpec &spec : specs) {
    add(spec.name, std::vector<int64_t>(spec.shape.begin(), spec.shape.end()),
        spec.splitDim,
        std::vector<int64_t>(spec.segments.begin(), spec.segments.end()),
        spec.rank0Only);
    out.back().checkpointShape.assign(spec.checkpointShape.begin(),
                                      spec.checkpointShape.end());
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Traffic
//===----------------------------------------------------------------------===//

std::optional<Traffic> opTraffic(Operation *op, const MeshInfo &mesh) {
  // Ring all-reduce 2(n-1)/n |x|, all-gather (n-1) |input|, all-to-all
  // (n-1)/n |x|, send |x|; each rounded down per op.
  auto collective = [&](StringRef kind, ArrayRef<int16_t> axes,
                        double factor, Type type) {
    return Traffic{kind.str(), axesName(mesh, axes), 1,
                   int64_t(factor * double(valueBytes(type)))};
  };
  if (auto r = dyn_cast<shard::AllReduceOp>(op)) {
    int64_t n = mesh.groupSize(r.getGridAxes());
    return collective("all_reduce", r.getGridAxes(), 2.0 * (n - 1) / n,
                      r.getInput().getType());
  }
  if (auto g = dyn_cast<shard::AllGatherOp>(op)) {
    int64_t n = mesh.groupSize(g.getGridAxes());
    return collective("all_gather", g.getGridAxes(), double(n - 1),
                      g.getInput().getType());
  }
  if (auto a = dyn_cast<shard::AllToAllOp>(op)) {
    int64_t n = mesh.groupSize(a.getGridAxes());
    return collective("all_to_all", a.getGridAxes(), double(n - 1) / n,
                      a.getInput().getType());
  }
  if (auto s = dyn_cast<shard::SendOp>(op))
    return collective("send", s.getGridAxes(), 1.0, s.getInput().getType());
  if (auto r = dyn_cast<shard::RecvOp>(op))
    return Traffic{"recv", axesName(mesh, r.getGridAxes()), 1, 0};
  // dit ops that communicate themselves (ring attention's K/V shifts, a
  // norm's statistics) count their own traffic (DitCostOpInterface).
  if (auto cost = dyn_cast<dit::DitCostOpInterface>(op)) {
    SmallVector<dit::Traffic> traffic;
    cost.getTraffic(meshContextOf(mesh), traffic);
    if (traffic.empty())
      return std::nullopt;
    Traffic total{traffic.front().kind, traffic.front().axis, 0, 0};
    for (const dit::Traffic &t : traffic) {
      total.count += t.count;
      total.bytes += int64_t(t.bytes);
    }
    return total;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// FLOPs
//===----------------------------------------------------------------------===//

std::optional<RingAttentionShape> ringAttentionShape(Operation *op,
                                                     const MeshInfo &mesh) {
  auto attention = dyn_cast<dit::AttentionOp>(op);
  std::optional<int16_t> axis = dit::getRingAxis(op);
  if (!attention || !axis || attention.getInputs().size() < 2)
    return std::nullopt;
  RingAttentionShape shape;
  shape.members = mesh.size(mesh.order[*axis]);
  int64_t keys =
      cast<RankedTensorType>(attention.getInputs()[1].getType()).getDimSize(1);
  shape.textKeys = attention.getTextTokens();
  shape.blockKeys = keys - shape.textKeys;
  shape.merges = shape.members + (shape.textKeys > 0 ? 1 : 0) - 1;
  shape.outputElements =
      elements(cast<RankedTensorType>(op->getResult(0).getType()).getShape());
  return shape;
}

int64_t opFlops(Operation *op, const MeshInfo &mesh) {
  // Each op counts its own work on its local types (DitCostOpInterface).
  auto cost = dyn_cast<dit::DitCostOpInterface>(op);
  if (!cost)
    return 0;
  int64_t flops = cost.getFlops();
  // Ring attention's local keys are one member's rows; over the R - 1 hops
  // every member's image rows pass by, and the replicated text rows are
  // attended once. Only the mesh knows R. Each block after the first is
  // merged into the running output.
  std::optional<RingAttentionShape> ring = ringAttentionShape(op, mesh);
  if (!ring)
    return flops;
  int64_t keys = ring->textKeys + ring->blockKeys;
  int64_t seen = ring->textKeys + ring->blockKeys * ring->members;
  int64_t scores = keys ? flops / keys * seen : 0;
  return scores +
         kRingMergeFlopsPerElement * ring->outputElements * ring->merges;
}

//===----------------------------------------------------------------------===//
// A whole step
//===----------------------------------------------------------------------===//

namespace {

/// Accounts functions once each; calls add their callee's figures.
class StepAccountant {
public:
  StepAccountant(const MeshInfo &mesh) : mesh(mesh) {}

  struct FunctionFigures {
    std::map<std::string, int64_t> collectives, bytesSent;
    int64_t flops = 0;
    int64_t peak = 0; // live bytes, callees' peaks included
  };

  FailureOr<const FunctionFigures *> account(func::FuncOp fn) {
    auto known = done.find(fn.getOperation());
    if (known != done.end())
      return &known->second;
    if (!active.insert(fn.getOperation()).second)
      return fn.emitError() << "calls itself; a role program is a call tree";
    FunctionFigures figures;
    int64_t calleePeak = 0;
    Block &body = fn.front();
    for (Operation &op : body.without_terminator()) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (!callee || callee.isExternal())
          return call.emitError()
                 << "calls " << call.getCallee()
                 << ", which has no body to account for";
        FailureOr<const FunctionFigures *> inner = account(callee);
        if (failed(inner))
          return failure();
        for (const auto &[kind, n] : (*inner)->collectives)
          figures.collectives[kind] += n;
        for (const auto &[axes, n] : (*inner)->bytesSent)
          figures.bytesSent[axes] += n;
        figures.flops += (*inner)->flops;
        calleePeak = std::max(calleePeak, (*inner)->peak);
        continue;
      }
      for (const ParamSlice &p : parameterSlices(&op, mesh))
        // A transformer called once per branch reads its weights twice
        // but holds them once.
        if (counted.insert(p.name).second)
          paramBytes += p.localBytes;
      if (std::optional<Traffic> t = opTraffic(&op, mesh)) {
        figures.collectives[t->kind] += t->count;
        figures.bytesSent[t->axes] += t->bytes;
      }
      figures.flops += opFlops(&op, mesh);
    }
    figures.peak = peakLiveBytes(body, calleePeak);
    active.erase(fn.getOperation());
    return &done.emplace(fn.getOperation(), std::move(figures)).first->second;
  }

  int64_t paramBytes = 0;

private:
  /// Scans definitions and last uses in program order: arguments are live
  /// from the start, results from their op, and a value dies after its last
  /// use (values the terminator returns live to the end). A call adds the
  /// largest peak among this function's callees while it runs.
  static int64_t peakLiveBytes(Block &body, int64_t calleePeak) {
    llvm::DenseMap<Value, Operation *> lastUser;
    for (Operation &op : body)
      for (Value v : op.getOperands())
        lastUser[v] = &op;
    int64_t live = 0, peak = 0;
    for (BlockArgument arg : body.getArguments())
      live += valueBytes(arg.getType());
    for (Operation &op : body.without_terminator()) {
      for (Value v : op.getResults())
        live += valueBytes(v.getType());
      peak = std::max(peak, live + (isa<func::CallOp>(op) ? calleePeak : 0));
      llvm::SmallPtrSet<Value, 4> dying;
      for (Value v : op.getOperands())
        if (lastUser.lookup(v) == &op && dying.insert(v).second)
          live -= valueBytes(v.getType());
    }
    return peak;
  }

  const MeshInfo &mesh;
  std::map<Operation *, FunctionFigures> done;
  llvm::SmallPtrSet<Operation *, 4> active;
  std::set<std::string> counted; // parameter names already in paramBytes
};

} // namespace

FailureOr<StepStats> accountStep(func::FuncOp fn, const MeshInfo &mesh) {
  if (fn.isExternal())
    return fn.emitError() << "has no body to account for";
  StepAccountant accountant(mesh);
  FailureOr<const StepAccountant::FunctionFigures *> figures =
      accountant.account(fn);
  if (failed(figures))
    return failure();
  StepStats stats;
  stats.collectives = (*figures)->collectives;
  stats.bytesSent = (*figures)->bytesSent;
  stats.flops = (*figures)->flops;
  stats.activationBytes = (*figures)->peak;
  stats.paramBytes = accountant.paramBytes;
  return stats;
}

} // namespace ditc
