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
                     "pp, ring, kv_gather, ulysses, tp); left out, the "
                     "deployment's order (given empty, an error)")};
  ListOption<std::string> degrees{
      *this, "degrees",
      llvm::cl::desc("Parallel degrees to set as the module's dit.mesh, as "
                     "axis=size entries (e.g. tp=2,ulysses=2); forwarded to "
                     "dit-mesh-layout")};
  Option<bool> checkLegality{
      *this, "check-legality",
      llvm::cl::desc("Run dit-check-legality first, so an illegal "
                     "configuration stops the pipeline (ditc compile checks "
                     "before it partitions, and turns it off)"),
      llvm::cl::init(true)};
  Option<bool> batchBranches{
      *this, "batch-branches",
      llvm::cl::desc("Run a role's guidance branches as one batched "
                     "transformer call (dit-batch-branches)"),
      llvm::cl::init(true)};
};

/// [legality check ->] mesh layout -> sharding propagation -> collective insertion -> stage
/// split -> role lowering [-> branch batching] -> collective verification. With `degrees`, the
/// mesh layout runs before the legality check, so that the check judges the
/// mesh the option sets (the check reads `dit.mesh`, never the grid).
void buildPartitionPipeline(mlir::OpPassManager &pm,
                            const PartitionOptions &options);

/// The error for a `mesh-order=` given with no axes, which dit-partition and
/// dit-mesh-layout both refuse (an empty list would silently mean "the
/// deployment's order").
std::string emptyMeshOrderMessage();

/// Registers `dit-partition` as a named pipeline for dit-opt.
void registerPartitionPipeline();

} // namespace ditc

#endif // DITC_TRANSFORMS_PIPELINES_H
