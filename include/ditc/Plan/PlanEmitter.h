//===- PlanEmitter.h - build the plan of a partitioned module ---*- C++ -*-===//
//
// Puts the plan together from its parts: one program per role
// (ProgramSerializer), its per-step figures (StepAccounting), and the
// manifest (ManifestBuilder). PlanWriter writes the result. See
// docs/plan-format.md.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_PLAN_PLANEMITTER_H
#define DITC_PLAN_PLANEMITTER_H

#include "ditc/Analysis/Deployment.h"
#include "ditc/Importer/ModelSpec.h"
#include "ditc/Plan/ManifestBuilder.h"
#include "ditc/Plan/PlanWriter.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace ditc {

/// Choices the plan records that no pass makes.
struct PlanOptions {
  /// --ulysses-head-groups: the head groups each Ulysses attention's
  /// exchanges are pipelined in (0: chosen per attention, 1: none;
  /// checkUlyssesHeadGroups says whether a count fits the module).
  int64_t ulyssesHeadGroups = 0;
};

/// Builds the plan of `module`, which the partition pipeline has lowered
/// to role programs. `spec`, `workload` and `deployment` describe the
/// request; `warnings` are its check's. Fails with an MLIR error on the
/// module.
mlir::FailureOr<Plan> buildPlan(mlir::ModuleOp module, const ModelSpec &spec,
                                const Workload &workload,
                                const Deployment &deployment,
                                const std::vector<PlanWarning> &warnings = {},
                                const PlanOptions &options = {});

/// Why `groups` (>= 2) head groups do not fit a Ulysses attention of the
/// partitioned `module`: "N heads per rank in LOCATION", the first whose
/// heads `groups` does not divide; nullopt when it divides them all (or
/// no attention pipelines its exchanges).
std::optional<std::string> checkUlyssesHeadGroups(mlir::ModuleOp module, int64_t groups);

} // namespace ditc

#endif // DITC_PLAN_PLANEMITTER_H
