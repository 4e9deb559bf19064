//===- ProgramSerializer.cpp - a role function as a plan program ----------===//
//
// Flattens a role function into numbered values and ops; a call becomes a
// `call` op naming an entry of `functions`, serialized once however often
// it is called. Parameter slices come from the step accounting, so the plan
// and the per-step figures describe the same slices.
//
//===----------------------------------------------------------------------===//
#include "ditc/Plan/ProgramSerializer.h"
#include "ditc/Analysis/Overlap.h"
#include "ditc/Analysis/StepAccounting.h"
#include "ditc/Transforms/Roles.h"
#include "ditc/Transforms/ShardingAttrs.h"
#include "ditc/Transforms/StepInputs.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <set>

using namespace mlir;
using nlohmann::json;

namespace ditc {

FailureOr<json> attributeJson(Attribute attr) {
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getType().isInteger(1))
      return json(i.getValue().getBoolValue());
    return json(i.getInt());
  }
  if (auto f = dyn_cast<FloatAttr>(attr))
    return json(f.getValueAsDouble());
  if (auto s = dyn_cast<StringAttr>(attr))
    return json(s.str());
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return json(std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = dyn_cast<DenseI16ArrayAttr>(attr))
    return json(std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = dyn_cast<DenseF64ArrayAttr>(attr))
    return json(std::vector<double>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    json out = json::array();
    for (Attribute element : a) {
      FailureOr<json> value = attributeJson(element);
      if (failed(value))
        return failure();
      out.push_back(std::move(*value));
    }
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    json out = json::object();
    for (NamedAttribute entry : d) {
      FailureOr<json> value = attributeJson(entry.getValue());
      if (failed(value))
        return failure();
      out[entry.getName().str()] = std::move(*value);
    }
    return out;
  }
  if (auto s = dyn_cast<FlatSymbolRefAttr>(attr))
    return json(s.getValue().str());
  if (isa<UnitAttr>(attr))
    return json(true);
  // Enums by their keyword: #dit<text_position prefix> is "prefix".
  if (auto e = dyn_cast<dit::TextPositionAttr>(attr))
    return json(dit::stringifyTextPosition(e.getValue()).str());
  if (auto e = dyn_cast<dit::RopeStyleAttr>(attr))
    return json(dit::stringifyRopeStyle(e.getValue()).str());
  if (auto e = dyn_cast<dit::PatchKernelAttr>(attr))
    return json(dit::stringifyPatchKernel(e.getValue()).str());
  if (auto e = dyn_cast<dit::FeatureOrderAttr>(attr))
    return json(dit::stringifyFeatureOrder(e.getValue()).str());
  if (auto e = dyn_cast<dit::AttentionKindAttr>(attr))
    return json(dit::stringifyAttentionKind(e.getValue()).str());
  if (auto e = dyn_cast<dit::ActivationKindAttr>(attr))
    return json(dit::stringifyActivationKind(e.getValue()).str());
  if (auto e = dyn_cast<dit::QKVLayoutAttr>(attr))
    return json(dit::stringifyQKVLayout(e.getValue()).str());
  if (auto e = dyn_cast<dit::KVCacheAttr>(attr))
    return json(dit::stringifyKVCache(e.getValue()).str());
  if (auto e = dyn_cast<dit::SchedulerKindAttr>(attr))
    return json(dit::stringifySchedulerKind(e.getValue()).str());
  if (auto e = dyn_cast<dit::ComponentKindAttr>(attr))
    return json(dit::stringifyComponentKind(e.getValue()).str());
  if (auto e = dyn_cast<shard::ReductionKindAttr>(attr))
    return json(shard::stringifyReductionKind(e.getValue()).str());
  if (auto e = dyn_cast<dit::LatentLayoutAttr>(attr))
    return json(dit::stringifyLatentLayout(e.getValue()).str());
  if (auto e = dyn_cast<dit::PipelineComponentAttr>(attr))
    return json(dit::stringifyPipelineComponent(e.getValue()).str());
  return failure();
}

