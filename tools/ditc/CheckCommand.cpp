//===- CheckCommand.cpp - `ditc check`: is a configuration legal? ---------===//
#include "Commands.h"

#include "ditc/InitAll.h"

namespace ditc {

namespace {

std::vector<FlagGroup> checkFlags() {
  return {parallelFlags(), workloadFlags(), commonFlags()};
}

} // namespace

std::string checkUsage() {
  return formatUsage(
      std::string(
          R"(usage: ditc check MODEL [parallel flags | --deployment FILE]
                  [workload flags] [--format text|json]

Says whether a parallel configuration is legal for MODEL at the workload,
and why not: every violated rule, then up to three legal configurations
nearby.

)") + kModelHelp,
      checkFlags(),
      std::string("exit codes: 0 legal (warnings and notes allowed), 1 "
                  "illegal,\n") +
          kBadInputExit);
}

int runCheck(const Argv &argv) {
  ArgParser args = parseFlags("ditc check", checkFlags(), argv);
  args.expectPositionals(1, kModelArgument);
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

} // namespace ditc
