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
  pm.addPass(createPartitionVae());
  pm.addPass(createPartitionTextEncoder());
  pm.addPass(createVerifyCollectives());
}

std::string emptyMeshOrderMessage() {
  return "mesh-order option is empty; expected a permutation of dp, cfg, pp, "
         "ring, kv_gather, ulysses, tp (leave the option out to keep the "
         "deployment's order)";
}

void registerPartitionPipeline() {
  // Registered by hand rather than with PassPipelineRegistration, which
  // parses the options without the error handler: an unknown option or an
  // empty mesh-order would exit 1 with no `error:` diagnostic.
  mlir::registerPassPipeline(
      "dit-partition",
      "Check legality, lay out the mesh, shard, insert collectives, split "
      "stages, lower to role programs, batch their guidance branches, split "
      "the VAE decoder into band programs and verify them",
      [](mlir::OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
             errorHandler) -> mlir::LogicalResult {
        PartitionOptions options;
        std::string message;
        llvm::raw_string_ostream os(message);
        if (mlir::failed(options.parseFromString(text, os))) {
          // The mesh axis parser has printed its own error.
          if (message.empty())
            return mlir::failure();
          return errorHandler(llvm::StringRef(message).rtrim());
        }
        if (options.meshOrder.hasValue() && options.meshOrder.empty())
          return errorHandler(emptyMeshOrderMessage());
        buildPartitionPipeline(pm, options);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> print) {
        print(PartitionOptions());
      });
}

} // namespace ditc
