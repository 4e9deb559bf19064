//===- DitDialect.cpp - dit dialect registration --------------------------===//
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
ArrayRef<StringLiteral> DitDialect::stepInputNames() {
  static constexpr StringLiteral names[] = {
      "latents", "timestep", "sigma", "sigma_next",
      "text",    "pooled_text", "text_mask", "guidance"};
  return names;
}

ArrayRef<StringLiteral> DitDialect::modelFamilies() {
  static constexpr StringLiteral names[] = {
      "cogvideox", "flux",       "hunyuan_video", "ltx_video",
      "mochi",     "qwen_image", "sd3",           "wan"};
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
    perBranch = input.getValue() == "text" || input.getValue() == "pooled_text" ||
                input.getValue() == "text_mask";
  if (name == kBranchAttrName) {
    auto branch = dyn_cast<IntegerAttr>(attr.getValue());
    if (!branch || !branch.getType().isSignlessInteger(64) ||
        branch.getInt() < 0)
      return op->emitError() << "argument #" << argIndex << ": '" << name
                             << "' must be a non-negative i64, got "
                             << attr.getValue();
    if (!perBranch)
      return op->emitError() << "argument #" << argIndex << ": '" << name
                             << "' is only allowed on a text, pooled_text or "
                                "text_mask input";
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
