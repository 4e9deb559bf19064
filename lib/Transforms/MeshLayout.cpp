//===- MeshLayout.cpp - the dit-mesh-layout pass --------------------------===//
//
// Turns the deployment's transformer degrees into an upstream shard.grid
// whose axes carry ditc's axis names, and computes every axis's group rank
// lists once so that later passes and the plan never recompute them.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/Legality.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"
#include "VerifiedPass.h"
#include "ditc/Transforms/Pipelines.h"

#include "mlir/IR/Builders.h"

namespace ditc {
#define GEN_PASS_DEF_MESHLAYOUT
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;

namespace ditc {

int16_t MeshInfo::gridAxis(Axis axis) const {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] == axis)
      return int16_t(i);
  return -1;
}

std::vector<Axis> MeshInfo::sequenceAxes() const {
  std::vector<Axis> axes;
  for (Axis axis : order)
    if ((axis == Axis::Ring || axis == Axis::KVGather ||
         axis == Axis::Ulysses) &&
        size(axis) > 1)
      axes.push_back(axis);
  return axes;
}

dit::MeshContext meshContextOf(const MeshInfo &mesh) {
  dit::MeshContext context;
  context.gridName = kGridName;
  for (Axis axis : mesh.order)
    context.axes.push_back({axisName(axis), mesh.size(axis)});
  return context;
}

FailureOr<MeshInfo> readMeshInfo(ModuleOp module) {
  MeshInfo info;
  info.grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      module, StringAttr::get(module.getContext(), kGridName));
  auto *dialect = module.getContext()->getLoadedDialect<dit::DitDialect>();
  dit::AxesAttr names =
      dialect ? dialect->getMeshAxesAttrHelper().getAttr(module) : nullptr;
  if (!info.grid || !names)
    return module.emitError()
           << "needs the shard.grid @" << kGridName << " and '"
           << dit::DitDialect::MeshAxesAttrHelper::getNameStr()
           << "' that --dit-mesh-layout emits";
  // The verifier checked that the axes are the seven, once each; the grid
  // must have one dimension per axis.
  ArrayRef<int64_t> shape = info.grid.getShape();
  if (shape.size() != names.getAxes().size())
    return module.emitError()
           << "shard.grid @" << kGridName << " has " << shape.size()
           << " axes, but '" << dit::DitDialect::MeshAxesAttrHelper::getNameStr()
           << "' names " << names.getAxes().size();
  for (auto [axis, size] : llvm::zip(names.getAxes(), shape)) {
    if (size < 1)
      return module.emitError() << "shard.grid @" << kGridName << " axis '"
                                << dit::stringifyMeshAxis(axis)
                                << "' has size " << size
                                << "; expected a positive static size";
    info.order.push_back(toAxis(axis));
    info.degrees[toAxis(axis)] = size;
  }
  return info;
}


