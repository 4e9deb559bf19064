//===- DitDiscardableAttrs.cpp - checks of the dit.* hand-off attributes --===//
//
// The discardable `dit.*` attributes are the contract between the
// partitioner's passes (DitBase.td declares them). A misspelled or mistyped
// one is an error here, so that a pass reading another pass's attribute can
// rely on its kind, its op and its ranges: dit-opt verifies before every
// pass, and a malformed module is a diagnostic, never a crash.
//
//===----------------------------------------------------------------------===//
#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dit;

namespace {

/// "a, b or c" from an enum's keywords, for "expected ..." messages.
template <typename Enum>
std::string keywordChoices(uint64_t maxValue,
                           StringRef (*stringify)(Enum)) {
  std::string text;
  for (uint64_t v = 0; v <= maxValue; ++v) {
    if (v > 0)
      text += v == maxValue ? " or " : ", ";
    text += stringify(static_cast<Enum>(v)).str();
  }
  return text;
}

/// Checks one discardable attribute against the dialect's contract.
class AttrChecker {
public:
  AttrChecker(Operation *op, StringRef name, Attribute value)
      : op(op), name(name), value(value) {}

  /// `value` must be a `T`; `expected` says what is allowed.
  template <typename T>
  FailureOr<T> kind(const Twine &expected) {
    if (auto typed = dyn_cast<T>(value))
      return typed;
    return error() << "expected " << expected << ", got " << value;
  }

  /// The attribute may only sit on ops of kind `Ops...`; `where` names them.
  template <typename... Ops>
  LogicalResult on(StringRef where) {
    if (isa<Ops...>(op))
      return success();
    return error() << "may only be set on " << where << ", not on '"
                   << op->getName() << "'";
  }

  InFlightDiagnostic error() {
    return op->emitError() << "'" << name << "' ";
  }

  Operation *op;
  StringRef name;
  Attribute value;
};

/// An array of symbol references to functions (dit.roles, dit.stages).
LogicalResult checkFunctionRefs(AttrChecker &c) {
  FailureOr<ArrayAttr> refs = c.kind<ArrayAttr>("an array of @function references");
  if (failed(refs))
    return failure();
  if (refs->empty())
    return c.error() << "must name at least one function";
  for (Attribute ref : *refs) {
    auto symbol = dyn_cast<FlatSymbolRefAttr>(ref);
    if (!symbol)
      return c.error() << "expected @function references, got " << ref;
  }
  return success();
}

/// dit.groups against the module's grid: group sizes are the grid's axis
/// sizes, so a group and the axis it is indexed by agree.
LogicalResult checkGroupsAgainstGrid(AttrChecker &c, GroupsAttr groups) {
  auto module = cast<ModuleOp>(c.op);
  auto order = module->getAttrOfType<AxesAttr>("dit.mesh_axes");
  auto grid = dyn_cast_or_null<shard::GridOp>(
      SymbolTable::lookupSymbolIn(module, "mesh"));
  // The module's attributes are checked before the ops inside it, so the
  // grid may still lack its shape; its own verifier reports that.
  if (!order || !grid || !grid.getShapeAttr() ||
      grid.getShape().size() != order.getAxes().size())
    return success();
  for (auto [axis, size] : llvm::zip(order.getAxes(), grid.getShape())) {
    ArrayRef<DenseI64ArrayAttr> lists = groups.of(axis);
    if (int64_t(lists.front().size()) != size)
      return c.error() << "groups of axis '" << stringifyMeshAxis(axis)
                       << "' have " << lists.front().size()
                       << " ranks, but the grid @mesh gives the axis size "
                       << size;
  }
  return success();
}

LogicalResult checkModuleAttr(AttrChecker &c) {
  if (failed(c.on<ModuleOp>("the module")))
    return failure();
  StringRef name = c.name;
  if (name == "dit.model")
    return c.kind<ModelAttr>("#dit.model<...>");
  if (name == "dit.workload")
    return c.kind<WorkloadAttr>("#dit.workload<...>");
  if (name == "dit.mesh")
    return c.kind<MeshAttr>("#dit.mesh<...>");
  if (name == "dit.deployment")
    return c.kind<DeploymentAttr>("#dit.deployment<...>");
  if (name == "dit.mesh_axes") {
    FailureOr<AxesAttr> axes =
        c.kind<AxesAttr>("#dit.axes<[...]> naming the seven mesh axes");
    if (failed(axes))
      return failure();
    if (axes->getAxes().size() != getMaxEnumValForMeshAxis() + 1)
      return c.error() << "must name each of the seven mesh axes once, got "
                       << *axes;
    return success();
  }
  if (name == "dit.groups") {
    FailureOr<GroupsAttr> groups = c.kind<GroupsAttr>(
        "#dit.groups<dp = [[ranks], ...], ..., tp = [[ranks], ...]>");
    if (failed(groups))
      return failure();
    // The parser checks a written #dit.groups, but dit-mesh-layout builds
    // one with get(), which checks nothing: check it again here, so that
    // the verifier after a pass sees what a re-parse would.
    if (failed(GroupsAttr::verify(
            [&] { return c.error(); }, groups->getDp(), groups->getCfg(),
            groups->getPp(), groups->getRing(), groups->getKvGather(),
            groups->getUlysses(), groups->getTp())))
      return failure();
    // The rank table covers the world: every grouped rank has an entry
    // (every axis groups the ranks dp groups).
    if (auto table = c.op->getAttrOfType<DenseI64ArrayAttr>("dit.rank_roles"))
      for (DenseI64ArrayAttr list : groups->getDp())
        for (int64_t rank : list.asArrayRef())
          if (rank >= int64_t(table.size()))
            return c.error() << "groups rank " << rank << ", but "
                             << "'dit.rank_roles' covers only "
                             << table.size() << " ranks";
    return checkGroupsAgainstGrid(c, *groups);
  }
  if (name == "dit.roles")
    return checkFunctionRefs(c);
  // dit.rank_roles
  FailureOr<DenseI64ArrayAttr> table =
      c.kind<DenseI64ArrayAttr>("array<i64> of role indices (-1: no role)");
  if (failed(table))
    return failure();
  auto roles = c.op->getAttrOfType<ArrayAttr>("dit.roles");
  for (int64_t role : table->asArrayRef())
    if (role < -1 || (roles && role >= int64_t(roles.size())))
      return c.error() << "holds role " << role << ", expected -1 or an index "
                       << "into the " << (roles ? roles.size() : 0)
                       << " 'dit.roles'";
  return success();
}

} // namespace

