//===- PlanWriter.h - a built plan onto disk, no MLIR ------------*- C++ -*-===//
//
// A plan is what crosses from the compiler to the runtime: JSON files only,
// so a GPU host needs libtorch and nothing of MLIR. This part takes a plan
// already rendered as JSON and writes the folder (docs/plan-format.md); it
// links neither MLIR nor LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_PLAN_PLANWRITER_H
#define DITC_PLAN_PLANWRITER_H

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ditc {

struct ProgramFile {
  std::string id;   // "s0_c0"
  std::string file; // "programs/s0_c0.json"
  nlohmann::json program;
};

struct Plan {
  /// Without `plan_hash` and the programs' `sha256` until writePlan.
  /// `programs` lists the entries of `programs` below, in order.
  nlohmann::json manifest;
  std::vector<ProgramFile> programs;
  std::string partitionedMLIR;
};

/// Writes the plan into `dir` (created; must not exist or be empty), going
/// through a temporary folder and a rename so a failure leaves nothing.
/// Fills in the programs' `sha256` and the `plan_hash`. With `perRank`,
/// also writes `rank-<r>/` bundles: the manifest and that rank's program
/// files, so one bundle can be shipped to each host. Returns the plan hash.
/// Throws BadInput on I/O errors.
std::string writePlan(Plan &plan, const std::string &dir, bool perRank = false);

/// One row per program: collectives, bytes sent per axis, parameter and
/// activation bytes, per rank per step (the manifest's `per_step`).
std::string formatPlanSummary(const Plan &plan);

} // namespace ditc

#endif // DITC_PLAN_PLANWRITER_H
