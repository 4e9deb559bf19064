//===- ditc.cpp - the offline plan compiler's command line ----------------===//
//
//   ditc models
//   ditc import MODEL [workload flags] [--dtype bf16|f32] [-o FILE] [--summary]
//
// Exit codes: 0 success, 1 an illegal configuration or a failed run, 2 bad
// input (a flag, a file, a field). Every subcommand is a thin layer over the
// libraries the passes use; nothing here re-implements a rule.
//
//===----------------------------------------------------------------------===//
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/Summary.h"
#include "ditc/InitAll.h"
#include "ditc/Support/ArgParser.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>

using namespace ditc;

namespace {

const char *kUsage = R"(usage: ditc <command> [args]

commands:
  models                         list the bundled models with their key numbers
  import MODEL [flags]           import a model into the dit dialect

MODEL is a bundled model name (see `ditc models`), a diffusers transformer
config.json, or an HF-style snapshot folder (model_index.json,
transformer/config.json, vae/config.json).

workload flags (defaults come from the family's diffusers pipeline):
  --height H  --width W  --num-frames F  --batch-size B
  --guidance-scale G  --num-inference-steps N

import flags:
  --dtype bf16|f32   element type of the graph (default bf16)
  -o FILE            write the module to FILE instead of stdout
  --summary          print a readable summary instead of the module
                     (with -o, the module still goes to FILE)

exit codes: 0 ok, 1 illegal configuration or failed run, 2 bad input
)";

void addWorkloadFlags(ArgParser &args) {
  for (const char *flag : {"--height", "--width", "--num-frames", "--batch-size",
                           "--guidance-scale", "--num-inference-steps"})
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
  return options;
}

int runModels(const std::vector<std::string> &argv) {
  ArgParser args("ditc models");
  args.parse(argv);
  args.expectPositionals(0, "no arguments");
  printBundledModels(llvm::outs());
  return 0;
}

int runImport(const std::vector<std::string> &argv) {
  ArgParser args("ditc import");
  addWorkloadFlags(args);
  args.addOption("--dtype");
  args.addOption("-o");
  args.addSwitch("--summary");
  args.parse(argv);
  args.expectPositionals(1, "a MODEL (a bundled name, config.json or folder)");

  ImportOptions importOptions;
  if (auto dtype = args.get("--dtype")) {
    if (*dtype == "f32")
      importOptions.elementType = ElementType::F32;
    else if (*dtype != "bf16")
      throw BadInput("command line: --dtype value '" + *dtype +
                     "' is not allowed; expected bf16 or f32");
  }
  ModelSpec spec = loadModel(args.positional()[0]);
  Workload workload = resolveWorkload(spec, readWorkloadFlags(args));

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = importModel(context, spec, workload, importOptions);

  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  os.flush();
  if (auto output = args.get("-o"))
    writeFileAtomically(*output, text);
  if (args.has("--summary"))
    printImportSummary(llvm::outs(), spec, workload, *module);
  else if (!args.get("-o"))
    llvm::outs() << text;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" ||
      args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "models")
      return runModels(args);
    if (command == "import")
      return runImport(args);
    throw BadInput("command line: unknown command '" + command +
                   "'; known: models, import (see ditc --help)");
  } catch (const BadInput &error) {
    llvm::outs().flush();
    std::cerr << "ditc: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception &error) {
    llvm::outs().flush();
    std::cerr << "ditc: internal error: " << error.what() << "\n";
    return 1;
  }
}
