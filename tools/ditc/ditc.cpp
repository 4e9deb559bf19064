//===- ditc.cpp - the offline plan compiler's command line ----------------===//
//
//   ditc models [--format text|json]
//   ditc import MODEL [workload flags] [--dtype bf16|f32] [-o FILE]
//               [--summary [--format text|json]]
//   ditc check MODEL [parallel flags | --deployment FILE] [workload flags]
//              [--format text|json]
//   ditc compile MODEL [the check flags] -o PLAN_DIR [--summary] [--per-rank]
//   ditc explain PLAN_DIR [--format text|json]
//   ditc <command> --help, ditc help <command>
//
// With --format json, output and every error are JSON on stdout.
//
// Exit codes: 0 success, 1 an illegal configuration or a failed run, 2 bad
// input (a flag, a file, a field). Every subcommand is a thin layer over the
// libraries the passes use; nothing here re-implements a rule.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/AxisConversion.h"
#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/Legality.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/CostModel/HardwareProfile.h"
#include "ditc/CostModel/Search.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/Importer/Summary.h"
#include "ditc/InitAll.h"
#include "ditc/Plan/PlanEmitter.h"
#include "ditc/Plan/RankLayout.h"
#include "ditc/Support/ArgParser.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Spelling.h"
#include "ditc/Support/Utf8.h"
#include "ditc/Transforms/Pipelines.h"
#include "Calibrate.h"
#include "Weights.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include <nlohmann/json.hpp>
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>

using namespace ditc;

namespace {

// Each command's --help is assembled from these blocks, so a flag shared by
// several commands is described once.

const char *kModelHelp =
    R"(MODEL is a bundled model name (see `ditc models`; any case, or the Hugging
Face repository id of the same checkpoint, e.g. black-forest-labs/FLUX.1-dev),
a diffusers transformer config.json, or an HF-style snapshot folder
(model_index.json, transformer/config.json, vae/config.json).
)";

const char *kWorkloadHelp = R"(
workload flags (defaults come from the family's diffusers pipeline):
  --height H, --width W     pixels; each divides by VAE compression x patch
  --num-frames F            1 + a multiple of the VAE temporal compression
                            (1 for image models)
  --batch-size B            prompts per request (default 1)
  --guidance-scale G        CFG scale; at most 1 turns guidance off
  --num-inference-steps N   denoising steps
  --text-tokens L           text sequence length, diffusers' max_sequence_length
                            (1-65536; SD3 adds its 77 CLIP tokens; FLUX and
                            SD3 allow at most 512, Qwen-Image 1024)
)";

const char *kParallelHelp = R"(
parallel flags (degrees default to 1, --num-gpus to their product):
  --num-gpus N              world size
  --tp-size T               tensor parallelism
  --ulysses-degree U        Ulysses sequence parallelism (all-to-all)
  --ring-degree R           ring attention
  --kv-gather-degree G      sequence parallelism by K/V all-gather
  --sp-degree S             U x R x G; alone, 2 gives kv_gather 2 and more
                            gives ulysses S
  --cfg-parallel-size C     guidance branches on separate GPUs
  --pp-size P               pipeline stages (also --pipeline-parallel-size)
  --dp-size D               replicas
  --pp-layer-partition a,b,...
                            blocks per stage; without --pp-size, one stage
                            per entry
  --attention-backend NAME  fa, sage_attn, sdpa or xformers (default fa)
  --nnodes K, --gpus-per-node M
                            node shape, for the cross-node warnings
  --mesh-order a,b,...      mesh axes outermost first (default
                            dp,cfg,pp,ring,kv_gather,ulysses,tp)
  --hardware NAME|FILE      the profile that ranks suggestions for an
                            illegal configuration (default h100-sxm; see
                            ditc search)
  --deployment FILE         per-component degrees and rank lists instead of
                            the parallel flags (see docs/cli.md)
)";

const char *kDtypeHelp =
    "  --dtype bf16|f32          element type (default bf16)\n";

const char *kBadInputExit =
    "            2 bad input (a flag, a file or a field)\n";

std::string modelsUsage() {
  return std::string(R"(usage: ditc models

Lists the bundled models: name, transformer class, blocks, heads, head_dim,
width, text tokens, VAE spatial/temporal compression and guidance branches.

flags:
  --format text|json        output format (default text)
  -h, --help                this help

exit codes: 0 listed,
)") + kBadInputExit;
}

std::string importUsage() {
  return std::string(R"(usage: ditc import MODEL [workload flags] [flags]

Imports MODEL into the dit dialect and prints the module.

)") + kModelHelp +
         kWorkloadHelp + R"(
flags:
)" + kDtypeHelp +
         R"(  -o FILE                   write the module to FILE instead of stdout
  --summary                 print a readable summary instead of the module
                            (with -o, the module still goes to FILE)
  --format text|json        the summary's format (default text)
  --mlir-print-debuginfo    print each op's location: the diffusers module
                            it comes from (loc("blocks.3.attn1"))
  -h, --help                this help

exit codes: 0 imported,
)" + kBadInputExit;
}

