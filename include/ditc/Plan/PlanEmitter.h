//===- PlanEmitter.h - write a partitioned module as a plan folder -*- C++ -*-===//
//
// A plan is what crosses from the compiler to the runtime: JSON files only,
// so a GPU host needs libtorch and nothing of MLIR. See docs/plan-format.md.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_PLAN_PLANEMITTER_H
#define DITC_PLAN_PLANEMITTER_H

#include "ditc/Analysis/Deployment.h"
#include "ditc/Importer/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace ditc {

/// Per rank and denoising step, for one role program.
struct StepStats {
  std::map<std::string, int64_t> collectives; // by kind
  std::map<std::string, int64_t> bytesSent;   // by axis name
  int64_t paramBytes = 0;
  int64_t activationBytes = 0; // estimated peak of live values
};

struct ProgramFile {
  std::string id;    // "s0_c0"
  std::string file;  // "programs/s0_c0.json"
  int64_t stage = 0, cfg = 0;
  std::vector<int64_t> branches;
  std::pair<int64_t, int64_t> layers{0, -1};
  std::string expert; // denoise_step or denoise_step_2
  nlohmann::json program;
  StepStats stats;
};

struct Plan {
  nlohmann::json manifest; // without plan_hash until finish()
  std::vector<ProgramFile> programs;
  std::string partitionedMLIR;
};

/// A warning of the legality check a plan was compiled under. The manifest
/// keeps them, so a plan says what its check said.
struct PlanWarning {
  std::string rule, message, component;
};

/// Builds the plan of `module`, which the partition pipeline has lowered
/// to role programs. `spec`, `workload` and `deployment` describe the
/// request; `warnings` are its check's. Fails with an MLIR error on the
/// module.
mlir::FailureOr<Plan> buildPlan(mlir::ModuleOp module, const ModelSpec &spec,
                                const Workload &workload,
                                const Deployment &deployment,
                                const std::vector<PlanWarning> &warnings = {});

/// Writes the plan into `dir` (created; must not exist or be empty), going
/// through a temporary folder and a rename so a failure leaves nothing.
/// With `perRank`, also writes `rank-<r>/` bundles: the manifest and that
/// rank's program files, so one bundle can be shipped to each host.
/// Returns the plan hash. Throws BadInput on I/O errors.
std::string writePlan(Plan &plan, const std::string &dir, bool perRank = false);

/// One row per program: collectives, bytes sent per axis, parameter and
/// activation bytes, per rank per step.
std::string formatPlanSummary(const Plan &plan);

} // namespace ditc

#endif // DITC_PLAN_PLANEMITTER_H
