//===- PlanEmitter.cpp - the plan of a partitioned module -----------------===//
//
// One program per role, in `dit.roles` order: its body from the program
// serializer, its per-step figures from the step accounting; then the
// manifest from the module's layout attributes, and the partitioned module
// as text. Nothing is written here (PlanWriter does that).
//
//===----------------------------------------------------------------------===//
#include "ditc/Plan/PlanEmitter.h"
#include "ditc/Analysis/Overlap.h"
#include "ditc/Analysis/StepAccounting.h"
#include "ditc/Plan/ProgramSerializer.h"
#include "ditc/Transforms/MeshInfo.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using nlohmann::json;

namespace ditc {

FailureOr<Plan> buildPlan(ModuleOp module, const ModelSpec &spec,
                          const Workload &workload,
                          const Deployment &deployment,
                          const std::vector<PlanWarning> &warnings,
                          const PlanOptions &options) {
  FailureOr<MeshInfo> mesh = readMeshInfo(module);
  if (failed(mesh))
    return failure();
  FailureOr<std::vector<RoleProgram>> roles =
      readRolePrograms(module, *mesh, workload.branches);
  if (failed(roles))
    return failure();

  Plan plan;
  json entries = json::array();
  for (const RoleProgram &role : *roles) {
    FailureOr<SerializedProgram> body =
        serializeProgram(role.fn, *mesh, options.ulyssesHeadGroups);
    FailureOr<StepStats> stats = accountStep(role.fn, *mesh);
    if (failed(body) || failed(stats))
      return failure();
    json program = {{"format_version", kPlanFormatVersion},
                    {"id", role.id},
                    {"stage", role.stage},
                    {"cfg", role.cfg},
                    {"branches", role.branches},
                    {"expert", role.expert}};
    // Move, not copy: a transformer body is most of the plan.
    for (auto &[key, value] : body->body.items())
      program[key] = std::move(value);
    plan.programs.push_back({role.id, role.file, std::move(program)});
    entries.push_back(programEntry(role, body->layers, *stats));
  }
  FailureOr<json> manifest =
      buildManifest(module, *mesh, *roles, std::move(entries), spec, workload,
                    deployment, warnings);
  if (failed(manifest))
    return failure();
  plan.manifest = std::move(*manifest);

  llvm::raw_string_ostream os(plan.partitionedMLIR);
  // The pipeline has just verified the module; printing need not again.
  module.print(os, OpPrintingFlags().assumeVerified());
  os.flush();
  return plan;
}

std::optional<std::string> checkUlyssesHeadGroups(ModuleOp module, int64_t groups) {
  std::optional<std::string> why;
  module.walk([&](dit::AttentionOp attention) {
    int64_t heads = pipelinableUlyssesHeads(attention);
    if (heads == 0 || heads % groups == 0)
      return WalkResult::advance();
    // The importer names each op after its diffusers module
    // (loc("blocks.0.attn1")).
    std::string where;
    if (auto name = dyn_cast<NameLoc>(attention.getLoc())) {
      where = name.getName().str();
    } else {
      llvm::raw_string_ostream os(where);
      attention.getLoc().print(os);
    }
    why = std::to_string(heads) + " heads per rank in " + where;
    return WalkResult::interrupt();
  });
  return why;
}

} // namespace ditc