namespace {

/// Sets `dit.mesh` from the `degrees` option's `axis=size` entries. Every bad
/// entry is reported, each naming itself, so one run shows all of them.
LogicalResult setMeshDegrees(ModuleOp module, ArrayRef<std::string> entries) {
  for (StringRef name : {dit::DitDialect::kMeshAttrName,
                         dit::DitDialect::kDeploymentAttrName})
    if (Attribute existing = module->getAttr(name))
      return module.emitError()
             << "degrees option given, but the module already has '" << name
             << "' = " << existing
             << "; drop the option or the attribute, not both";
  std::array<int64_t, 7> degrees;
  degrees.fill(1);
  std::array<bool, 7> seen{};
  bool ok = true;
  for (StringRef entry : entries) {
    auto [name, value] = entry.split('=');
    name = name.trim();
    value = value.trim();
    std::optional<Axis> axis = axisFromName(name.str());
    int64_t size = 0;
    if (!entry.contains('=')) {
      module.emitError() << "degrees entry '" << entry
                         << "' is not axis=size (e.g. tp=2)";
      ok = false;
    } else if (!axis) {
      module.emitError() << "degrees entry '" << entry
                         << "' names no mesh axis; expected one of dp, cfg, "
                            "pp, ring, kv_gather, ulysses, tp";
      ok = false;
    } else if (value.getAsInteger(10, size) || size < 1) {
      module.emitError() << "degrees entry '" << entry << "' has size '"
                         << value << "'; expected a positive integer";
      ok = false;
    } else if (seen[size_t(*axis)]) {
      module.emitError() << "degrees entry '" << entry << "' names axis '"
                         << name << "' a second time; give each axis once";
      ok = false;
    } else {
      seen[size_t(*axis)] = true;
      degrees[size_t(*axis)] = size;
    }
  }
  if (!ok)
    return failure();
  auto at = [&](Axis axis) { return degrees[size_t(axis)]; };
  module->setAttr(dit::DitDialect::kMeshAttrName,
                  dit::MeshAttr::get(module.getContext(), at(Axis::DP),
                                     at(Axis::CFG), at(Axis::PP),
                                     at(Axis::Ring), at(Axis::KVGather),
                                     at(Axis::Ulysses), at(Axis::TP)));
  return success();
}

struct MeshLayoutPass
    : VerifiedPass<impl::MeshLayoutBase<MeshLayoutPass>> {
  using VerifiedPass::VerifiedPass;

  // `mesh-order=` given empty is an error, not the deployment's order; and
  // a bad axis name has printed its own error already, so the empty message
  // MLIR hands on would only add a blank `error:` line.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(MeshLayoutBase::initializeOptions(
            options, [&](const Twine &message) {
              if (message.str().empty())
                return failure();
              return errorHandler(message);
            })))
      return failure();
    if (meshOrder.hasValue() && meshOrder.empty())
      return errorHandler(emptyMeshOrderMessage());
    return success();
  }

  void runOnModule() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (!degrees.empty() && failed(setMeshDegrees(module, degrees)))
      return signalPassFailure();
    Deployment deployment = deploymentFromModule(module);
    std::vector<Axis> order = deployment.meshOrder;
    if (!meshOrder.empty()) {
      // The option parser only admits axis names; the order must also name
      // each of the seven once.
      order.clear();
      for (dit::MeshAxis axis : meshOrder) {
        if (llvm::is_contained(order, toAxis(axis))) {
          module.emitError() << "mesh-order option names axis '"
                             << dit::stringifyMeshAxis(axis)
                             << "' twice; expected a permutation of dp, cfg, "
                                "pp, ring, kv_gather, ulysses, tp";
          return signalPassFailure();
        }
        order.push_back(toAxis(axis));
      }
      if (order.size() != kAllAxes.size()) {
        module.emitError() << "mesh-order option names " << order.size()
                           << " axes; expected a permutation of dp, cfg, pp, "
                              "ring, kv_gather, ulysses, tp";
        return signalPassFailure();
      }
    }
    if (order.empty())
      order = ditc::MeshLayout::defaultOrder();
    // deploymentFromModule always yields a transformer placement.
    Placement transformer = layOut(*deployment.find("transformer"), order);

    // A second run replaces the grid of the first.
    if (Operation *old = SymbolTable::lookupSymbolIn(module, kGridName))
      old->erase();
    OpBuilder b(context);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<int64_t> shape;
    SmallVector<dit::MeshAxis> names;
    for (Axis axis : order) {
      shape.push_back(transformer.degrees[axis]);
      names.push_back(toMeshAxis(axis));
    }
    shard::GridOp::create(b, module.getLoc(), kGridName,
                            b.getDenseI64ArrayAttr(shape));
    dit::DitDialect &dialect = dit::DitDialect::get(context);
    dialect.getMeshAxesAttrHelper().setAttr(
        module, dit::AxesAttr::get(context, names));

    std::array<SmallVector<DenseI64ArrayAttr>, 7> lists;
    for (Axis axis : kAllAxes) {
      // dit.groups lists an axis' groups by their first rank (explicit
      // replica rank lists may come in any order).
      std::vector<std::vector<int64_t>> groups =
          placementGroups(transformer, axis, order);
      llvm::sort(groups);
      for (const std::vector<int64_t> &group : groups)
        lists[size_t(axis)].push_back(b.getDenseI64ArrayAttr(group));
    }
    dialect.getGroupsAttrHelper().setAttr(
        module, dit::GroupsAttr::get(
                    context, lists[size_t(Axis::DP)], lists[size_t(Axis::CFG)],
                    lists[size_t(Axis::PP)], lists[size_t(Axis::Ring)],
                    lists[size_t(Axis::KVGather)],
                    lists[size_t(Axis::Ulysses)], lists[size_t(Axis::TP)]));
  }
};

} // namespace
} // namespace ditc
