//===- InitAll.h - the dialects and passes every ditc tool registers -----===//
#ifndef DITC_INITALL_H
#define DITC_INITALL_H

#include "dit/IR/DitDialect.h"
#include "dit/IR/DitShardingRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

namespace ditc {

/// The dialects a ditc module may contain.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::dit::DitDialect, mlir::shard::ShardDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::tensor::TensorDialect>();
  // tensor.concat's dit sharding rule (fused projections).
  mlir::dit::registerExternalModels(registry);
}

/// Registers every ditc pass with the global pass registry; dit-opt and ditc
/// call this and nothing else.
void registerAllPasses();

} // namespace ditc

#endif // DITC_INITALL_H
