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

#include <vector>

namespace ditc {

/// Builds the plan of `module`, which the partition pipeline has lowered
/// to role programs. `spec`, `workload` and `deployment` describe the
/// request; `warnings` are its check's. Fails with an MLIR error on the
/// module.
mlir::FailureOr<Plan> buildPlan(mlir::ModuleOp module, const ModelSpec &spec,
                                const Workload &workload,
                                const Deployment &deployment,
                                const std::vector<PlanWarning> &warnings = {});

} // namespace ditc

#endif // DITC_PLAN_PLANEMITTER_H