std::string checkUsage() {
  return std::string(
             R"(usage: ditc check MODEL [parallel flags | --deployment FILE]
                  [workload flags] [--format text|json]

Says whether a parallel configuration is legal for MODEL at the workload,
and why not: every violated rule, then up to three legal configurations
nearby.

)") + kModelHelp +
         kParallelHelp + kWorkloadHelp + R"(
flags:
  --format text|json        output format (default text)
  -h, --help                this help

exit codes: 0 legal (warnings and notes allowed), 1 illegal,
)" + kBadInputExit;
}

std::string compileUsage() {
  return std::string(
             R"(usage: ditc compile MODEL [parallel flags | --deployment FILE]
                    [workload flags] -o PLAN_DIR [flags]

Checks the configuration as `ditc check` does, then writes per-rank plans
(see docs/plan-format.md), with layout.svg, a picture of where the ranks
sit. An illegal configuration is reported and nothing is written.

)") + kModelHelp +
         kParallelHelp + kWorkloadHelp + R"(
flags:
  -o PLAN_DIR               the plan folder (new or empty); required
)" + kDtypeHelp +
         R"(  --summary                 print per-program collectives and bytes per step
  --per-rank                also write rank-<r>/ bundles (manifest + that
                            rank's programs), one per host to ship
  --no-batch-branches       run each guidance branch a rank holds as its own
                            transformer call; by default they run as one
                            batched call (docs/axes/cfg.md), which needs
                            their activations at once
  --format text|json        output format (default text)
  -h, --help                this help

exit codes: 0 written, 1 illegal configuration (nothing written) or an
            internal error,
)" + kBadInputExit;
}

std::string searchUsage() {
  return std::string(R"(usage: ditc search MODEL --num-gpus N [--gpus-per-node M]
                   [--hardware NAME|FILE] [workload flags]
                   [--objective latency|throughput] [--top K|all]
                   [--attention-backend NAME] [--dtype bf16|f32]
                   [--format text|json]

Ranks every legal configuration of MODEL on N GPUs by the cost model: step
time = compute (a roofline per op class) + exposed communication (alpha-beta
per collective, on the link each group's ranks share) + the pipeline bubble.
Configurations whose peak memory per rank does not fit are dropped. The work
each rank does comes from the partition passes' own IR. See docs/search.md.

)") + kModelHelp + R"(
search flags:
  --num-gpus N              GPUs in the cluster
  --gpus-per-node M         ranks per node (default: the profile's, or N
                            when smaller); must divide N
  --hardware NAME|FILE      a bundled profile (h100-sxm, h800, h200, h20,
                            a100-80gb-sxm, l40s, l20, cpu-local; default
                            h100-sxm) or a profiles JSON file
  --objective latency       fastest step for one request (default)
  --objective throughput    most requests per second for the cluster, DP
                            replicas included
  --top K|all               rows to print (default 10)
  --attention-backend NAME  the attention kernel (default fa)
)" + kDtypeHelp + kWorkloadHelp +
         R"(
exit codes: 0 ranked, 1 no legal configuration fits (the count each rule
rejected is printed),
)" + kBadInputExit;
}

