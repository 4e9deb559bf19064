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

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <algorithm>
#include <set>

using namespace mlir;

namespace ditc {
namespace {

//===----------------------------------------------------------------------===//
// The pass attributes accounting reads, one reader each
//===----------------------------------------------------------------------===//

/// `dit.tp` on a linear: "column", "row", or "" when it is not TP-split.
StringRef tpRole(Operation *op) {
  auto role = op->getAttrOfType<StringAttr>(kTPRoleAttrName);
  return role ? role.getValue() : StringRef();
}

/// `dit.tp_segments`: the global widths the split dimension is made of
/// (empty: one piece).
std::vector<int64_t> tpSegments(Operation *op) {
  auto segments = op->getAttrOfType<DenseI64ArrayAttr>(kTPSegmentsAttrName);
  if (!segments)
    return {};
  return {segments.asArrayRef().begin(), segments.asArrayRef().end()};
}

/// `dit.reduce_stats_over` on a norm: its statistics are all-reduced over tp.
bool reducesStatsOverTP(Operation *op) {
  return op->hasAttr(kReduceStatsAttrName);
}

/// `dit.ring_axis` on attention: the grid axis K and V rotate over.
std::optional<int16_t> ringGridAxis(Operation *op) {
  auto ring = op->getAttrOfType<IntegerAttr>(kRingAxisAttrName);
  if (!ring)
    return std::nullopt;
  return int16_t(ring.getInt());
}

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

int64_t valueElements(Value v) {
  auto tensor = dyn_cast<RankedTensorType>(v.getType());
  return tensor ? elements(tensor.getShape()) : 0;
}

int64_t lastDim(Value v) {
  auto tensor = cast<RankedTensorType>(v.getType());
  return tensor.getRank() ? tensor.getShape().back() : 1;
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
  if (auto linear = dyn_cast<dit::LinearOp>(op)) {
    int64_t in = lastDim(linear.getInput()), width = lastDim(linear.getResult());
    StringRef role = tpRole(op);
    if (role == "column") {
      add(name + ".weight", {width * tp, in}, 0, tpSegments(op));
      if (linear.getBias())
        add(name + ".bias", {width * tp}, 0, tpSegments(op));
    } else if (role == "row") {
      add(name + ".weight", {width, in * tp}, 1, tpSegments(op));
      if (linear.getBias())
        add(name + ".bias", {width}, -1, {}, /*rank0Only=*/true);
    } else {
      add(name + ".weight", {width, in}, -1, {});
      if (linear.getBias())
        add(name + ".bias", {width}, -1, {});
    }
  } else if (isa<dit::LayerNormOp, dit::RMSNormOp>(op)) {
    int64_t width = lastDim(op->getResult(0));
    auto group = op->getAttrOfType<IntegerAttr>("group_size");
    bool split = reducesStatsOverTP(op);
    std::vector<int64_t> shape = {
        group ? group.getInt() : (split ? width * tp : width)};
    int64_t splitDim = split && !group ? 0 : -1;
    add(name + ".weight", shape, splitDim, {});
    if (isa<dit::LayerNormOp>(op))
      add(name + ".bias", shape, splitDim, {});
  } else if (auto adaln = dyn_cast<dit::AdaLNModulationOp>(op)) {
    auto r = cast<RankedTensorType>(adaln.getType());
    int64_t e = lastDim(adaln.getCondition());
    if (adaln.getTable()) {
      add(name, {1, r.getDimSize(1), r.getDimSize(2)}, -1, {});
    } else {
      add(name + ".weight", {r.getDimSize(1) * r.getDimSize(2), e}, -1, {});
      add(name + ".bias", {r.getDimSize(1) * r.getDimSize(2)}, -1, {});
    }
  } else if (auto t = dyn_cast<dit::TimestepEmbeddingOp>(op)) {
    int64_t d = lastDim(t.getResult()), f = t.getFreqDim();
    add(name + ".linear_1.weight", {d, f}, -1, {});
    add(name + ".linear_1.bias", {d}, -1, {});
    add(name + ".linear_2.weight", {d, d}, -1, {});
    add(name + ".linear_2.bias", {d}, -1, {});
  } else if (auto p = dyn_cast<dit::PatchEmbedOp>(op)) {
    int64_t d = lastDim(p.getResult()), f = lastDim(p.getLatents());
    add(name + ".weight", {d, f}, -1, {});
    add(name + ".bias", {d}, -1, {});
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
  if (auto attention = dyn_cast<dit::AttentionOp>(op)) {
    std::optional<int16_t> axis = ringGridAxis(op);
    if (!axis || op->getNumOperands() < 2)
      return std::nullopt;
    int64_t hops = mesh.size(mesh.order[*axis]) - 1;
    // K and V image blocks rotate; replicated text rows stay.
    auto k = cast<RankedTensorType>(op->getOperand(1).getType());
    int64_t rows = k.getDimSize(1) - attention.getTextTokens();
    int64_t block = rows * k.getDimSize(0) * k.getDimSize(2) *
                    elementBytes(k.getElementType());
    return Traffic{"shift", axisName(mesh.order[*axis]), 2 * hops,
                   2 * hops * block};
  }
  if (isa<dit::RMSNormOp, dit::LayerNormOp>(op) && reducesStatsOverTP(op)) {
    // One f32 statistic per token (two for layer norm: sum and sum of
    // squares), all-reduced over tp.
    auto x = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t n = mesh.size(Axis::TP);
    int64_t statistics = isa<dit::LayerNormOp>(op) ? 2 : 1;
    double bytes =
        double(elements(x.getShape()) / x.getShape().back()) * statistics * 4;
    return Traffic{"all_reduce", "tp", 1, int64_t(2.0 * (n - 1) / n * bytes)};
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// FLOPs
//===----------------------------------------------------------------------===//

int64_t opFlops(Operation *op, const MeshInfo &mesh) {
  if (op->getNumResults() == 0)
    return 0;
  Value result = op->getResult(0);
  // A GEMM whose output is `result`: 2 M N K = 2 |result| K.
  auto gemm = [&](int64_t k) { return 2 * valueElements(result) * k; };
  if (auto linear = dyn_cast<dit::LinearOp>(op))
    return gemm(lastDim(linear.getInput()));
  if (auto embed = dyn_cast<dit::PatchEmbedOp>(op)) {
    // Before partitioning the latents are [B, C, (F,) H, W]; after, patch
    // tokens. Either way every token reads |latents| / tokens features.
    int64_t tokens = valueElements(result) / lastDim(result);
    return gemm(tokens ? valueElements(embed.getLatents()) / tokens : 0);
  }
  if (auto t = dyn_cast<dit::TimestepEmbeddingOp>(op))
    return gemm(t.getFreqDim()) + gemm(lastDim(result));
  if (auto adaln = dyn_cast<dit::AdaLNModulationOp>(op)) {
    if (adaln.getTable())
      return valueElements(result);
    return gemm(lastDim(adaln.getCondition()));
  }
  if (auto attention = dyn_cast<dit::AttentionOp>(op)) {
    // Scores Q K^T and their product with V: 2 B H Lq Lk d each, where
    // H d is the local query width.
    if (op->getNumOperands() == 0)
      return 0;
    auto q = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t batch = q.getDimSize(0), rows = q.getDimSize(1);
    int64_t width = q.getDimSize(2), keys = rows;
    if (op->getNumOperands() == 1) {
      width /= 3; // stacked [B, L, 3 H d]
    } else {
      keys = cast<RankedTensorType>(op->getOperand(1).getType()).getDimSize(1);
    }
    if (std::optional<int16_t> axis = ringGridAxis(op)) {
      // Over the R - 1 hops every ring member's image rows pass by; the
      // replicated text rows are attended once.
      int64_t text = attention.getTextTokens();
      keys = text + (keys - text) * mesh.size(mesh.order[*axis]);
    }
    return 4 * batch * rows * keys * width;
  }
  if (isa<dit::LayerNormOp, dit::RMSNormOp, dit::ModulateOp,
          dit::ResidualAddOp, dit::ActivationOp, dit::RotaryEmbeddingOp,
          dit::CFGCombineOp, dit::SchedulerStepOp>(op))
    return valueElements(result);
  return 0;
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
