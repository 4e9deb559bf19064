//===- EngineLines.cpp - check --from, --emit, search --engine ------------===//
//
// The commands' side of lib/Engines: a request read from another engine's
// launch line, that engine's rules added to the report, and the launch line
// written for a configuration. The reading and the rules are the engine's
// (lib/Engines); judging the configuration is checkRequest's, as for any
// other request.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "llvm/Support/raw_ostream.h"

namespace ditc {

using engines::Engine;
using engines::EngineFinding;
using engines::EngineReading;
using engines::EngineTarget;

namespace {

RuleDiagnostic engineDiagnostic(const Engine &engine, const EngineFinding &finding) {
  const engines::EngineRule &rule = engine.rule(finding.rule);
  return {finding.rule, Severity::Error,
          finding.message + " [" + engine.version() + ": " + rule.source + "]", "transformer",
          nullptr};
}

} // namespace

const Flag kFromFlag = Flag::option(
    "--from", "ENGINE",
    "read the configuration from ENGINE's launch line,\n"
    "given after -- (sglang, vllm-omni, xdit, diffusers)");
const Flag kEmitFlag = Flag::option(
    "--emit", "ENGINE",
    "also print ENGINE's launch line for the\n"
    "configuration, or refuse with ENGINE's rule");
const Flag kEngineFlag = Flag::option(
    "--engine", "ENGINE", "rank only what ENGINE can run (its rules)");

std::pair<Argv, std::optional<Argv>> splitEngineLine(const Argv &argv) {
  auto dashes = std::find(argv.begin(), argv.end(), "--");
  if (dashes == argv.end())
    return {argv, std::nullopt};
  return {Argv(argv.begin(), dashes), Argv(dashes + 1, argv.end())};
}

const Engine *readEngineFlag(const ArgParser &args, const Flag &flag) {
  std::optional<std::string> name = args.get(flag);
  if (!name)
    return nullptr;
  return &engines::findEngine(flag.name, *name);
}

Request readEngineRequest(const ArgParser &args, const Engine &engine, const Argv &words,
                          EngineReading &reading) {
  for (const Flag *flag : deploymentFlags())
    if (args.has(*flag))
      badFlag(flag->name, args.get(*flag).value_or(""),
              flag->name + " cannot be combined with " + kFromFlag.name +
                  "; the " + engine.name() + " line gives every degree");
  if (args.has(kDeploymentFlag))
    badFlag(kDeploymentFlag.name, *args.get(kDeploymentFlag),
            kDeploymentFlag.name + " cannot be combined with " + kFromFlag.name);
  if (args.has(kMeshOrderFlag))
    badFlag(kMeshOrderFlag.name, *args.get(kMeshOrderFlag),
            kMeshOrderFlag.name + " cannot be combined with " + kFromFlag.name + "; " +
                engine.title() + " lays its ranks out as " +
                engines::describeOrder(engine.rankOrder()) + " (outermost first)");
  if (words.empty())
    badFlag(kFromFlag.name, engine.name(),
            kFromFlag.name + " " + engine.name() + " needs " + engine.name() +
                "'s launch line after --");
  Request request;
  request.spec = loadModel(args.positional()[0]);
  reading = engine.read(words, request.spec);
  // The line's workload values; ditc's own workload flags override them.
  // The engine may read absurd degrees (it refuses them itself, or not);
  // ditc judges what a cluster can hold.
  constexpr int64_t kMaxDegree = 4096, kMaxWorld = int64_t(1) << 20;
  const ParallelFlags &f = reading.flags;
  for (auto [axis, degree] : {std::pair<const char *, std::optional<int64_t>>{"dp", f.dp},
                              {"cfg", f.cfg},
                              {"pp", f.pp},
                              {"tp", f.tp},
                              {"ulysses", f.ulysses},
                              {"ring", f.ring},
                              {"kv_gather", f.kvGather}})
    if (degree && *degree > kMaxDegree)
      badFlag(kFromFlag.name, engine.name(),
              "the " + engine.name() + " line gives " + axis + " " + std::to_string(*degree) +
                  "; ditc judges degrees of 1 to " + std::to_string(kMaxDegree));
  if (f.numGpus && *f.numGpus > kMaxWorld)
    badFlag(kFromFlag.name, engine.name(),
            "the " + engine.name() + " line runs " + std::to_string(*f.numGpus) +
                " ranks; ditc judges worlds of at most " + std::to_string(kMaxWorld));
  WorkloadOptions workload = mergeWorkload(reading.workload, readWorkloadFlags(args));
  // The engine's rank order is the line's: its groups are what ditc judges.
  std::string order;
  for (Axis axis : engine.rankOrder())
    order += (order.empty() ? "" : ",") + std::string(axisName(axis));
  reading.flags.meshOrder = order;
  request.deployment = deploymentFromFlags(reading.flags);
  // The line's own model, when ditc knows it, must be the one checked.
  if (reading.model)
    if (std::optional<BundledModel> named = findBundledModel(*reading.model))
      if (std::optional<BundledModel> checked = findBundledModel(args.positional()[0]);
          checked && checked->name != named->name)
        badFlag(kFromFlag.name, *reading.model,
                "the " + engine.name() + " line runs '" + *reading.model + "' (" + named->name +
                    ") but ditc was asked about " + checked->name);
  request.workload = resolveWorkload(request.spec, workload);
  if (auto hardware = args.get(kHardwareFlag))
    request.hardware = loadHardwareProfile(*hardware);
  return request;
}

void judgeWithEngine(const Request &request, LegalityReport &report, const Engine &engine,
                     const EngineReading &reading) {
  bool ditcRefuses = !report.legal();
  std::vector<EngineFinding> findings = reading.refusals;
  EngineTarget target{request.deployment, request.spec, request.workload,
                      reading.attentionBackend};
  for (const EngineFinding &finding : engine.check(target))
    if (std::none_of(findings.begin(), findings.end(), [&](const EngineFinding &seen) {
          return seen.rule == finding.rule && seen.message == finding.message;
        }))
      findings.push_back(finding);
  for (const std::string &derivation : reading.derivations)
    report.diagnostics.push_back(
        {"from-" + engine.name(), Severity::Note, derivation, "transformer", nullptr});
  for (const EngineFinding &finding : findings)
    report.diagnostics.push_back(engineDiagnostic(engine, finding));
  if (ditcRefuses && findings.empty())
    report.diagnostics.push_back(
        {"engine-accepts", Severity::Note,
         engine.version() + " would start this configuration: none of its rules refuses it, "
                            "but ditc does (the errors above)",
         "transformer", nullptr});
}

std::optional<engines::EmittedLaunch> emitForEngine(const Request &request,
                                                    LegalityReport &report,
                                                    const Engine &engine) {
  std::vector<EngineFinding> refusals;
  EngineTarget target{request.deployment, request.spec, request.workload, std::nullopt};
  engines::EmittedLaunch launch = engine.emit(target, refusals);
  for (const EngineFinding &finding : refusals)
    report.diagnostics.push_back(engineDiagnostic(engine, finding));
  if (!refusals.empty())
    return std::nullopt;
  return launch;
}

nlohmann::json launchJson(const Engine &engine, const engines::EmittedLaunch &launch) {
  return {{"engine", engine.name()},
          {"repository", engine.repository()},
          {"commit", engine.commit()},
          {"argv", launch.argv},
          {"line", launch.text},
          {"notes", launch.notes}};
}

void printLaunch(const Engine &engine, const engines::EmittedLaunch &launch) {
  llvm::outs() << engine.name() << " (" << engine.version() << "): " << launch.text << "\n";
  for (const std::string &note : launch.notes)
    llvm::outs() << "  note: " << note << "\n";
}

bool engineAccepts(const Engine &engine, const Deployment &deployment, const ModelSpec &spec,
                   const Workload &workload) {
  std::vector<EngineFinding> refusals;
  engine.emit({deployment, spec, workload, std::nullopt}, refusals);
  return refusals.empty();
}

} // namespace ditc