LogicalResult DitDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  AttrChecker c(op, name, attr.getValue());

  if (name == "dit.model" || name == "dit.workload" || name == "dit.mesh" ||
      name == "dit.deployment" || name == "dit.mesh_axes" ||
      name == "dit.groups" || name == "dit.roles" || name == "dit.rank_roles")
    return checkModuleAttr(c);

  if (name == "dit.block") {
    auto index = dyn_cast<IntegerAttr>(c.value);
    if (!index || index.getInt() < 0)
      return c.error() << "must be a non-negative integer, got " << c.value;
    return success();
  }
  if (name == "dit.component") {
    if (failed(c.on<FunctionOpInterface>("functions")))
      return failure();
    return c.kind<PipelineComponentAttr>(
        keywordChoices(getMaxEnumValForPipelineComponent(),
                       stringifyPipelineComponent) +
        " (#dit.component<...>)");
  }
  if (name == "dit.sharding") {
    FailureOr<ArrayAttr> shardings =
        c.kind<ArrayAttr>("an array of #dit.sharding, one per result");
    if (failed(shardings))
      return failure();
    if (shardings->size() != op->getNumResults())
      return c.error() << "has " << shardings->size() << " entries for "
                       << op->getNumResults() << " results";
    for (auto [sharding, result] : llvm::zip(*shardings, op->getResults())) {
      auto typed = dyn_cast<ShardingAttr>(sharding);
      if (!typed)
        return c.error() << "expected #dit.sharding entries, got " << sharding;
      // The latents stay in patch-token layout between steps, so
      // unpatchify's entry describes its input rather than its result.
      Value described = isa<UnpatchifyOp>(op) ? op->getOperand(0) : result;
      auto tensor = dyn_cast<RankedTensorType>(described.getType());
      if (!tensor)
        return c.error() << "entry " << typed << " describes a "
                         << described.getType()
                         << "; only ranked tensors are sharded";
      if (int64_t(typed.getDims().size()) != tensor.getRank())
        return c.error() << "entry " << typed << " has "
                         << typed.getDims().size() << " dims for a rank-"
                         << tensor.getRank() << " value";
    }
    return success();
  }
  if (name == "dit.tp") {
    if (failed(c.on<LinearOp>("'dit.linear'")))
      return failure();
    return c.kind<TPRoleAttr>(
        keywordChoices(getMaxEnumValForTPRole(), stringifyTPRole) +
        " (#dit.tp_role<...>)");
  }
  if (name == "dit.tp_segments") {
    if (failed(c.on<LinearOp>("'dit.linear'")))
      return failure();
    FailureOr<DenseI64ArrayAttr> segments =
        c.kind<DenseI64ArrayAttr>("array<i64> of positive widths");
    if (failed(segments))
      return failure();
    if (segments->empty() ||
        llvm::any_of(segments->asArrayRef(), [](int64_t w) { return w < 1; }))
      return c.error() << "expected positive widths, got " << *segments;
    if (!op->hasAttr("dit.tp"))
      return c.error() << "needs 'dit.tp': only a TP-split linear has "
                          "segments";
    return success();
  }
  if (name == "dit.reduce_stats_over") {
    if (failed(c.on<LayerNormOp, RMSNormOp>("'dit.layer_norm' or 'dit.rms_norm'")))
      return failure();
    FailureOr<AxesAttr> axes = c.kind<AxesAttr>("#dit.axes<[...]>");
    if (failed(axes))
      return failure();
    if (axes->getAxes().empty())
      return c.error() << "must name at least one axis";
    return success();
  }
  if (name == "dit.attention_plan") {
    if (failed(c.on<AttentionOp>("'dit.attention'")))
      return failure();
    return c.kind<AttentionPlanAttr>(
        "#dit.attention_plan<heads = [...], rows = " +
        keywordChoices(getMaxEnumValForAttentionRows(),
                       stringifyAttentionRows) +
        ">");
  }
  if (name == "dit.ring_axis") {
    if (failed(c.on<AttentionOp>("'dit.attention'")))
      return failure();
    auto axis = dyn_cast<IntegerAttr>(c.value);
    int64_t axes = getMaxEnumValForMeshAxis() + 1;
    if (!axis || axis.getInt() < 0 || axis.getInt() >= axes)
      return c.error() << "expected a grid axis index in [0, " << axes
                       << "), got " << c.value;
    auto plan = op->getAttrOfType<AttentionPlanAttr>("dit.attention_plan");
    if (!plan || plan.getRows() != AttentionRows::Ring)
      return c.error() << "needs 'dit.attention_plan' with rows = ring";
    // K/V rotate over the ring: the grid axis must be the one the module
    // names ring.
    auto module = op->getParentOfType<ModuleOp>();
    auto order =
        module ? module->getAttrOfType<AxesAttr>("dit.mesh_axes") : AxesAttr();
    if (order && axis.getInt() < int64_t(order.getAxes().size()) &&
        order.getAxes()[axis.getInt()] != MeshAxis::Ring)
      return c.error() << "is grid axis " << axis.getInt() << ", which "
                       << "'dit.mesh_axes' names '"
                       << stringifyMeshAxis(order.getAxes()[axis.getInt()])
                       << "', not 'ring'";
    return success();
  }
  if (name == "dit.latent_layout") {
    if (failed(c.on<UnpatchifyOp>("'dit.unpatchify'")))
      return failure();
    return c.kind<LatentLayoutAttr>(
        keywordChoices(getMaxEnumValForLatentLayout(), stringifyLatentLayout) +
        " (#dit.latent_layout<...>)");
  }
  if (name == "dit.stage") {
    if (failed(c.on<FunctionOpInterface>("functions")))
      return failure();
    auto stage = dyn_cast<IntegerAttr>(c.value);
    if (!stage || stage.getInt() < 0)
      return c.error() << "expected a non-negative stage index, got "
                       << c.value;
    return success();
  }
  if (name == "dit.stages") {
    if (failed(c.on<FunctionOpInterface>("functions")))
      return failure();
    return checkFunctionRefs(c);
  }
  if (name == "dit.role") {
    if (failed(c.on<FunctionOpInterface>("functions")))
      return failure();
    return c.kind<RoleAttr>("#dit.role<stage = ..., cfg = ...>");
  }
  if (name == "dit.between_steps") {
    if (failed(c.on<shard::SendOp, shard::RecvOp>("'shard.send' or 'shard.recv'")))
      return failure();
    return c.kind<UnitAttr>("a unit attribute");
  }
  if (name == "dit.vae_band") {
    if (failed(c.on<FunctionOpInterface>("functions")))
      return failure();
    auto band = dyn_cast<IntegerAttr>(c.value);
    if (!band || band.getInt() < 0)
      return c.error() << "expected a non-negative band index, got " << c.value;
    return success();
  }
  if (name == "dit.band_collective") {
    if (failed(c.on<GroupNormOp, ImageAttentionOp>("'dit.group_norm' or 'dit.image_attention'")))
      return failure();
    if (!op->getParentOfType<FunctionOpInterface>() ||
        !op->getParentOfType<FunctionOpInterface>()->hasAttr("dit.vae_band"))
      return c.error() << "may only be set in a band program (a function with 'dit.vae_band')";
    return c.kind<UnitAttr>("a unit attribute");
  }
  return op->emitError() << "unknown discardable attribute '" << name
                         << "'; the dit dialect declares dit.block, "
                            "dit.model, dit.workload, dit.mesh, "
                            "dit.deployment, dit.component, dit.mesh_axes, "
                            "dit.groups, dit.sharding, dit.tp, "
                            "dit.tp_segments, dit.reduce_stats_over, "
                            "dit.attention_plan, dit.latent_layout, "
                            "dit.ring_axis, dit.stage, dit.stages, dit.roles, "
                            "dit.rank_roles, dit.role, dit.between_steps, "
                            "dit.vae_band and dit.band_collective";
}
