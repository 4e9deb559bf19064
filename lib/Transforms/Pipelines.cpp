//===- Pipelines.cpp - the partition pipeline -----------------------------===//
#include "ditc/Transforms/Pipelines.h"
#include "ditc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

namespace ditc {

void buildPartitionPipeline(mlir::OpPassManager &pm,
                            const PartitionOptions &options) {
  MeshLayoutOptions layout;
  layout.meshOrder.assign(options.meshOrder.begin(), options.meshOrder.end());
  layout.degrees.assign(options.degrees.begin(), options.degrees.end());
  // The layout sets dit.mesh from `degrees`; the check must see that mesh.
  bool layoutFirst = !options.degrees.empty();
  if (layoutFirst)
    pm.addPass(createMeshLayout(layout));
  if (options.checkLegality)
    pm.addPass(createCheckLegality());
  if (!layoutFirst)
    pm.addPass(createMeshLayout(layout));
  pm.addPass(createPropagateSharding());
  pm.addPass(createInsertCollectives());
  pm.addPass(createSplitStages());
  pm.addPass(createLowerRoles());
  if (options.batchBranches)
    pm.addPass(createBatchBranches());
  pm.addPass(createVerifyCollectives());
}

void registerPartitionPipeline() {
  mlir::PassPipelineRegistration<PartitionOptions>(
      "dit-partition",
      "Check legality, lay out the mesh, shard, insert collectives, split "
      "stages, lower to role programs, batch their guidance branches and "
      "verify them",
      buildPartitionPipeline);
}

} // namespace ditc
