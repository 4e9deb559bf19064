//===- DitDialect.cpp - dit dialect registration and attribute checks ----===//
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

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

ArrayRef<StringLiteral> DitDialect::stepInputNames() {
  static constexpr StringLiteral names[] = {
      "latents", "timestep", "sigma", "sigma_next",
      "text",    "pooled_text", "guidance"};
  return names;
}

// The step inputs are named by argument attributes so that passes and the
// plan find them by meaning, not position: a wrong name, a name given
// twice or a branch on a non-text input is an error here, not a silent
// misreading later.
LogicalResult DitDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kInputAttrName && name != kBranchAttrName)
    return op->emitError() << "unknown argument attribute '" << name
                           << "'; the dit dialect defines '" << kInputAttrName
                           << "' and '" << kBranchAttrName << "'";
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || regionIndex != 0)
    return op->emitError() << "'" << name
                           << "' may only be set on function arguments";
  auto inputOf = [&](unsigned index) {
    return fn.getArgAttrOfType<StringAttr>(index, kInputAttrName);
  };
  auto branchOf = [&](unsigned index) {
    return fn.getArgAttrOfType<IntegerAttr>(index, kBranchAttrName);
  };
  bool perBranch = false;
  if (StringAttr input = inputOf(argIndex))
    perBranch = input.getValue() == "text" || input.getValue() == "pooled_text";
  if (name == kBranchAttrName) {
    auto branch = dyn_cast<IntegerAttr>(attr.getValue());
    if (!branch || !branch.getType().isSignlessInteger(64) ||
        branch.getInt() < 0)
      return op->emitError() << "argument #" << argIndex << ": '" << name
                             << "' must be a non-negative i64, got "
                             << attr.getValue();
    if (!perBranch)
      return op->emitError() << "argument #" << argIndex << ": '" << name
                             << "' is only allowed on a text or pooled_text "
                                "input";
    return success();
  }
  auto input = dyn_cast<StringAttr>(attr.getValue());
  if (!input || !llvm::is_contained(stepInputNames(), input.getValue())) {
    InFlightDiagnostic diag = op->emitError()
                              << "argument #" << argIndex << ": '" << name
                              << "' must be one of ";
    llvm::interleaveComma(stepInputNames(), diag);
    return diag << "; got " << attr.getValue();
  }
  // One argument per input (per input and branch for the text inputs).
  IntegerAttr branch = branchOf(argIndex);
  for (unsigned other = 0; other < argIndex; ++other) {
    StringAttr otherInput = inputOf(other);
    if (!otherInput || otherInput != input)
      continue;
    if (perBranch && branchOf(other) != branch)
      continue;
    InFlightDiagnostic diag = op->emitError()
                              << "arguments #" << other << " and #" << argIndex
                              << " are both the " << input << " input";
    if (perBranch && branch)
      diag << " of branch " << branch.getInt();
    return diag;
  }
  return success();
}
