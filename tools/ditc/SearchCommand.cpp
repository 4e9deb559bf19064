//===- SearchCommand.cpp - `ditc search`: configurations ranked -----------===//
#include "Commands.h"

#include "ditc/Analysis/MeshLayout.h"
#include "ditc/CostModel/Search.h"
#include "ditc/InitAll.h"
#include "ditc/Support/Utf8.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ditc {

namespace {

// Search's own --num-gpus and --gpus-per-node: a cluster to search, which
// may be larger than one plan's world.
const Flag kNumGpus = Flag::option("--num-gpus", "N", "GPUs in the cluster")
                          .json("num_gpus")
                          .range(1, 1 << 16);
const Flag kSearchGpusPerNode =
    Flag::option("--gpus-per-node", "M",
                 "ranks per node (default: the profile's, or N\n"
                 "when smaller); must divide N")
        .json("gpus_per_node")
        .range(1, 1 << 16);
const Flag kHardware =
    Flag::option("--hardware", "NAME|FILE",
                 "a bundled profile (h100-sxm, h800, h200, h20,\n"
                 "a100-80gb-sxm, l40s, l20, cpu-local; default\n"
                 "h100-sxm) or a profiles JSON file")
        .json("hardware");
const Flag kObjective =
    Flag::option("--objective", "", "")
        .choices({{"end-to-end", "fastest whole pipeline call: encode,\nsteps "
                                 "and decode (default)"},
                  {"latency", "fastest denoising loop: steps x (step +\nhost "
                              "work between steps)"},
                  {"throughput", "most requests per second for the cluster, "
                                 "DP\nreplicas included"}})
        .json("objective");
const Flag kTop =
    Flag::option("--top", "K|all", "rows to print (default 10)").range(1, 1 << 20);
const Flag kSearchBackend = Flag::option("--attention-backend", "NAME",
                                         "the attention kernel (default fa)");
// Taken, but not in search's --help.
const Flag kSearchFormat = formatFlag("output format (default text)").hidden();

std::vector<FlagGroup> searchFlags() {
  return {{"search flags",
           {&kNumGpus, &kSearchGpusPerNode, &kHardware, &kObjective, &kTop,
            &kSearchBackend, &kDtypeFlag, &kSearchFormat}},
          workloadFlags(),
          {"other engines (docs/engines.md)", {&kEngineFlag, &kEmitFlag}}};
}

/// The flags that reproduce `config` with ditc compile.
std::string configurationFlags(const RankedConfiguration &ranked, int64_t numGpus,
                               int64_t gpusPerNode) {
  const Configuration &config = ranked.config;
  std::string flags = degreesAsFlags(config.degrees, numGpus) +
                      componentsAsFlags(suggestedComponents(ranked));
  if (numGpus > gpusPerNode)
    flags += " --gpus-per-node " + std::to_string(gpusPerNode);
  if (config.meshOrder != MeshLayout::defaultOrder()) {
    flags += " --mesh-order ";
    for (size_t i = 0; i < config.meshOrder.size(); ++i)
      flags += std::string(i ? "," : "") + axisName(config.meshOrder[i]);
  }
  return flags;
}

nlohmann::json encodeJson(const TextEncodeChoice &encode) {
  if (!encode.priced)
    return nullptr;
  return {{"ms", encode.seconds * 1e3},
          {"text_encoder_tp_size", encode.tpSize},
          {"offload", encode.offload},
          {"param_bytes", int64_t(encode.paramBytes)},
          {"peak_memory_bytes", int64_t(encode.peakMemoryBytes)}};
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
          {"encode", encodeJson(c.encode)},
          {"decode", c.decode.priced
                         ? nlohmann::json{{"ms", c.decode.seconds * 1e3},
                                          {"vae_parallel_size", c.decode.parallelSize},
                                          {"peak_memory_bytes",
                                           int64_t(c.decode.peakMemoryBytes)}}
                         : nlohmann::json(nullptr)},
          {"loop_ms", c.loopSeconds * 1e3},
          {"expert_offload", c.config.expertOffload},
          {"expert_swap_ms", c.expertSwapSeconds * 1e3},
          {"end_to_end_ms", c.endToEndSeconds * 1e3},
          {"breakdown_ms",
           {{"compute", e.computeSeconds * 1e3},
            {"launch", e.launchSeconds * 1e3},
            {"communication", comm},
            {"bubble", e.bubbleSeconds * 1e3}}},
          {"peak_memory_bytes", int64_t(e.peakMemoryBytes() + c.encode.residentBytes())},
          {"param_bytes", int64_t(e.paramBytes)},
          {"activation_bytes", int64_t(e.activationBytes)},
          {"buffer_bytes", int64_t(e.bufferBytes)},
          {"flops_per_rank", e.flopsPerRank},
          {"bytes_sent_per_step", sent},
          {"cross_node_axes", crossing},
          {"speedup", c.speedup},
          {"parallel_efficiency", c.parallelEfficiency},
          {"requests_per_second", c.requestsPerSecond},
          {"flags", configurationFlags(c, numGpus, gpusPerNode)}};
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

} // namespace

