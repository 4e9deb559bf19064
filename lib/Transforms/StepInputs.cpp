//===- StepInputs.cpp - step inputs by their dit.input name ---------------===//
#include "ditc/Transforms/StepInputs.h"

#include "dit/IR/DitDialect.h"

using namespace mlir;

namespace ditc {

StringRef stepInputName(BlockArgument arg) {
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.front())
    return {};
  auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                              dit::DitDialect::kInputAttrName);
  return name ? name.getValue() : StringRef();
}

std::optional<int64_t> stepInputBranch(BlockArgument arg) {
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.front())
    return std::nullopt;
  auto branch = fn.getArgAttrOfType<IntegerAttr>(
      arg.getArgNumber(), dit::DitDialect::kBranchAttrName);
  if (!branch)
    return std::nullopt;
  return branch.getInt();
}

FailureOr<BlockArgument> requireStepInput(func::FuncOp fn, StringRef name) {
  for (BlockArgument arg : fn.getArguments()) {
    if (stepInputName(arg) != name)
      continue;
    // The partitioner reshapes the latents by their batch and channels; a
    // hand-written module could give it anything.
    auto tensor = dyn_cast<RankedTensorType>(arg.getType());
    if (name == "latents" && (!tensor || tensor.getRank() < 2))
      return fn.emitError() << "the latents, argument #" << arg.getArgNumber()
                            << ", must be a ranked tensor [batch, channels, "
                               "...], got "
                            << arg.getType();
    return arg;
  }
  return fn.emitError() << "has no argument marked " << "'"
                        << dit::DitDialect::kInputAttrName << " = \"" << name
                        << "\"'; the importer names every step input";
}

} // namespace ditc