std::string weightsUsage() {
  return std::string(R"(usage: ditc weights SNAPSHOT [--format text|json]

Compares a diffusers checkpoint with the model its config describes.
SNAPSHOT is a pipeline folder (model_index.json, transformer/, and
transformer_2/ for Wan2.2 A14B) or a transformer folder alone (config.json
and diffusion_pytorch_model.safetensors, or the shards its .index.json
lists). The expected tensors are the parameters of the imported
transformer, as every plan names them. Lists the missing, unexpected,
mis-shaped and mis-typed tensors (a dtype other than the one holding most
of the snapshot's bytes), and totals the bytes per dtype.

flags:
  --format text|json        output format (default text)
  -h, --help                this help

exit codes: 0 every tensor present and right, 1 any tensor missing,
            unexpected, mis-shaped or mis-typed,
)") +
         "            2 an unreadable or invalid file or folder (a config the\n"
         "              importer refuses, a malformed safetensors file or index)\n";
}

std::string explainUsage() {
  return std::string(R"(usage: ditc explain PLAN_DIR [--format text|json]

Prints where a plan's ranks sit, from its manifest.json: a table of rank,
node, local GPU, coordinates on the axes of size > 1 and program; the groups
of each such axis; and which groups cross nodes. The plan folder's
layout.svg draws the same.

flags:
  --format text|json        output format (default text)
  -h, --help                this help

exit codes: 0 explained,
)") + kBadInputExit;
}

void addWorkloadFlags(ArgParser &args) {
  for (const char *flag : {"--height", "--width", "--num-frames", "--batch-size",
                           "--guidance-scale", "--num-inference-steps",
                           "--text-tokens"})
    args.addOption(flag);
}

WorkloadOptions readWorkloadFlags(const ArgParser &args) {
  WorkloadOptions options;
  options.height = args.getInt("--height", 1, 65536);
  options.width = args.getInt("--width", 1, 65536);
  options.frames = args.getInt("--num-frames", 1, 100000);
  options.batch = args.getInt("--batch-size", 1, 4096);
  options.steps = args.getInt("--num-inference-steps", 1, 10000);
  options.guidanceScale = args.getDouble("--guidance-scale");
  options.maxSequenceLength = args.getInt("--text-tokens", 1, 65536);
  return options;
}

const char *kParallelFlags[] = {
    "--num-gpus",       "--tp-size",           "--ulysses-degree",
    "--ring-degree",    "--kv-gather-degree",  "--sp-degree",
    "--cfg-parallel-size", "--pp-size",        "--dp-size",
    "--pp-layer-partition", "--attention-backend", "--nnodes",
    "--gpus-per-node"};

ParallelFlags readParallelFlags(const ArgParser &args) {
  constexpr int64_t kMaxDegree = kMaxParallelDegree;
  ParallelFlags flags;
  flags.numGpus = args.getInt("--num-gpus", 1, 1 << 20);
  flags.tp = args.getInt("--tp-size", 1, kMaxDegree);
  flags.ulysses = args.getInt("--ulysses-degree", 1, kMaxDegree);
  flags.ring = args.getInt("--ring-degree", 1, kMaxDegree);
  flags.kvGather = args.getInt("--kv-gather-degree", 1, kMaxDegree);
  flags.sp = args.getInt("--sp-degree", 1, kMaxDegree);
  flags.cfg = args.getInt("--cfg-parallel-size", 1, kMaxDegree);
  flags.pp = args.getInt("--pp-size", 1, kMaxDegree);
  flags.dp = args.getInt("--dp-size", 1, kMaxDegree);
  flags.ppPartition = args.get("--pp-layer-partition");
  flags.backend = args.get("--attention-backend");
  flags.nnodes = args.getInt("--nnodes", 1, kMaxDegree);
  flags.gpusPerNode = args.getInt("--gpus-per-node", 1, kMaxDegree);
  return flags;
}

/// Workload flags override the deployment file's workload section.
WorkloadOptions mergeWorkload(WorkloadOptions base,
                              const WorkloadOptions &flags) {
  if (flags.height) base.height = flags.height;
  if (flags.width) base.width = flags.width;
  if (flags.frames) base.frames = flags.frames;
  if (flags.batch) base.batch = flags.batch;
  if (flags.steps) base.steps = flags.steps;
  if (flags.guidanceScale) base.guidanceScale = flags.guidanceScale;
  if (flags.maxSequenceLength) base.maxSequenceLength = flags.maxSequenceLength;
  return base;
}

/// The flags that would select `degrees` on `numGpus` GPUs.
std::string degreesAsFlags(const Degrees &d, int64_t numGpus) {
  struct FlagOf {
    Axis axis;
    const char *flag;
  };
  static const FlagOf flags[] = {{Axis::TP, "--tp-size"},
                                 {Axis::Ulysses, "--ulysses-degree"},
                                 {Axis::Ring, "--ring-degree"},
                                 {Axis::KVGather, "--kv-gather-degree"},
                                 {Axis::CFG, "--cfg-parallel-size"},
                                 {Axis::PP, "--pp-size"},
                                 {Axis::DP, "--dp-size"}};
  std::string out = "--num-gpus " + std::to_string(numGpus);
  for (const FlagOf &f : flags)
    if (d[f.axis] > 1)
      out += std::string(" ") + f.flag + " " + std::to_string(d[f.axis]);
  return out;
}

nlohmann::json degreesAsJson(const Degrees &d) {
  return {{"tp_size", d[Axis::TP]},
          {"ulysses_degree", d[Axis::Ulysses]},
          {"ring_degree", d[Axis::Ring]},
          {"kv_gather_degree", d[Axis::KVGather]},
          {"cfg_parallel_size", d[Axis::CFG]},
          {"pp_size", d[Axis::PP]},
          {"dp_size", d[Axis::DP]}};
}

/// --dtype bf16|f32, bf16 by default.
ElementType readElementType(const ArgParser &args) {
  auto dtype = args.get("--dtype");
  if (!dtype || *dtype == "bf16")
    return ElementType::BF16;
  if (*dtype == "f32")
    return ElementType::F32;
  badFlag("--dtype", *dtype,
          "--dtype value '" + *dtype +
              "' is not allowed; expected bf16 or f32");
}

/// Text for people, or one JSON document on stdout for tools.
enum class Format { Text, Json };

/// --format text|json, text by default.
Format readFormat(const ArgParser &args) {
  std::string format = args.get("--format").value_or("text");
  if (format != "text" && format != "json")
    badFlag("--format", format,
            "--format value '" + format +
                "' is not allowed; expected text or json");
  return format == "json" ? Format::Json : Format::Text;
}

/// Whether the command line asks for JSON. Read before the command parses
/// its flags, so that an error in them is reported as JSON too.
bool asksForJson(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--format=json" ||
        (args[i] == "--format" && i + 1 < args.size() && args[i + 1] == "json"))
      return true;
  return false;
}

