//===- DitInterfaces.h - the dit op interfaces -------------------*- C++ -*-===//
#ifndef DIT_IR_DITINTERFACES_H
#define DIT_IR_DITINTERFACES_H

#include "dit/IR/DitInterfaceTypes.h"

#include "mlir/IR/OpDefinition.h"

#include <optional>

#include "dit/IR/DitInterfaces.h.inc"

#endif // DIT_IR_DITINTERFACES_H
