//===- ManifestBuilder.h - the plan manifest from the lowered module -*- C++ -*-===//
//
// The manifest ties ranks to programs (docs/plan-format.md). Everything
// about the layout comes from the attributes the partition pipeline left
// on the module: the mesh (`shard.grid @mesh`, `dit.mesh_axes`), the groups
// (`dit.groups`, from dit-mesh-layout), the roles (`dit.roles` and each
// role's `dit.role`) and the rank table (`dit.rank_roles`, from
// dit-lower-roles). The request (model, workload, deployment, warnings)
// supplies what the plan records about where it came from.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_PLAN_MANIFESTBUILDER_H
#define DITC_PLAN_MANIFESTBUILDER_H

#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/StepAccounting.h"
#include "ditc/Importer/ModelSpec.h"
#include "ditc/Support/PlanFormat.h"
#include "ditc/Transforms/MeshInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ditc {

/// One role program, as `dit.roles` lists it.
struct RoleProgram {
  mlir::func::FuncOp fn;
  std::string id;     // "s0_c1", "s0_c0_e2" for the second expert
  std::string file;   // "programs/<id>.json"
  std::string expert; // "transformer" or "transformer_2"
  int64_t stage = 0, cfg = 0;
  std::vector<int64_t> branches; // the guidance branches the role runs
};

/// A warning of the legality check a plan was compiled under. The manifest
/// keeps them, so a plan says what its check said.
struct PlanWarning {
  std::string rule, message, component;
};

/// The roles of `module` in `dit.roles` order. `branches` is the
/// workload's guidance branch count; role cfg coordinate c runs its share.
mlir::FailureOr<std::vector<RoleProgram>>
readRolePrograms(mlir::ModuleOp module, const MeshInfo &mesh, int64_t branches);

/// The manifest's `programs` entry of one program, without `sha256` (the
/// writer adds it from the file's bytes).
nlohmann::json programEntry(const RoleProgram &role,
                            std::pair<int64_t, int64_t> layers,
                            const StepStats &stats);

/// The manifest without `plan_hash` and the programs' `sha256`. `programs`
/// are the entries of `roles`, in the same order.
mlir::FailureOr<nlohmann::json>
buildManifest(mlir::ModuleOp module, const MeshInfo &mesh,
              const std::vector<RoleProgram> &roles, nlohmann::json programs,
              const ModelSpec &spec, const Workload &workload,
              const Deployment &deployment,
              const std::vector<PlanWarning> &warnings);

} // namespace ditc

#endif // DITC_PLAN_MANIFESTBUILDER_H