void printJson(const nlohmann::json &document) {
  // Every string that comes from input is escaped already; replacing any
  // invalid UTF-8 keeps a future one from turning into a type_error.
  llvm::outs() << document.dump(2, ' ', false,
                                nlohmann::json::error_handler_t::replace)
               << "\n";
}

/// {"error": {"kind", "message", "file"?, "field"?, "value"?}}: how every
/// failure reads in JSON mode (docs/cli.md).
nlohmann::json errorJson(const std::string &kind, const std::string &message,
                         const InputLocation &location = {}) {
  nlohmann::json error = {{"kind", kind},
                          {"message", escapeInvalidUtf8(message)}};
  for (auto [key, part] :
       {std::pair{"file", &location.file}, std::pair{"field", &location.field},
        std::pair{"value", &location.value}})
    if (!part->empty())
      error[key] = escapeInvalidUtf8(*part);
  return {{"error", error}};
}

/// A failure that is neither bad input nor an illegal configuration: a
/// bug in ditc. Exit 1, reported as kind "internal".
class InternalError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A model, a workload and a deployment, from flags or a deployment file.
struct Request {
  ModelSpec spec;
  Workload workload;
  Deployment deployment;
  /// The profile that ranks suggestions (--hardware), read once when the
  /// flag is given; without it, h100-sxm is read only if the check needs it.
  std::optional<HardwareProfile> hardware;
};

void addRequestFlags(ArgParser &args) {
  addWorkloadFlags(args);
  for (const char *flag : kParallelFlags)
    args.addOption(flag);
  args.addOption("--deployment");
  args.addOption("--mesh-order");
  args.addOption("--format");
  args.addOption("--hardware");
  // vLLM-Omni's name for the pipeline degree.
  args.addAlias("--pipeline-parallel-size", "--pp-size");
}

Request readRequest(const ArgParser &args) {
  Request request;
  WorkloadOptions workloadOptions = readWorkloadFlags(args);
  if (auto file = args.get("--deployment")) {
    for (const char *flag : kParallelFlags)
      if (args.has(flag))
        badFlag(flag, *args.get(flag),
                std::string(flag) + " cannot be combined with --deployment; "
                                    "the file gives every degree");
    DeploymentFile parsed = parseDeploymentFile(*file);
    request.deployment = std::move(parsed.deployment);
    workloadOptions = mergeWorkload(parsed.workload, workloadOptions);
    if (auto order = args.get("--mesh-order"))
      request.deployment.meshOrder =
          parseMeshOrder("command line: --mesh-order", *order);
  } else {
    ParallelFlags flags = readParallelFlags(args);
    flags.meshOrder = args.get("--mesh-order");
    request.deployment = deploymentFromFlags(flags);
  }
  request.spec = loadModel(args.positional()[0]);
  request.workload = resolveWorkload(request.spec, workloadOptions);
  // A bad name or file fails before any work.
  if (auto hardware = args.get("--hardware"))
    request.hardware = loadHardwareProfile(*hardware);
  return request;
}

/// Imports the request's model with its deployment attached, and judges
/// it the way dit-check-legality does (reading the deployment back).
LegalityReport checkRequest(mlir::MLIRContext &context, const Request &request,
                            mlir::OwningOpRef<mlir::ModuleOp> &module,
                            ElementType elementType = ElementType::BF16) {
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
  if (!report.legal())
    report.suggestions = suggestConfigurations(
        *module, *legality,
        request.hardware ? *request.hardware : loadHardwareProfile("h100-sxm"),
        request.workload.steps,
        guidanceBranchesRun(request.workload.branches,
                            request.workload.guidanceScale));
  return report;
}

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

void printDiagnosticsText(const Request &request,
                          const LegalityReport &report) {
  for (const RuleDiagnostic &d : allDiagnostics(request, report))
    llvm::outs() << severityName(d.severity) << "[" << d.rule
                 << "]: " << d.message << "\n";
}

/// "legal: MODEL with --flags, N image tokens" (or "illegal: ...").
std::string verdictLine(const Request &request, const LegalityReport &report) {
  return std::string(report.legal() ? "legal" : "illegal") + ": " +
         escapeInvalidUtf8(request.spec.name) + " with " +
         degreesAsFlags(report.config.degrees, report.config.numGpus) + ", " +
         std::to_string(report.config.sequenceLength) + " image tokens";
}