std::string searchUsage() {
  return formatUsage(std::string(R"(usage: ditc search MODEL --num-gpus N [--gpus-per-node M]
                   [--hardware NAME|FILE] [workload flags]
                   [--objective end-to-end|latency|throughput] [--top K|all]
                   [--attention-backend NAME] [--dtype bf16|f32]
                   [--format text|json]

Ranks every legal configuration of MODEL on N GPUs by the cost model: step
time = compute (a roofline per op class) + exposed communication (alpha-beta
per collective, on the link each group's ranks share) + the pipeline bubble.
Each op an eager engine launches adds the profile's kernel_launch. A request's
end-to-end time is the prompt encode (the text encoders at the fastest
text_encoder tp_size that fits, offloaded when only that fits), the steps with
the profile's host work between them, and the VAE decode (at the fastest
vae_parallel_size that fits); the default objective ranks by it.
Configurations whose peak memory per rank does not fit are dropped. The work
each rank does comes from the partition passes' own IR. See docs/search.md.

)") + kModelHelp,
                     searchFlags(),
                     std::string(R"(exit codes: 0 ranked, 1 no legal configuration fits (the count each rule
rejected is printed),
)") + kBadInputExit);
}

int runSearch(const std::vector<std::string> &argv) {
  ArgParser args = parseFlags("ditc search", searchFlags(), argv);
  args.expectPositionals(1, kModelArgument);
  Format format = readFormat(args, kSearchFormat);
  if (!args.has(kNumGpus))
    badFlag(kNumGpus.name, "",
            "'ditc search' needs " + kNumGpus.name + " " + kNumGpus.metavar);
  SearchOptions options;
  options.numGpus = *args.getInt(kNumGpus);
  options.hardware =
      loadHardwareProfile(args.get(kHardware).value_or("h100-sxm"));
  if (auto perNode = args.get(kSearchGpusPerNode)) {
    options.gpusPerNode = *args.getInt(kSearchGpusPerNode);
    if (options.numGpus % options.gpusPerNode != 0)
      badFlag(kSearchGpusPerNode.name, *perNode,
              kSearchGpusPerNode.name + " " + *perNode + " does not divide " +
                  kNumGpus.name + " " + std::to_string(options.numGpus) +
                  "; every node must hold the same number of ranks");
  } else {
    options.gpusPerNode = std::min(options.hardware.gpusPerNode, options.numGpus);
    if (options.numGpus % options.gpusPerNode != 0)
      badFlag(kNumGpus.name, std::to_string(options.numGpus),
              kNumGpus.name + " " + std::to_string(options.numGpus) +
                  " is not a whole number of " + options.hardware.name +
                  " nodes of " + std::to_string(options.gpusPerNode) +
                  " GPUs; pass " + kSearchGpusPerNode.name);
  }
  std::string objective = args.getChoice(kObjective).value_or("end-to-end");
  options.objective = objective == "throughput" ? Objective::Throughput
                      : objective == "latency"  ? Objective::Latency
                                                : Objective::EndToEnd;
  std::string top = args.get(kTop).value_or("10");
  size_t topCount =
      top == "all" ? SIZE_MAX
                   : size_t(parseIntegerFlag(kTop.name, top, kTop.min, kTop.max));
  ParallelFlags flags;
  flags.backend = args.get(kSearchBackend);
  Deployment deployment = deploymentFromFlags(flags);
  // A bad engine name fails before the search.
  const engines::Engine *onlyFor = readEngineFlag(args, kEngineFlag);
  const engines::Engine *emit = readEngineFlag(args, kEmitFlag);

  ImportOptions importOptions;
  importOptions.elementType = readElementType(args);
  ModelSpec spec = loadModel(args.positional()[0]);
  Workload workload = resolveWorkload(spec, readWorkloadFlags(args));
  options.steps = workload.steps;
  // The decode, priced with the snapshot's VAE (none for a bare config).
  options.vaeConfig = spec.vaeConfig;
  options.vaeShape = {workload.batch, workload.latentFrames, workload.latentHeight,
                      workload.latentWidth};
  options.branchCalls = workload.branches;

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
  SearchResult &result = *found;
  // A configuration as a deployment, for the engines' rules.
  auto deploymentOf = [&](const RankedConfiguration &c) {
    ParallelFlags flags;
    flags.numGpus = options.numGpus;
    flags.gpusPerNode = options.gpusPerNode;
    flags.dp = c.config.degrees[Axis::DP];
    flags.cfg = c.config.degrees[Axis::CFG];
    flags.pp = c.config.degrees[Axis::PP];
    flags.tp = c.config.degrees[Axis::TP];
    flags.ulysses = c.config.degrees[Axis::Ulysses];
    flags.ring = c.config.degrees[Axis::Ring];
    flags.kvGather = c.config.degrees[Axis::KVGather];
    flags.backend = args.get(kSearchBackend);
    return deploymentFromFlags(flags);
  };
  // --engine ENGINE: only what that engine can run is ranked.
  if (const engines::Engine *engine = onlyFor)
    result.ranked.erase(std::remove_if(result.ranked.begin(), result.ranked.end(),
                                       [&](const RankedConfiguration &c) {
                                         return !engineAccepts(*engine, deploymentOf(c),
                                                               spec, workload);
                                       }),
                        result.ranked.end());
  // The launch line of a row, or why the engine cannot run it.
  auto launchOf = [&](const RankedConfiguration &c) -> nlohmann::json {
    Deployment deployment = deploymentOf(c);
    std::vector<engines::EngineFinding> refusals;
    engines::EmittedLaunch launch =
        emit->emit({deployment, spec, workload, std::nullopt}, refusals);
    if (!refusals.empty())
      return {{"engine", emit->name()}, {"refused", refusals.front().rule},
              {"message", refusals.front().message}};
    return launchJson(*emit, launch);
  };
  size_t shown = std::min(topCount, result.ranked.size());
  std::string why = result.ranked.size() >= 2
                        ? explainWin(result.ranked[0], result.ranked[1])
                        : "";
  if (format == Format::Json) {
    nlohmann::json out = {
        {"model", escapeInvalidUtf8(spec.name)},
        {kNumGpus.jsonKey, options.numGpus},
        {kSearchGpusPerNode.jsonKey, options.gpusPerNode},
        {kHardware.jsonKey, options.hardware.name},
        {kObjective.jsonKey, objective},
        {"single_gpu_step_ms", result.singleGpu.stepSeconds * 1e3},
        {"single_gpu_launch_ms", result.singleGpu.launchSeconds * 1e3},
        {"step_host_overhead_ms", options.hardware.stepHostOverhead * 1e3},
        {"single_gpu_loop_ms", result.singleGpuLoopSeconds * 1e3},
        {"single_gpu_expert_offload", result.singleGpuExpertOffload},
        {"single_gpu_end_to_end_ms", result.singleGpuEndToEndSeconds * 1e3},
        {"single_gpu_encode", encodeJson(result.singleGpuEncode)},
        {"single_gpu_fits", result.singleGpuFits},
        {"candidates", result.candidates},
        {"legal", result.legal},
        {"too_large", result.tooLarge},
        {"rejected_by_rule", result.rejectedByRule},
        {"exhaustive", result.exhaustive},
        {"shapes", result.shapes},
        {"shapes_priced", result.shapesPriced},
        {"configurations", nlohmann::json::array()}};
    for (size_t i = 0; i < shown; ++i) {
      out["configurations"].push_back(rankedJson(
          result.ranked[i], options.numGpus, options.gpusPerNode));
      if (emit)
        out["configurations"].back()["emit"] = launchOf(result.ranked[i]);
    }
    if (!why.empty())
      out["why"] = why;
    if (result.ranked.empty() && args.has(kEngineFlag))
      out.update(errorJson("no-configuration",
                           "no configuration of " + escapeInvalidUtf8(spec.name) + " on " +
                               std::to_string(options.numGpus) + " GPUs that " +
                               *args.get(kEngineFlag) + " can run fits"));
    else if (result.ranked.empty())
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
               << " ms per step";
  if (result.singleGpu.launchSeconds > 0)
    llvm::outs() << " (" << formatMs(result.singleGpu.launchSeconds) << " of it eager launches)";
  if (options.hardware.stepHostOverhead > 0)
    llvm::outs() << " + " << formatMs(options.hardware.stepHostOverhead)
                 << " ms of host work between steps";
  llvm::outs() << ", "
               << formatGiB(result.singleGpu.peakMemoryBytes() +
                            result.singleGpuEncode.residentBytes())
               << " GiB peak" << (result.singleGpuFits ? "" : " (does not fit)");
  if (result.singleGpuExpertOffload)
    llvm::outs() << " with --expert-offload";
  if (result.singleGpuEncode.priced)
    llvm::outs() << "; encode " << formatMs(result.singleGpuEncode.seconds) << " ms, "
                 << formatGiB(result.singleGpuEncode.paramBytes) << " GiB of text encoders"
                 << (result.singleGpuEncode.offload ? " (offloaded)" : "");
  else
    llvm::outs() << "; encode not priced (no text encoder graph)";
  if (result.singleGpuDecode.priced)
    llvm::outs() << "; decode " << formatMs(result.singleGpuDecode.seconds) << " ms, "
                 << formatGiB(result.singleGpuDecode.peakMemoryBytes) << " GiB peak";
  else
    llvm::outs() << "; decode not priced (no VAE ditc decodes)";
  llvm::outs() << "; end to end " << formatMs(result.singleGpuEndToEndSeconds) << " ms for "
               << options.steps << " steps\n";
  llvm::outs() << result.candidates << " candidates, " << result.legal
               << " legal, " << result.tooLarge << " too large for "
               << formatGiB(options.hardware.memoryBytes) << " GiB\n";
  if (!result.exhaustive)
    llvm::outs() << "not exhaustive: priced " << result.shapesPriced << " of "
                 << result.shapes << " sharding shapes\n";
  if (result.ranked.empty()) {
    for (auto &[rule, count] : result.rejectedByRule)
      llvm::outs() << "rejected by " << rule << ": " << count << "\n";
    if (args.has(kEngineFlag))
      llvm::outs() << "no legal configuration that " << *args.get(kEngineFlag)
                   << " can run fits\n";
    else
      llvm::outs() << "no legal configuration fits\n";
    return 1;
  }
  llvm::outs() << "\n  #  step ms  compute  communication            bubble  "
                  "peak GiB  encode ms  decode ms  e2e ms    speedup  eff    flags\n";
  for (size_t i = 0; i < shown; ++i) {
    const RankedConfiguration &c = result.ranked[i];
    char line[256];
    std::snprintf(line, sizeof line,
                  "%3zu  %7s  %7s  %-24s %6s  %8s  %9s  %9s  %8s  %6.2fx  %4.0f%%  ", i + 1,
                  formatMs(c.estimate.stepSeconds).c_str(),
                  formatMs(c.estimate.computeSeconds).c_str(), commText(c.estimate).c_str(),
                  formatMs(c.estimate.bubbleSeconds).c_str(),
                  formatGiB(c.estimate.peakMemoryBytes() + c.encode.residentBytes()).c_str(),
                  c.encode.priced ? formatMs(c.encode.seconds).c_str() : "-",
                  c.decode.priced ? formatMs(c.decode.seconds).c_str() : "-",
                  formatMs(c.endToEndSeconds).c_str(), c.speedup, 100 * c.parallelEfficiency);
    llvm::outs() << line
                 << configurationFlags(c, options.numGpus,
                                       options.gpusPerNode)
                 << "\n";
    if (emit) {
      nlohmann::json launch = launchOf(c);
      llvm::outs() << "     " << emit->name() << ": "
                   << (launch.contains("line")
                           ? launch["line"].get<std::string>()
                           : "refused [" + launch["refused"].get<std::string>() + "]: " +
                                 launch["message"].get<std::string>())
                   << "\n";
    }
  }
  if (!why.empty())
    llvm::outs() << "\nwhy #1: " << why << "\n";
  return 0;
}

} // namespace ditc
