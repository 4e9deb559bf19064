//===- CheckCommand.cpp - `ditc check`: is a configuration legal? ---------===//
#include "Commands.h"

#include "ditc/InitAll.h"

namespace ditc {

namespace {

std::vector<FlagGroup> checkFlags() {
  return {parallelFlags(), workloadFlags(),
          {"other engines (docs/engines.md)", {&kFromFlag, &kEmitFlag}}, commonFlags()};
}

} // namespace

std::string checkUsage() {
  return formatUsage(
      std::string(
          R"(usage: ditc check MODEL [parallel flags | --deployment FILE]
                  [workload flags] [--emit ENGINE] [--format text|json]
       ditc check MODEL --from ENGINE [workload flags] -- ENGINE'S LINE

Says whether a parallel configuration is legal for MODEL at the workload,
and why not: every violated rule, then up to three legal configurations
nearby. With --from, the configuration is the one ENGINE derives from its
own launch line (or, for diffusers and vllm-omni, its config as one JSON
word), judged by ditc's rules and by ENGINE's.

)") + kModelHelp,
      checkFlags(),
      std::string("exit codes: 0 legal (warnings and notes allowed), 1 "
                  "illegal,\n") +
          kBadInputExit);
}

int runCheck(const Argv &argv) {
  auto [ditcWords, engineWords] = splitEngineLine(argv);
  ArgParser args = parseFlags("ditc check", checkFlags(), ditcWords);
  args.expectPositionals(1, kModelArgument);
  Format format = readFormat(args);
  const engines::Engine *from = readEngineFlag(args, kFromFlag);
  const engines::Engine *emit = readEngineFlag(args, kEmitFlag);
  if (engineWords && !from)
    throw BadInput("command line: words after -- are an engine's launch line; name the "
                   "engine with " + kFromFlag.name + " ENGINE");
  engines::EngineReading reading;
  Request request = from ? readEngineRequest(args, *from, engineWords.value_or(Argv{}), reading)
                         : readRequest(args);

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  LegalityReport report = checkRequest(context, request, module);
  if (from)
    judgeWithEngine(request, report, *from, reading);
  std::optional<engines::EmittedLaunch> launch;
  if (emit && report.legal())
    launch = emitForEngine(request, report, *emit);
  if (format == Format::Json) {
    nlohmann::json out = checkJson(request, report);
    if (from)
      out["from"] = {{"engine", from->name()},
                     {"repository", from->repository()},
                     {"commit", from->commit()},
                     {"derivations", reading.derivations},
                     {"accepted_by_engine",
                      std::none_of(report.diagnostics.begin(), report.diagnostics.end(),
                                   [&](const RuleDiagnostic &d) {
                                     return d.rule.rfind(from->name() + "-", 0) == 0;
                                   })}};
    if (launch)
      out["emit"] = launchJson(*emit, *launch);
    printJson(out);
  } else {
    printCheckText(request, report);
    if (launch)
      printLaunch(*emit, *launch);
  }
  return report.legal() ? 0 : 1;
}

} // namespace ditc
