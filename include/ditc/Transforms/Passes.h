//===- Passes.h - ditc passes -----------------------------------*- C++ -*-===//
#ifndef DITC_TRANSFORMS_PASSES_H
#define DITC_TRANSFORMS_PASSES_H

#include "dit/IR/DitDialect.h"
#include "ditc/Transforms/MeshAxisOption.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace ditc {

#define GEN_PASS_DECL
#include "ditc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ditc/Transforms/Passes.h.inc"

} // namespace ditc

#endif // DITC_TRANSFORMS_PASSES_H
