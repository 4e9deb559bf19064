//===- Request.cpp - what check and compile read --------------------------===//
//-===//
#include "Commands.h"

#include "ditc/Analysis/AxisConversion.h"
#include "ditc/CostModel/Advice.h"
#include "ditc/CostModel/MemoryFit.h"
#include "ditc/CostModel/Search.h"
#include "ditc/Support/Utf8.h"

#include "dit/IR/DitDialect.h"
#include "llvm/Support/raw_ostream.h"

namespace ditc {

WorkloadOptions mergeWorkload(WorkloadOptions base,
                              const WorkloadOptions &flags) {
  if (flags.height)
    base.height = flags.height;
  if (flags.width)
    base.width = flags.width;
  if (flags.frames)
    base.frames = flags.frames;
  if (flags.batch)
    base.batch = flags.batch;
  if (flags.steps)
    base.steps = flags.steps;
  if (flags.guidanceScale)
    base.guidanceScale = flags.guidanceScale;
  if (flags.maxSequenceLength)
    base.maxSequenceLength = flags.maxSequenceLength;
  return base;
}

namespace {

/// Notes from resolving the flags, then the rules' diagnostics.
std::vector<RuleDiagnostic> allDiagnostics(const Request &request,
                                           const LegalityReport &report) {
  std::vector<RuleDiagnostic> diagnostics;
  for (const ResolutionNote &note : request.deployment.notes)
    diagnostics.push_back(
        {note.rule, Severity::Note, note.message, "transformer", nullptr});
  diagnostics.insert(diagnostics.end(), report.diagnostics.begin(),
                     report.diagnostics.end());
  return diagnostics;
}

/// " --expert-offload", " --text-encoder-tp-size T" (and the offload) and
/// " --vae-parallel-size V" (and its row split) when those components are
/// split or offloaded.
std::string componentFlags(const Deployment &deployment) {
  std::string out;
  if (const Placement *transformer = deployment.find("transformer");
      transformer && transformer->offload)
    out += " --expert-offload";
  if (const Placement *encoder = deployment.find("text_encoder")) {
    if (encoder->degrees[Axis::TP] > 1)
      out += " --text-encoder-tp-size " + std::to_string(encoder->degrees[Axis::TP]);
    if (encoder->offload)
      out += " --text-encoder-offload";
  }
  const Placement *vae = deployment.find("vae");
  if (!vae || vae->vaeParallelSize == 1)
    return out;
  out += " --vae-parallel-size " + std::to_string(vae->vaeParallelSize);
  for (size_t i = 0; i < vae->vaeRowSplit.size(); ++i)
    out += (i ? "," : " --vae-row-split ") + std::to_string(vae->vaeRowSplit[i]);
  return out;
}

} // namespace

Request readRequest(const ArgParser &args) {
  Request request;
  WorkloadOptions workloadOptions = readWorkloadFlags(args);
  if (auto file = args.get(kDeploymentFlag)) {
    for (const Flag *flag : deploymentFlags())
      if (args.has(*flag))
        badFlag(flag->name, args.get(*flag).value_or(""),
                flag->name + " cannot be combined with " +
                    kDeploymentFlag.name + "; the file gives every degree");
    DeploymentFile parsed = parseDeploymentFile(*file);
    request.deployment = std::move(parsed.deployment);
    workloadOptions = mergeWorkload(parsed.workload, workloadOptions);
    if (auto order = args.get(kMeshOrderFlag))
      request.deployment.meshOrder =
          parseMeshOrder("command line: " + kMeshOrderFlag.name, *order);
  } else {
    request.deployment = deploymentFromFlags(readParallelFlags(args));
  }
  request.spec = loadModel(args.positional()[0]);
  request.workload = resolveWorkload(request.spec, workloadOptions);
  // A bad name or file fails before any work.
  if (auto hardware = args.get(kHardwareFlag))
    request.hardware = loadHardwareProfile(*hardware);
  return request;
}

LegalityReport checkRequest(mlir::MLIRContext &context, const Request &request,
                            mlir::OwningOpRef<mlir::ModuleOp> &module,
                            ElementType elementType) {
  ImportOptions importOptions;
  importOptions.elementType = elementType;
  module = importModel(context, request.spec, request.workload, importOptions);
  (*module)->setAttr(mlir::dit::DitDialect::kDeploymentAttrName,
                     deploymentToAttribute(context, request.deployment));
  mlir::FailureOr<LegalityContext> legality =
      buildLegalityContext(*module, deploymentFromModule(*module));
  if (mlir::failed(legality))
    throw InternalError("the imported module lacks model facts");
  LegalityReport report = checkLegality(*legality);
  // memory-fit: with --hardware, the configuration's per-rank peak against
  // the profile's memory, before anything is compiled or loaded.
  if (request.hardware && report.legal())
    if (std::optional<MemoryPlan> plan = planMemory(
            *module, *legality, *request.hardware, request.workload.branches,
            request.spec.vaeConfig,
            {request.workload.batch, request.workload.latentFrames,
             request.workload.latentHeight, request.workload.latentWidth}))
      if (std::optional<RuleDiagnostic> refusal = checkMemoryFit(*plan, *request.hardware))
        report.diagnostics.push_back(std::move(*refusal));
  // The default profile is read only when a note or a suggestion needs it.
  auto hardware = [&] {
    return request.hardware ? *request.hardware : loadHardwareProfile("h100-sxm");
  };
  if (report.legal())
    for (RuleDiagnostic &note :
         adviseConfiguration(*module, *legality, hardware, request.workload.steps,
                             request.workload.branches))
      report.diagnostics.push_back(std::move(note));
  if (!report.legal())
    for (const auto &[degrees, components] : suggestConfigurations(
             *module, *legality, hardware(), request.workload.steps,
             request.workload.branches,
             request.spec.vaeConfig,
             {request.workload.batch, request.workload.latentFrames,
              request.workload.latentHeight, request.workload.latentWidth})) {
      report.suggestions.push_back(degrees);
      report.suggestedComponents.push_back(components);
    }
  return report;
}

void printDiagnosticsText(const Request &request,
                          const LegalityReport &report) {
  for (const RuleDiagnostic &d : allDiagnostics(request, report))
    llvm::outs() << severityName(d.severity) << "[" << d.rule
                 << "]: " << d.message << "\n";
}

std::string verdictLine(const Request &request, const LegalityReport &report) {
  return std::string(report.legal() ? "legal" : "illegal") + ": " +
         escapeInvalidUtf8(request.spec.name) + " with " +
         degreesAsFlags(report.config.degrees, report.config.numGpus) +
         componentFlags(request.deployment) + ", " +
         std::to_string(report.config.sequenceLength) + " image tokens";
}

void printCheckText(const Request &request, const LegalityReport &report) {
  printDiagnosticsText(request, report);
  for (size_t i = 0; i < report.suggestions.size(); ++i) {
    const Degrees &s = report.suggestions[i];
    llvm::outs() << "suggestion: " << degreesAsFlags(s, s.worldSize())
                 << componentsAsFlags(report.suggestedComponents[i]) << "\n";
  }
  llvm::outs() << verdictLine(request, report) << "\n";
}

nlohmann::json diagnosticsJson(const Request &request,
                               const LegalityReport &report) {
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const RuleDiagnostic &d : allDiagnostics(request, report))
    diagnostics.push_back({{"rule", d.rule},
                           {"severity", severityName(d.severity)},
                           {"message", d.message},
                           {"component", d.component}});
  return diagnostics;
}

