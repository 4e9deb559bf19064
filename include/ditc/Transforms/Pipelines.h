//===- Pipelines.h - pass pipelines the CLI and the tests share -*- C++ -*-===//
#ifndef DITC_TRANSFORMS_PIPELINES_H
#define DITC_TRANSFORMS_PIPELINES_H

#include "ditc/Transforms/MeshAxisOption.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace ditc {

/// The options of `dit-partition`, shared by dit-opt
/// (`--dit-partition="mesh-order=tp,ulysses,..."`) and `ditc compile`.
struct PartitionOptions : mlir::PassPipelineOptions<PartitionOptions> {
  ListOption<mlir::dit::MeshAxis> meshOrder{
      *this, "mesh-order",
      llvm::cl::desc("Mesh axes outermost first (a permutation of dp, cfg, "
                     "pp, ring, kv_gather, ulysses, tp); empty keeps the "
                     "deployment's order")};
  Option<bool> checkLegality{
      *this, "check-legality",
      llvm::cl::desc("Run dit-check-legality first, so an illegal "
                     "configuration stops the pipeline (ditc compile checks "
                     "before it partitions, and turns it off)"),
      llvm::cl::init(true)};
};

/// [legality check ->] mesh layout -> sharding propagation -> collective insertion -> stage
/// split -> role lowering -> collective verification.
void buildPartitionPipeline(mlir::OpPassManager &pm,
                            const PartitionOptions &options);

/// Registers `dit-partition` as a named pipeline for dit-opt.
void registerPartitionPipeline();

} // namespace ditc

#endif // DITC_TRANSFORMS_PIPELINES_H
