//===- MeshLayout.cpp - the dit-mesh-layout pass --------------------------===//
//
// Turns the deployment's transformer degrees into an upstream shard.grid
// whose axes carry ditc's axis names, and computes every axis's group rank
// lists once so that later passes and the plan never recompute them.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/Legality.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"

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
  auto names = module->getAttrOfType<ArrayAttr>(kMeshAxesAttrName);
  if (!info.grid || !names || names.size() != kAllAxes.size())
    return module.emitError()
           << "needs the shard.grid @" << kGridName << " and '"
           << kMeshAxesAttrName << "' that --dit-mesh-layout emits";
  for (Attribute name : names) {
    auto axis = axisFromName(cast<StringAttr>(name).str());
    if (!axis)
      return module.emitError() << "'" << kMeshAxesAttrName
                                << "' names an unknown axis " << name;
    info.order.push_back(*axis);
  }
  ArrayRef<int64_t> shape = info.grid.getShape();
  for (size_t i = 0; i < info.order.size(); ++i)
    info.degrees[info.order[i]] = shape[i];
  return info;
}

namespace {

struct MeshLayoutPass : impl::MeshLayoutBase<MeshLayoutPass> {
  using MeshLayoutBase::MeshLayoutBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    Deployment deployment = deploymentFromModule(module);
    std::vector<Axis> order = deployment.meshOrder;
    if (!meshOrder.empty()) {
      std::string text;
      for (const std::string &name : meshOrder)
        text += (text.empty() ? "" : ",") + name;
      try {
        order = parseMeshOrder("mesh-order option", text);
      } catch (const BadInput &error) {
        module.emitError() << error.what();
        return signalPassFailure();
      }
    }
    if (order.empty())
      order = ditc::MeshLayout::defaultOrder();
    // Replicas without explicit rank lists follow the chosen order.
    Placement transformer = layOut(*deployment.find("transformer"), order);

    // A second run replaces the grid of the first.
    if (Operation *old = SymbolTable::lookupSymbolIn(module, kGridName))
      old->erase();
    OpBuilder b(context);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<int64_t> shape;
    SmallVector<Attribute> names;
    for (Axis axis : order) {
      shape.push_back(transformer.degrees[axis]);
      names.push_back(b.getStringAttr(axisName(axis)));
    }
    shard::GridOp::create(b, module.getLoc(), kGridName,
                            b.getDenseI64ArrayAttr(shape));
    module->setAttr(kMeshAxesAttrName, b.getArrayAttr(names));

    SmallVector<NamedAttribute> groups;
    for (Axis axis : kAllAxes) {
      SmallVector<Attribute> lists;
      for (const std::vector<int64_t> &group :
           placementGroups(transformer, axis, order))
        lists.push_back(b.getDenseI64ArrayAttr(group));
      groups.push_back(b.getNamedAttr(axisName(axis), b.getArrayAttr(lists)));
    }
    module->setAttr(kGroupsAttrName, b.getDictionaryAttr(groups));
  }
};

} // namespace
} // namespace ditc
