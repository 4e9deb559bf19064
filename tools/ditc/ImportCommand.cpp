//===- ImportCommand.cpp - `ditc import`: a model into the dit dialect ----===//
#include "Commands.h"

#include "ditc/Importer/Summary.h"
#include "ditc/InitAll.h"
#include "ditc/Support/AtomicFile.h"

#include "llvm/Support/raw_ostream.h"

namespace ditc {

namespace {

const Flag kModuleOutput =
    Flag::option("-o", "FILE", "write the module to FILE instead of stdout");
const Flag kImportSummary = Flag::switchFlag(
    "--summary", "print a readable summary instead of the module\n(with -o, "
                 "the module still goes to FILE)");
const Flag kSummaryFormat = formatFlag("the summary's format (default text)");
const Flag kDebugInfo =
    Flag::switchFlag("--mlir-print-debuginfo",
                     "print each op's location: the diffusers "
                     "module\nit comes from (loc(\"blocks.3.attn1\"))");

std::vector<FlagGroup> importFlags() {
  return {workloadFlags(),
          {"flags",
           {&kDtypeFlag, &kModuleOutput, &kImportSummary, &kSummaryFormat,
            &kDebugInfo, &kHelpFlag, &kHelpLongFlag}}};
}

} // namespace

std::string importUsage() {
  return formatUsage(
      std::string(R"(usage: ditc import MODEL [workload flags] [flags]

Imports MODEL into the dit dialect and prints the module.

)") + kModelHelp,
      importFlags(), std::string("exit codes: 0 imported,\n") + kBadInputExit);
}

int runImport(const Argv &argv) {
  ArgParser args = parseFlags("ditc import", importFlags(), argv);
  args.expectPositionals(1, kModelArgument);
  Format format = readFormat(args, kSummaryFormat);
  if (format == Format::Json && !args.has(kImportSummary))
    badFlag(kSummaryFormat.name, "json",
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
  if (args.has(kDebugInfo))
    flags.enableDebugInfo();
  module->print(os, flags);
  os << "\n";
  os.flush();
  if (auto output = args.get(kModuleOutput))
    writeFileAtomically(*output, text);
  if (format == Format::Json)
    printJson(importSummaryJson(spec, workload, *module));
  else if (args.has(kImportSummary))
    printImportSummary(llvm::outs(), spec, workload, *module);
  else if (!args.get(kModuleOutput))
    llvm::outs() << text;
  return 0;
}

} // namespace ditc
