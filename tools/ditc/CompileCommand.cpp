//===- CompileCommand.cpp - `ditc compile`: per-rank plans ----------------===//
#include "Commands.h"

#include "ditc/Analysis/AxisConversion.h"
#include "ditc/InitAll.h"
#include "ditc/Plan/PlanEmitter.h"
#include "ditc/Support/Utf8.h"
#include "ditc/Transforms/Pipelines.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace ditc {

namespace {

const Flag kPlanDir =
    Flag::option("-o", "PLAN_DIR", "the plan folder (new or empty); required");
const Flag kCompileSummary = Flag::switchFlag(
    "--summary", "print per-program collectives and bytes per step");
const Flag kPerRank =
    Flag::switchFlag("--per-rank", "also write rank-<r>/ bundles (manifest + "
                                   "that\nrank's programs), one per host to "
                                   "ship");
const Flag kNoBatchBranches = Flag::switchFlag(
    "--no-batch-branches",
    "run each guidance branch a rank holds as its own\ntransformer call; by "
    "default they run as one\nbatched call (docs/axes/cfg.md), which needs\n"
    "their activations at once");

const Flag kUlyssesHeadGroups =
    Flag::option("--ulysses-head-groups", "G",
                 "pipeline each Ulysses attention's exchanges in G\n"
                 "head groups (docs/runtime.md, Overlap); 1 turns\n"
                 "it off; G must divide the heads each rank holds\n"
                 "(default: the largest of 4, 3, 2 that does)")
        .range(1, 1024);

std::vector<FlagGroup> compileFlags() {
  return {parallelFlags(), workloadFlags(),
          commonFlags({&kPlanDir, &kDtypeFlag, &kCompileSummary, &kPerRank,
                       &kNoBatchBranches, &kUlyssesHeadGroups, &kEmitFlag})};
}

} // namespace

std::string compileUsage() {
  return formatUsage(
      std::string(
          R"(usage: ditc compile MODEL [parallel flags | --deployment FILE]
                    [workload flags] -o PLAN_DIR [flags]

Checks the configuration as `ditc check` does, then writes per-rank plans
(see docs/plan-format.md), with layout.svg, a picture of where the ranks
sit. An illegal configuration is reported and nothing is written.

)") + kModelHelp,
      compileFlags(),
      std::string("exit codes: 0 written, 1 illegal configuration (nothing "
                  "written) or an\n            internal error,\n") +
          kBadInputExit);
}

int runCompile(const Argv &argv) {
  ArgParser args = parseFlags("ditc compile", compileFlags(), argv);
  args.expectPositionals(1, kModelArgument);
  Format format = readFormat(args);
  auto output = args.get(kPlanDir);
  if (!output || output->empty())
    badFlag(kPlanDir.name, output.value_or(""),
            "'ditc compile' needs " + kPlanDir.name + " " + kPlanDir.metavar);
  ElementType elementType = readElementType(args);
  Request request = readRequest(args);

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  LegalityReport report = checkRequest(context, request, module, elementType);
  // --emit ENGINE: an engine that cannot run the configuration refuses it
  // before anything is written.
  const engines::Engine *emit = readEngineFlag(args, kEmitFlag);
  std::optional<engines::EmittedLaunch> launch;
  if (emit && report.legal())
    launch = emitForEngine(request, report, *emit);
  if (!report.legal()) {
    if (format == Format::Json) {
      nlohmann::json refusal = checkJson(request, report);
      refusal.update(errorJson("illegal", verdictLine(request, report)));
      printJson(refusal);
    } else {
      printCheckText(request, report);
    }
    return 1;
  }
  mlir::PassManager pm(&context);
  // The passes keep the IR valid (the lit tests verify after each one);
  // the plan is cut from IR verified once, at the end.
  pm.enableVerifier(false);
  PartitionOptions options;
  options.checkLegality = false; // checked above, with suggestions
  options.batchBranches = !args.has(kNoBatchBranches);
  for (Axis axis : request.deployment.meshOrder)
    options.meshOrder.push_back(toMeshAxis(axis));
  buildPartitionPipeline(pm, options);
  if (mlir::failed(pm.run(*module)) || mlir::failed(mlir::verify(*module)))
    throw InternalError("the partition pipeline failed on a configuration "
                        "the legality rules accept (diagnostics on stderr)");
  std::vector<PlanWarning> warnings;
  for (const RuleDiagnostic &d : report.diagnostics)
    if (d.severity == Severity::Warning)
      warnings.push_back({d.rule, d.message, d.component});
  PlanOptions planOptions;
  if (auto groups = args.getInt(kUlyssesHeadGroups)) {
    planOptions.ulyssesHeadGroups = *groups;
    if (*groups > 1)
      if (std::optional<std::string> misfit = checkUlyssesHeadGroups(*module, *groups))
        badFlag(kUlyssesHeadGroups.name, std::to_string(*groups),
                kUlyssesHeadGroups.name + " " + std::to_string(*groups) +
                    " does not divide the " + *misfit +
                    "; allowed: 1 (off) or a divisor of the heads each Ulysses rank "
                    "holds (heads / (tp x ulysses))");
  }
  mlir::FailureOr<Plan> plan = buildPlan(*module, request.spec, request.workload,
                                         request.deployment, warnings, planOptions);
  if (mlir::failed(plan))
    throw InternalError("the plan could not be built from the partitioned "
                        "module (diagnostics on stderr)");
  std::string hash = writePlan(*plan, *output, args.has(kPerRank));
  if (format == Format::Json) {
    printJson({{"model", escapeInvalidUtf8(request.spec.name)},
               {kNumGpusFlag.jsonKey, request.deployment.numGpus},
               {"plan_dir", escapeInvalidUtf8(*output)},
               {"plan_hash", hash},
               {"programs", plan->manifest["programs"]},
               {"diagnostics", diagnosticsJson(request, report)},
               {"emit", launch ? launchJson(*emit, *launch) : nlohmann::json(nullptr)}});
    return 0;
  }
  // What the check said about a legal configuration still holds for
  // its plan: a cross-node group or an idle cfg rank is worth seeing.
  printDiagnosticsText(request, report);
  if (args.has(kCompileSummary))
    llvm::outs() << formatPlanSummary(*plan);
  llvm::outs() << "compiled " << escapeInvalidUtf8(request.spec.name) << " for "
               << request.deployment.numGpus
               << " GPUs: " << plan->programs.size() << " program"
               << (plan->programs.size() == 1 ? "" : "s");
  if (const Placement *transformer = request.deployment.find("transformer");
      transformer && transformer->offload)
    llvm::outs() << " (--expert-offload: one expert resident at a time)";
  llvm::outs() << ", plan " << hash.substr(0, 16) << ", written to "
               << escapeInvalidUtf8(*output) << "\n";
  if (launch)
    printLaunch(*emit, *launch);
  return 0;
}

} // namespace ditc