namespace {

//===----------------------------------------------------------------------===//
// The pass attributes a program carries, one reader each. Each returns the
// attribute's plan spelling, or fails when the attribute has the wrong kind.
//===----------------------------------------------------------------------===//

/// `dit.block`: the transformer block index.
FailureOr<json> blockJson(Attribute attr) {
  auto block = dyn_cast<IntegerAttr>(attr);
  if (!block)
    return failure();
  return json(block.getInt());
}

/// `dit.tp`: "column" or "row".
FailureOr<json> tpRoleJson(Attribute attr) {
  auto role = dyn_cast<dit::TPRoleAttr>(attr);
  if (!role)
    return failure();
  return json(dit::stringifyTPRole(role.getValue()).str());
}

/// Mesh axes by name, as the plan has always spelled them.
json axisNamesJson(ArrayRef<dit::MeshAxis> axes) {
  json out = json::array();
  for (dit::MeshAxis axis : axes)
    out.push_back(dit::stringifyMeshAxis(axis).str());
  return out;
}

/// `dit.tp_segments`: global widths of the split dimension's pieces.
FailureOr<json> tpSegmentsJson(Attribute attr) {
  if (!isa<DenseI64ArrayAttr>(attr))
    return failure();
  return attributeJson(attr);
}

/// `dit.reduce_stats_over`: the axis names a norm reduces statistics over.
FailureOr<json> reduceStatsJson(Attribute attr) {
  auto axes = dyn_cast<dit::AxesAttr>(attr);
  if (!axes)
    return failure();
  return axisNamesJson(axes.getAxes());
}

/// `dit.attention_plan`: {heads = [axis names], rows = keyword}.
FailureOr<json> attentionPlanJson(Attribute attr) {
  auto plan = dyn_cast<dit::AttentionPlanAttr>(attr);
  if (!plan)
    return failure();
  return json{{"heads", axisNamesJson(plan.getHeads())},
              {"rows", dit::stringifyAttentionRows(plan.getRows()).str()}};
}

/// `dit.ring_axis`: the grid axis ring attention rotates K and V over.
FailureOr<json> ringAxisJson(Attribute attr) {
  auto axis = dyn_cast<IntegerAttr>(attr);
  if (!axis)
    return failure();
  return json(axis.getInt());
}

/// `dit.between_steps`: a unit marker.
FailureOr<json> betweenStepsJson(Attribute attr) {
  if (!isa<UnitAttr>(attr))
    return failure();
  return json(true);
}

using PassAttrReader = FailureOr<json> (*)(Attribute);

/// The reader of pass attribute `name`, if it is one the plan knows.
PassAttrReader passAttrReader(StringRef name) {
  if (name == dit::DitDialect::kBlockAttrName)
    return blockJson;
  if (name == kTPRoleAttrName)
    return tpRoleJson;
  if (name == kTPSegmentsAttrName)
    return tpSegmentsJson;
  if (name == kReduceStatsAttrName)
    return reduceStatsJson;
  if (name == kAttentionPlanAttrName)
    return attentionPlanJson;
  if (name == kRingAxisAttrName)
    return ringAxisJson;
  if (name == kBetweenStepsAttrName)
    return betweenStepsJson;
  return nullptr;
}

std::string dtypeName(Type type) {
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  std::string out;
  llvm::raw_string_ostream os(out);
  type.print(os);
  return out;
}

json paramJson(const ParamSlice &slice) {
  json p = {{"name", slice.name}, {"shape", slice.shape}};
  if (slice.splitDim >= 0)
    p["split"] = {{"dim", slice.splitDim}, {"axis", "tp"},
                  {"segments", slice.segments}};
  if (slice.onlyOnTPCoordinate0)
    p["only_on_axis_coordinate_0"] = "tp";
  if (!slice.checkpointShape.empty())
    p["checkpoint"] = {{"shape", slice.checkpointShape}};
  return p;
}

/// Serializes one function body; callees go into the shared `functions`.
class FunctionSerializer {
public:
  struct Shared {
    const MeshInfo &mesh;
    /// --ulysses-head-groups (0: chosen per attention).
    int64_t ulyssesHeadGroups = 0;
    json functions = json::object();
    /// Block ranges of the callees already serialized.
    std::map<std::string, std::pair<int64_t, int64_t>> calleeBlocks;
  };