/// The text report of `ditc check`, also printed by a refused compile.
void printCheckText(const Request &request, const LegalityReport &report) {
  printDiagnosticsText(request, report);
  for (const Degrees &s : report.suggestions)
    llvm::outs() << "suggestion: " << degreesAsFlags(s, s.worldSize())
                 << "\n";
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

/// The JSON report of `ditc check`, also printed by a refused compile.
nlohmann::json checkJson(const Request &request, const LegalityReport &report) {
  const ResolvedConfig &c = report.config;
  nlohmann::json config = degreesAsJson(c.degrees);
  config["num_gpus"] = c.numGpus;
  config["pp_partition"] = c.ppPartition;
  config["attention_backend"] = c.attentionBackend;
  config["sequence_length"] = c.sequenceLength;
  config["text_length"] = c.textLength;
  nlohmann::json out = {{"legal", report.legal()}, {"config", config}};
  out["diagnostics"] = diagnosticsJson(request, report);
  out["suggestions"] = nlohmann::json::array();
  for (const Degrees &s : report.suggestions) {
    nlohmann::json entry = degreesAsJson(s);
    entry["num_gpus"] = s.worldSize();
    out["suggestions"].push_back(entry);
  }
  return out;
}

int runCheck(const std::vector<std::string> &argv) {
  ArgParser args("ditc check");
  addRequestFlags(args);
  args.parse(argv);
  args.expectPositionals(1, "a MODEL (a bundled name, config.json or folder)");
  Format format = readFormat(args);
  Request request = readRequest(args);

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  LegalityReport report = checkRequest(context, request, module);
  if (format == Format::Json)
    printJson(checkJson(request, report));
  else
    printCheckText(request, report);
  return report.legal() ? 0 : 1;
}

int runCompile(const std::vector<std::string> &argv) {
  ArgParser args("ditc compile");
  addRequestFlags(args);
  args.addOption("-o");
  args.addOption("--dtype");
  args.addSwitch("--summary");
  args.addSwitch("--per-rank");
  args.addSwitch("--no-batch-branches");
  args.parse(argv);
  args.expectPositionals(1, "a MODEL (a bundled name, config.json or folder)");
  Format format = readFormat(args);
  auto output = args.get("-o");
  if (!output || output->empty())
    badFlag("-o", output.value_or(""), "'ditc compile' needs -o PLAN_DIR");
  ElementType elementType = readElementType(args);
  Request request = readRequest(args);

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  LegalityReport report = checkRequest(context, request, module, elementType);
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
  options.batchBranches = !args.has("--no-batch-branches");
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
  mlir::FailureOr<Plan> plan = buildPlan(
      *module, request.spec, request.workload, request.deployment, warnings);
  if (mlir::failed(plan))
    throw InternalError("the plan could not be built from the partitioned "
                        "module (diagnostics on stderr)");
  std::string hash = writePlan(*plan, *output, args.has("--per-rank"));
  if (format == Format::Json) {
    printJson({{"model", escapeInvalidUtf8(request.spec.name)},
               {"num_gpus", request.deployment.numGpus},
               {"plan_dir", escapeInvalidUtf8(*output)},
               {"plan_hash", hash},
               {"programs", plan->manifest["programs"]},
               {"diagnostics", diagnosticsJson(request, report)}});
    return 0;
  }
  // What the check said about a legal configuration still holds for
  // its plan: a cross-node group or an idle cfg rank is worth seeing.
  printDiagnosticsText(request, report);
  if (args.has("--summary"))
    llvm::outs() << formatPlanSummary(*plan);
  llvm::outs() << "compiled " << escapeInvalidUtf8(request.spec.name) << " for "
               << request.deployment.numGpus << " GPUs: "
               << plan->programs.size() << " program"
               << (plan->programs.size() == 1 ? "" : "s") << ", plan "
               << hash.substr(0, 16) << ", written to "
               << escapeInvalidUtf8(*output) << "\n";
  return 0;
}

/// The flags that reproduce `config` with ditc compile.
std::string configurationFlags(const Configuration &config, int64_t numGpus,
                               int64_t gpusPerNode) {
  std::string flags = degreesAsFlags(config.degrees, numGpus);
  if (numGpus > gpusPerNode)
    flags += " --gpus-per-node " + std::to_string(gpusPerNode);
  if (config.meshOrder != MeshLayout::defaultOrder()) {
    flags += " --mesh-order ";
    for (size_t i = 0; i < config.meshOrder.size(); ++i)
      flags += std::string(i ? "," : "") + axisName(config.meshOrder[i]);
  }
  return flags;
}

nlohmann::json rankedJson(const RankedConfiguration &c, int64_t numGpus,
                          int64_t gpusPerNode) {
  nlohmann::json degrees, comm = nlohmann::json::object(), order, crossing;
  for (Axis axis : kAllAxes)
    degrees[axisName(axis)] = c.config.degrees[axis];
  for (auto &[axis, seconds] : c.estimate.commSeconds)
    comm[axisName(axis)] = seconds * 1e3;
  nlohmann::json sent = nlohmann::json::object();
  for (auto &[axis, bytes] : c.estimate.bytesSent)
    sent[axisName(axis)] = int64_t(std::llround(bytes));
  for (Axis axis : c.config.meshOrder)
    order.push_back(axisName(axis));
  crossing = nlohmann::json::array();
  for (Axis axis : c.estimate.crossNodeAxes)
    crossing.push_back(axisName(axis));
  const StepEstimate &e = c.estimate;
  return {{"degrees", degrees},
          {"mesh_order", order},
          {"step_ms", e.stepSeconds * 1e3},
          {"breakdown_ms",
           {{"compute", e.computeSeconds * 1e3},
            {"communication", comm},
            {"bubble", e.bubbleSeconds * 1e3}}},
          {"peak_memory_bytes", int64_t(e.peakMemoryBytes())},
          {"param_bytes", int64_t(e.paramBytes)},
          {"activation_bytes", int64_t(e.activationBytes)},
          {"buffer_bytes", int64_t(e.bufferBytes)},
          {"flops_per_rank", e.flopsPerRank},
          {"bytes_sent_per_step", sent},
          {"cross_node_axes", crossing},
          {"speedup", c.speedup},
          {"parallel_efficiency", c.parallelEfficiency},
          {"requests_per_second", c.requestsPerSecond},
          {"flags", configurationFlags(c.config, numGpus, gpusPerNode)}};
}

std::string formatMs(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", seconds * 1e3);
  return buffer;
}

std::string formatGiB(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", bytes / double(1 << 30));
  return buffer;
}

/// "cfg 1.2 + tp 0.4" for the text table.
std::string commText(const StepEstimate &e) {
  std::string out;
  for (auto &[axis, seconds] : e.commSeconds)
    if (seconds > 0)
      out += (out.empty() ? "" : " + ") + std::string(axisName(axis)) + " " +
             formatMs(seconds);
  return out.empty() ? "0" : out;
}

int runSearch(const std::vector<std::string> &argv) {
  ArgParser args("ditc search");
  addWorkloadFlags(args);
  args.addOption("--num-gpus");
  args.addOption("--gpus-per-node");
  args.addOption("--hardware");
  args.addOption("--objective");
  args.addOption("--top");
  args.addOption("--attention-backend");
  args.addOption("--dtype");
  args.addOption("--format");
  args.parse(argv);
  args.expectPositionals(1, "a MODEL (a bundled name, config.json or folder)");
  Format format = readFormat(args);
  if (!args.has("--num-gpus"))
    badFlag("--num-gpus", "", "'ditc search' needs --num-gpus N");
  SearchOptions options;
  options.numGpus = *args.getInt("--num-gpus", 1, 1 << 16);
  options.hardware = loadHardwareProfile(args.get("--hardware").value_or("h100-sxm"));
  if (args.has("--gpus-per-node")) {
    options.gpusPerNode = *args.getInt("--gpus-per-node", 1, 1 << 16);
    if (options.numGpus % options.gpusPerNode != 0)
      badFlag("--gpus-per-node", *args.get("--gpus-per-node"),
              "--gpus-per-node " + *args.get("--gpus-per-node") +
                  " does not divide --num-gpus " +
                  std::to_string(options.numGpus) +
                  "; every node must hold the same number of ranks");
  } else {
    options.gpusPerNode = std::min(options.hardware.gpusPerNode, options.numGpus);
    if (options.numGpus % options.gpusPerNode != 0)
      badFlag("--num-gpus", std::to_string(options.numGpus),
              "--num-gpus " + std::to_string(options.numGpus) +
                  " is not a whole number of " + options.hardware.name +
                  " nodes of " + std::to_string(options.gpusPerNode) +
                  " GPUs; pass --gpus-per-node");
  }
  std::string objective = args.get("--objective").value_or("latency");
  if (objective != "latency" && objective != "throughput")
    badFlag("--objective", objective,
            "--objective value '" + objective +
                "' is not allowed; expected latency or throughput");
  options.objective =
      objective == "throughput" ? Objective::Throughput : Objective::Latency;
  std::string top = args.get("--top").value_or("10");
  size_t topCount = top == "all" ? SIZE_MAX
                                 : size_t(parseIntegerFlag("--top", top, 1,
                                                           1 << 20));
  ParallelFlags flags;
  flags.backend = args.get("--attention-backend");
  Deployment deployment = deploymentFromFlags(flags);

  ImportOptions importOptions;
  importOptions.elementType = readElementType(args);
  ModelSpec spec = loadModel(args.positional()[0]);
  Workload workload = resolveWorkload(spec, readWorkloadFlags(args));
  options.steps = workload.steps;
  options.branchCalls =
      guidanceBranchesRun(workload.branches, workload.guidanceScale);

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = importModel(context, spec, workload, importOptions);
  mlir::FailureOr<LegalityContext> legality =
      buildLegalityContext(*module, deployment);
  if (mlir::failed(legality))
    throw InternalError("the imported module lacks model facts");
  mlir::FailureOr<SearchResult> found =
      searchConfigurations(*module, *legality, options);
  if (mlir::failed(found))
    throw InternalError("the partition passes failed on a configuration the "
                        "legality rules accept (diagnostics on stderr)");
  const SearchResult &result = *found;
  size_t shown = std::min(topCount, result.ranked.size());
  std::string why = result.ranked.size() >= 2
                        ? explainWin(result.ranked[0], result.ranked[1])
                        : "";
  if (format == Format::Json) {
    nlohmann::json out = {
        {"model", escapeInvalidUtf8(spec.name)},
        {"num_gpus", options.numGpus},
        {"gpus_per_node", options.gpusPerNode},
        {"hardware", options.hardware.name},
        {"objective", objective},
        {"single_gpu_step_ms", result.singleGpu.stepSeconds * 1e3},
        {"single_gpu_fits", result.singleGpuFits},
        {"candidates", result.candidates},
        {"legal", result.legal},
        {"too_large", result.tooLarge},
        {"rejected_by_rule", result.rejectedByRule},
        {"exhaustive", result.exhaustive},
        {"shapes", result.shapes},
        {"shapes_priced", result.shapesPriced},
        {"configurations", nlohmann::json::array()}};
    for (size_t i = 0; i < shown; ++i)
      out["configurations"].push_back(rankedJson(
          result.ranked[i], options.numGpus, options.gpusPerNode));
    if (!why.empty())
      out["why"] = why;
    if (result.ranked.empty())
      out.update(errorJson("no-configuration",
                           "no legal configuration of " +
                               escapeInvalidUtf8(spec.name) + " on " +
                               std::to_string(options.numGpus) +
                               " GPUs fits in memory"));
    printJson(out);
    return result.ranked.empty() ? 1 : 0;
  }
  llvm::outs() << "search: " << escapeInvalidUtf8(spec.name) << " on "
               << options.numGpus << " " << options.hardware.name << " GPUs ("
               << options.gpusPerNode << " per node), " << workload.width << "x"
               << workload.height << (workload.frames > 1 ? "x" + std::to_string(workload.frames) : "")
               << ", " << objective << "\n";
  llvm::outs() << "one GPU: " << formatMs(result.singleGpu.stepSeconds)
               << " ms per step, " << formatGiB(result.singleGpu.peakMemoryBytes())
               << " GiB peak" << (result.singleGpuFits ? "" : " (does not fit)")
               << "\n";
  llvm::outs() << result.candidates << " candidates, " << result.legal
               << " legal, " << result.tooLarge << " too large for "
               << formatGiB(options.hardware.memoryBytes) << " GiB\n";
  if (!result.exhaustive)
    llvm::outs() << "not exhaustive: priced " << result.shapesPriced << " of "
                 << result.shapes << " sharding shapes\n";
  if (result.ranked.empty()) {
    for (auto &[rule, count] : result.rejectedByRule)
      llvm::outs() << "rejected by " << rule << ": " << count << "\n";
    llvm::outs() << "no legal configuration fits\n";
    return 1;
  }
  llvm::outs() << "\n  #  step ms  compute  communication            bubble  "
                  "peak GiB  speedup  eff    flags\n";
  for (size_t i = 0; i < shown; ++i) {
    const RankedConfiguration &c = result.ranked[i];
    char line[256];
    std::snprintf(line, sizeof line, "%3zu  %7s  %7s  %-24s %6s  %8s  %6.2fx  %4.0f%%  ",
                  i + 1, formatMs(c.estimate.stepSeconds).c_str(),
                  formatMs(c.estimate.computeSeconds).c_str(),
                  commText(c.estimate).c_str(),
                  formatMs(c.estimate.bubbleSeconds).c_str(),
                  formatGiB(c.estimate.peakMemoryBytes()).c_str(), c.speedup,
                  100 * c.parallelEfficiency);
    llvm::outs() << line
                 << configurationFlags(c.config, options.numGpus,
                                       options.gpusPerNode)
                 << "\n";
  }
  if (!why.empty())
    llvm::outs() << "\nwhy #1: " << why << "\n";
  return 0;
}

int runWeights(const std::vector<std::string> &argv) {
  ArgParser args("ditc weights");
  args.addOption("--format");
  args.parse(argv);
  args.expectPositionals(1, "a SNAPSHOT (a pipeline or transformer folder)");
  Format format = readFormat(args);
  WeightsReport report = checkWeights(args.positional()[0]);
  if (format == Format::Json)
    printJson(weightsReportJson(report));
  else
    llvm::outs() << weightsReportText(report);
  return report.ok() ? 0 : 1;
}

int runExplain(const std::vector<std::string> &argv) {
  ArgParser args("ditc explain");
  args.addOption("--format");
  args.parse(argv);
  args.expectPositionals(1, "a PLAN_DIR (a folder ditc compile wrote)");
  Format format = readFormat(args);
  std::string dir = args.positional()[0];
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    badFile(escapeInvalidUtf8(dir),
            "is not a plan folder (ditc compile ... -o PLAN_DIR writes one)");
  std::string path = (std::filesystem::path(dir) / "manifest.json").string();
  nlohmann::json manifest = JsonObject::parseFile(path);
  RankLayout layout =
      readRankLayout(JsonObject(escapeInvalidUtf8(path), &manifest));
  if (format == Format::Json)
    printJson(layoutJson(layout));
  else
    llvm::outs() << formatLayoutText(layout);
  return 0;
}

int runModels(const std::vector<std::string> &argv) {
  ArgParser args("ditc models");
  args.addOption("--format");
  args.parse(argv);
  args.expectPositionals(0, "no arguments");
  Format format = readFormat(args);
  if (listBundledModels().empty())
    badFile(escapeInvalidUtf8(bundledModelsDir()),
            "holds no bundled models (folders with transformer/config.json); "
            "set DITC_MODELS_DIR to the models/ folder of a ditc checkout");
  if (format == Format::Json)
    printJson(bundledModelsJson());
  else
    printBundledModels(llvm::outs());
  return 0;
}

int runImport(const std::vector<std::string> &argv) {
  ArgParser args("ditc import");
  addWorkloadFlags(args);
  args.addOption("--dtype");
  args.addOption("-o");
  args.addSwitch("--summary");
  args.addOption("--format");
  args.addSwitch("--mlir-print-debuginfo");
  args.parse(argv);
  args.expectPositionals(1, "a MODEL (a bundled name, config.json or folder)");
  Format format = readFormat(args);
  if (format == Format::Json && !args.has("--summary"))
    badFlag("--format", "json",
            "--format json describes the --summary report (the module "
            "itself is MLIR text); add --summary");

  ImportOptions importOptions;
  importOptions.elementType = readElementType(args);
  ModelSpec spec = loadModel(args.positional()[0]);
  Workload workload = resolveWorkload(spec, readWorkloadFlags(args));

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = importModel(context, spec, workload, importOptions);

  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (args.has("--mlir-print-debuginfo"))
    flags.enableDebugInfo();
  module->print(os, flags);
  os << "\n";
  os.flush();
  if (auto output = args.get("-o"))
    writeFileAtomically(*output, text);
  if (format == Format::Json)
    printJson(importSummaryJson(spec, workload, *module));
  else if (args.has("--summary"))
    printImportSummary(llvm::outs(), spec, workload, *module);
  else if (!args.get("-o"))
    llvm::outs() << text;
  return 0;
}

struct Command {
  const char *name;
  const char *summary; // one line of `ditc --help`
  std::string (*usage)();
  int (*run)(const std::vector<std::string> &);
};

const Command kCommands[] = {
    {"models", "list the bundled models with their key numbers", modelsUsage,
     runModels},
    {"import", "import a model into the dit dialect", importUsage, runImport},
    {"check", "is a parallel configuration legal? (exit 0/1)", checkUsage,
     runCheck},
    {"compile", "write per-rank plans for a legal configuration", compileUsage,
     runCompile},
    {"search", "rank every legal configuration by predicted step time",
     searchUsage, runSearch},
    {"calibrate", "measure this host into a hardware profile for search",
     calibrateUsage, runCalibrate},
    {"explain", "show where a plan's ranks sit and which groups cross nodes",
     explainUsage, runExplain},
    {"weights", "compare a checkpoint's tensors with its model's parameters",
     weightsUsage, runWeights},
};

std::string topLevelUsage() {
  std::string usage = "usage: ditc <command> [args]\n\ncommands:\n";
  for (const Command &command : kCommands)
    usage += "  " + std::string(command.name) +
             std::string(10 - std::strlen(command.name), ' ') +
             command.summary + "\n";
  return usage + "\n`ditc <command> --help` (or `ditc help <command>`) "
                 "describes a command's flags.\n\nexit codes: 0 ok (or "
                 "legal), 1 illegal configuration, 2 bad input. With "
                 "--format json,\nevery error is a JSON object on stdout.\n";
}

/// Prints a failure: as JSON on stdout in JSON mode, else as one line on
/// stderr ("ditc: error: ..." for bad input).
void reportFailure(bool json, const std::string &kind,
                   const std::string &message,
                   const InputLocation &location = {}) {
  if (json) {
    printJson(errorJson(kind, message, location));
    llvm::outs().flush();
    return;
  }
  // Messages quote paths and values as given, which may be any bytes.
  llvm::outs().flush();
  std::cerr << (kind == "internal" ? "ditc: internal error: " : "ditc: error: ")
            << escapeInvalidUtf8(message) << "\n";
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" ||
      (args[0] == "help" && args.size() == 1)) {
    std::cout << topLevelUsage();
    return args.empty() ? 2 : 0;
  }
  bool helpCommand = args[0] == "help";
  if (helpCommand)
    args.erase(args.begin());
  std::string name = args[0];
  args.erase(args.begin());
  try {
    const Command *command = nullptr;
    for (const Command &candidate : kCommands)
      if (name == candidate.name)
        command = &candidate;
    if (!command) {
      std::vector<std::string> names;
      for (const Command &candidate : kCommands)
        names.push_back(candidate.name);
      throw BadInput("command line: unknown command '" + name + "'" +
                     nearestAndKnown(name, names, "known") +
                     " (see ditc --help)");
    }
    if (helpCommand || ArgParser::asksForHelp(args)) {
      std::cout << command->usage();
      return 0;
    }
    return command->run(args);
  } catch (const BadInput &error) {
    reportFailure(asksForJson(args), "bad-input", error.what(),
                  error.location());
    return 2;
  } catch (const CalibrationFailed &error) {
    reportFailure(asksForJson(args), "measurement-failed", error.what());
    return 1;
  } catch (const std::exception &error) {
    reportFailure(asksForJson(args), "internal", error.what());
    return 1;
  }
}
