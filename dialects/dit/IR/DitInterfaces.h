//===- DitInterfaces.h - the dit op interfaces -------------------*- C++ -*-===//
#ifndef DIT_IR_DITINTERFACES_H
#define DIT_IR_DITINTERFACES_H

#include "dit/IR/DitInterfaceTypes.h"

#include "mlir/IR/OpDefinition.h"

#include <optional>

#include "dit/IR/DitInterfaces.h.inc"

namespace mlir {
class DialectRegistry;
namespace dit {
/// Attaches the dit interfaces to the upstream ops that appear in a
/// transformer (tensor.concat).
void registerExternalModels(DialectRegistry &registry);
} // namespace dit
} // namespace mlir

#endif // DIT_IR_DITINTERFACES_H
