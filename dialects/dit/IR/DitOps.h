//===- DitOps.h - dit operations --------------------------------*- C++ -*-===//
#ifndef DIT_IR_DITOPS_H
#define DIT_IR_DITOPS_H

#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitTraits.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dit {
// ShardingInterface's generated declarations name the reduction kind
// unqualified.
using ::mlir::shard::ReductionKind;
} // namespace mlir::dit

#define GET_OP_CLASSES
#include "dit/IR/DitOps.h.inc"

#endif // DIT_IR_DITOPS_H