nlohmann::json checkJson(const Request &request, const LegalityReport &report) {
  const ResolvedConfig &c = report.config;
  nlohmann::json config = degreesAsJson(c.degrees);
  config[kNumGpusFlag.jsonKey] = c.numGpus;
  config["pp_partition"] = c.ppPartition;
  config["attention_backend"] = c.attentionBackend;
  config["sequence_length"] = c.sequenceLength;
  config["text_length"] = c.textLength;
  std::optional<int64_t> perNode = request.deployment.ranksPerNode();
  config["gpus_per_node"] = perNode ? nlohmann::json(*perNode) : nlohmann::json(nullptr);
  nlohmann::json out = {{"legal", report.legal()}, {"config", config}};
  out["workload"] = workloadJson(request.workload);
  out["diagnostics"] = diagnosticsJson(request, report);
  out["suggestions"] = nlohmann::json::array();
  for (size_t i = 0; i < report.suggestions.size(); ++i) {
    nlohmann::json entry = degreesAsJson(report.suggestions[i]);
    entry[kNumGpusFlag.jsonKey] = report.suggestions[i].worldSize();
    const SuggestedComponents &components = report.suggestedComponents[i];
    entry["vae_parallel_size"] = components.vaeParallelSize;
    entry["text_encoder_tp_size"] = components.textEncoderTpSize;
    entry["text_encoder_offload"] = components.textEncoderOffload;
    out["suggestions"].push_back(entry);
  }
  return out;
}

} // namespace ditc
