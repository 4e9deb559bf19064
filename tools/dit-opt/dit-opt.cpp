//===- dit-opt.cpp - mlir-opt for the dit dialect and ditc passes ---------===//
#include "dit/IR/DitDialect.h"
#include "ditc/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  ditc::registerAllDialects(registry);
  ditc::registerAllPasses();
  // Upstream sharding propagation, over the dit ops that implement
  // shard::ShardingInterface (test/Transforms/upstream-sharding-propagation.mlir).
  mlir::shard::registerShardingPropagation();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dit optimizer driver\n", registry));
}
