//===- ditc.cpp - the offline plan compiler's command line ----------------===//
//
//   ditc models [--format text|json]
//   ditc import MODEL [workload flags] [--dtype bf16|f32] [-o FILE]
//               [--summary [--format text|json]]
//   ditc check MODEL [parallel flags | --deployment FILE] [workload flags]
//              [--format text|json]
//   ditc compile MODEL [the check flags] -o PLAN_DIR [--summary] [--per-rank]
//   ditc search MODEL --num-gpus N [flags]
//   ditc calibrate -o PROFILE.json [flags]
//   ditc explain PLAN_DIR [--format text|json]
//   ditc weights SNAPSHOT [--format text|json]
//   ditc <command> --help, ditc help <command>
//
// With --format json, output and every error are JSON on stdout.
//
// Exit codes: 0 success, 1 an illegal configuration or a failed run, 2 bad
// input (a flag, a file, a field). Every subcommand is a thin layer over the
// libraries the passes use; nothing here re-implements a rule. Each lives in
// its own <Name>Command.cpp; this file holds only the command table and
// main, which dispatches and turns every failure into its exit code.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "ditc/Support/BuildInfo.h"
#include "ditc/Support/Spelling.h"
#include "ditc/Support/Utf8.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <iostream>

using namespace ditc;

namespace {

struct Command {
  const char *name;
  const char *summary; // one line of `ditc --help`
  std::string (*usage)();
  int (*run)(const Argv &);
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
  std::string usage = "usage: ditc <command> [args]\n       ditc --version\n\ncommands:\n";
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

/// `ditc --version`: the project's version and the torch the runtime of
/// this build links (the compiler itself never links torch).
std::string versionText() {
  std::string text = "ditc " DITC_VERSION_STRING "\n";
  std::string torch = DITC_BUILT_TORCH_VERSION;
  if (torch.empty())
    return text + "runtime: not built (-DDITC_BUILD_RUNTIME=OFF)\n";
  std::string cuda = DITC_BUILT_TORCH_CUDA;
  text += "runtime: dit-run links torch " + torch +
          (cuda.empty() ? std::string(" (CPU only)") : " (CUDA " + cuda + ")") + "\n";
  text += DITC_BUILT_RUNTIME_CUDA ? "runtime: CUDA and NCCL compiled in\n"
                                  : "runtime: CUDA and NCCL not compiled in "
                                    "(-DDITC_RUNTIME_CUDA=OFF)\n";
  return text;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--version") {
    std::cout << versionText();
    return 0;
  }
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
