//===- DitDialect.cpp - dit dialect registration and attribute checks ----===//
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitOps.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::dit;

#include "dit/IR/DitDialect.cpp.inc"

void DitDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dit/IR/DitOps.cpp.inc"
      >();
  registerAttributes();
}

// Discardable `dit.*` attributes are part of the dialect's contract with the
// passes, so a misspelled or mistyped one is an error rather than silently
// ignored metadata.
LogicalResult DitDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  if (name == kBlockAttrName) {
    auto index = dyn_cast<IntegerAttr>(value);
    if (!index || index.getInt() < 0)
      return op->emitError() << "'" << name
                             << "' must be a non-negative integer, got "
                             << value;
    return success();
  }
  if (name == kModelAttrName || name == kWorkloadAttrName ||
      name == kMeshAttrName || name == kDeploymentAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << name
                             << "' may only be set on the module";
    bool rightKind = (name == kModelAttrName && isa<ModelAttr>(value)) ||
                     (name == kWorkloadAttrName && isa<WorkloadAttr>(value)) ||
                     (name == kMeshAttrName && isa<MeshAttr>(value)) ||
                     (name == kDeploymentAttrName &&
                      isa<DeploymentAttr>(value));
    if (!rightKind)
      return op->emitError() << "'" << name << "' has the wrong kind: "
                             << value;
    return success();
  }
  if (name == kComponentAttrName) {
    if (!isa<StringAttr>(value))
      return op->emitError() << "'" << name << "' must be a string";
    return success();
  }
  // Other dit.* attributes are owned by passes (dit.stage, dit.sharding...).
  return success();
}