  explicit FunctionSerializer(Shared &shared) : shared(shared) {}

  LogicalResult serialize(func::FuncOp fn) {
    for (BlockArgument arg : fn.getArguments()) {
      FailureOr<int64_t> id = define(arg);
      if (failed(id))
        return failure();
      args.push_back(*id);
    }
    for (Operation &op : fn.front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          results.push_back(ids.lookup(v));
        continue;
      }
      json entry = {{"op", op.getName().getStringRef().str()}};
      json in = json::array(), out = json::array();
      for (Value v : op.getOperands())
        in.push_back(ids.lookup(v));
      for (Value v : op.getResults()) {
        FailureOr<int64_t> id = define(v);
        if (failed(id))
          return failure();
        out.push_back(*id);
      }
      entry["in"] = std::move(in);
      entry["out"] = std::move(out);
      if (auto call = dyn_cast<func::CallOp>(op)) {
        FailureOr<std::string> callee = serializeCallee(call);
        if (failed(callee))
          return failure();
        entry["op"] = "call";
        entry["callee"] = *callee;
        ops.push_back(std::move(entry));
        continue;
      }
      FailureOr<json> attrs = attributes(op);
      if (failed(attrs))
        return failure();
      entry["attrs"] = std::move(*attrs);
      // Ops that name a weight list its slices (possibly none).
      if (op.getAttrOfType<StringAttr>("weight")) {
        json params = json::array();
        for (const ParamSlice &slice : parameterSlices(&op, shared.mesh))
          params.push_back(paramJson(slice));
        entry["params"] = std::move(params);
      }
      if (auto block =
              op.getAttrOfType<IntegerAttr>(dit::DitDialect::kBlockAttrName))
        addBlocks({block.getInt(), block.getInt()});
      ops.push_back(std::move(entry));
    }
    return success();
  }

  json values = json::array();
  json ops = json::array();
  std::vector<int64_t> args, results;
  int64_t minBlock = INT64_MAX, maxBlock = -1;

private:
  FailureOr<int64_t> define(Value v) {
    auto tensor = dyn_cast<RankedTensorType>(v.getType());
    if (!tensor) {
      Operation *where = v.getDefiningOp();
      if (!where)
        where = cast<BlockArgument>(v).getOwner()->getParentOp();
      return where->emitError()
             << "defines a value of type " << v.getType()
             << "; a plan holds ranked tensors only";
    }
    int64_t id = values.size();
    values.push_back({{"shape", tensor.getShape()},
                      {"dtype", dtypeName(tensor.getElementType())}});
    ids[v] = id;
    return id;
  }

  void addBlocks(std::pair<int64_t, int64_t> range) {
    if (range.second < 0)
      return;
    minBlock = std::min(minBlock, range.first);
    maxBlock = std::max(maxBlock, range.second);
  }

  /// Serializes the callee on its first call; returns its name.
  FailureOr<std::string> serializeCallee(func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return call.emitError() << "the plan cannot emit " << call.getCallee()
                              << ": it has no body";
    std::string name = callee.getName().str();
    if (!shared.calleeBlocks.count(name)) {
      if (!active.insert(name).second)
        return call.emitError() << "calls " << call.getCallee()
                                << " recursively; a plan is a call tree";
      FunctionSerializer body(shared);
      body.active = active;
      if (failed(body.serialize(callee)))
        return failure();
      shared.functions[name] = {{"values", std::move(body.values)},
                                {"args", body.args},
                                {"results", body.results},
                                {"ops", std::move(body.ops)}};
      shared.calleeBlocks[name] = {body.minBlock, body.maxBlock};
    }
    addBlocks(shared.calleeBlocks.at(name));
    return name;
  }

  /// The op's attributes as the plan spells them, plus the axis names of
  /// its collective and of its ring.
  FailureOr<json> attributes(Operation &op) {
    json attrs = json::object();
    for (NamedAttribute a : op.getAttrs()) {
      StringRef key = a.getName().getValue();
      // Shardings are the partitioner's; the shard ops' grid symbol is
      // implied (one @mesh). Rope's token `grid` is data and stays.
      if (key == kShardingAttrName ||
          (key == "grid" && isa<FlatSymbolRefAttr>(a.getValue())))
        continue;
      FailureOr<json> value = failure();
      if (auto reader = passAttrReader(key))
        value = reader(a.getValue());
      else
        value = attributeJson(a.getValue());
      if (failed(value))
        return op.emitError() << "attribute '" << key << "' = " << a.getValue()
                              << " has no spelling in the plan format "
                                 "(docs/plan-format.md)";
      attrs[key.str()] = std::move(*value);
    }
    const MeshInfo &mesh = shared.mesh;
    auto axisAt = [&](int64_t gridAxis) -> const char * {
      if (gridAxis < 0 || gridAxis >= int64_t(mesh.order.size()))
        return nullptr;
      return axisName(mesh.order[gridAxis]);
    };
    if (auto axes = op.getAttrOfType<DenseI16ArrayAttr>("grid_axes")) {
      json names = json::array();
      for (int16_t a : axes.asArrayRef()) {
        const char *name = axisAt(a);
        if (!name)
          return op.emitError() << "grid axis " << a << " is not one of the "
                                << mesh.order.size() << " axes of @"
                                << kGridName;
        names.push_back(name);
      }
      attrs["axes"] = std::move(names);
    }
    if (auto ring = op.getAttrOfType<IntegerAttr>(kRingAxisAttrName)) {
      const char *name = axisAt(ring.getInt());
      if (!name)
        return op.emitError() << "'" << kRingAxisAttrName << "' = "
                              << ring.getInt() << " is not a grid axis of @"
                              << kGridName;
      attrs["ring_axis_name"] = name;
    }
    if (auto attention = dyn_cast<dit::AttentionOp>(op))
      if (int64_t groups = overlapHeadGroups(attention, shared.ulyssesHeadGroups))
        attrs["overlap_head_groups"] = groups;
    if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
      if (int64_t chunks = overlapRowChunks(reduce))
        attrs["overlap_row_chunks"] = chunks;
    return attrs;
  }

  Shared &shared;
  llvm::DenseMap<Value, int64_t> ids;
  std::set<std::string> active; // callers on the stack, against recursion
};

} // namespace

FailureOr<SerializedProgram> serializeProgram(func::FuncOp role,
                                              const MeshInfo &mesh,
                                              int64_t ulyssesHeadGroups) {
  if (role.isExternal())
    return role.emitError() << "is a role without a body";
  FunctionSerializer::Shared shared{mesh, ulyssesHeadGroups};
  FunctionSerializer top(shared);
  if (failed(top.serialize(role)))
    return failure();
  json inputs = json::array();
  for (BlockArgument arg : role.getArguments()) {
    StringRef name = stepInputName(arg);
    if (name.empty())
      return role.emitError()
             << "argument #" << arg.getArgNumber() << " has no '"
             << dit::DitDialect::kInputAttrName
             << "' name; the importer names every step input";
    json input = {{"name", name.str()}, {"value", top.args[arg.getArgNumber()]}};
    if (std::optional<int64_t> branch = stepInputBranch(arg))
      input["branch"] = *branch;
    inputs.push_back(std::move(input));
  }
  SerializedProgram program;
  if (top.maxBlock >= 0)
    program.layers = {top.minBlock, top.maxBlock};
  program.body = json::object();
  program.body["inputs"] = std::move(inputs);
  program.body["outputs"] = top.results;
  program.body["values"] = std::move(top.values);
  program.body["ops"] = std::move(top.ops);
  program.body["functions"] = std::move(shared.functions);
  return program;
}

} // namespace ditc
