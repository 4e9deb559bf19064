//===- Commands.h - what ditc's commands share ------------------*- C++ -*-===//
//
// Each command lives in its own <Name>Command.cpp and gives ditc.cpp's
// command table a usage and a run function. The flags several commands
// take are declared once here (Flags.cpp), with their help text and JSON
// name; so are the output format, the JSON error object, and the request
// (model, workload, deployment) that check and compile both read
// (Request.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TOOLS_DITC_COMMANDS_H
#define DITC_TOOLS_DITC_COMMANDS_H

#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/Legality.h"
#include "ditc/CostModel/HardwareProfile.h"
#include "ditc/Engines/Engine.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/Support/ArgParser.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Flag.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ditc {

using Argv = std::vector<std::string>;

// The commands, in the order of `ditc --help`.
std::string modelsUsage();
int runModels(const Argv &argv);
std::string importUsage();
int runImport(const Argv &argv);
std::string checkUsage();
int runCheck(const Argv &argv);
std::string compileUsage();
int runCompile(const Argv &argv);
std::string searchUsage();
int runSearch(const Argv &argv);
std::string calibrateUsage();
int runCalibrate(const Argv &argv);
std::string explainUsage();
int runExplain(const Argv &argv);
std::string weightsUsage();
int runWeights(const Argv &argv);

/// A failure that is neither bad input nor an illegal configuration: a
/// bug in ditc. Exit 1, reported as kind "internal".
class InternalError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The measurement itself failed (a rank failed, or the timings fit no
/// bandwidth): exit 1, reported as kind "measurement-failed", as opposed to
/// BadInput's 2.
class CalibrationFailed : public std::runtime_error {
public:
  explicit CalibrationFailed(const std::string &message)
      : std::runtime_error(message) {}
};

//===----------------------------------------------------------------------===//
// Flags several commands take (Flags.cpp)
//===----------------------------------------------------------------------===//

/// --format text|json with a command's own help for it.
Flag formatFlag(std::string help);
extern const Flag kFormatFlag;     // --format text|json
extern const Flag kDtypeFlag;      // --dtype bf16|f32
extern const Flag kHelpFlag;       // -h
extern const Flag kHelpLongFlag;   // --help, on -h's line
extern const Flag kNumGpusFlag;    // --num-gpus: the world size
extern const Flag kMeshOrderFlag;  // --mesh-order a,b,...
extern const Flag kHardwareFlag;   // --hardware, for check's suggestions
extern const Flag kDeploymentFlag; // --deployment FILE

/// What a command that takes a MODEL says when it is missing.
extern const char *const kModelArgument;
/// The prose on MODEL that every command taking one prints.
extern const char *const kModelHelp;
/// The last exit code line of most commands.
extern const char *const kBadInputExit;

/// "flags:" with `flags`, then --format and -h, --help.
FlagGroup commonFlags(std::vector<const Flag *> flags = {});
/// --height, --width, --num-frames, ...: the workload group.
FlagGroup workloadFlags();
/// The degrees and node shape a deployment file can give instead.
const std::vector<const Flag *> &deploymentFlags();
/// deploymentFlags() with --mesh-order, --hardware and --deployment.
FlagGroup parallelFlags();
/// Parses `argv` for `command` (as "ditc check"), which takes the flags of
/// `groups`.
ArgParser parseFlags(const std::string &command,
                     const std::vector<FlagGroup> &groups, const Argv &argv);

/// Text for people, or one JSON document on stdout for tools.
enum class Format { Text, Json };
/// `flag` (a --format text|json), text by default.
Format readFormat(const ArgParser &args, const Flag &flag = kFormatFlag);
/// --dtype bf16|f32, bf16 by default.
ElementType readElementType(const ArgParser &args);
WorkloadOptions readWorkloadFlags(const ArgParser &args);
ParallelFlags readParallelFlags(const ArgParser &args);

/// The flags that would select `degrees` on `numGpus` GPUs.
std::string degreesAsFlags(const Degrees &degrees, int64_t numGpus);
/// " --text-encoder-tp-size T --text-encoder-offload --vae-parallel-size V",
/// each only when it is not the default.
std::string componentsAsFlags(const SuggestedComponents &components);
/// The same degrees under the flags' JSON names.
nlohmann::json degreesAsJson(const Degrees &degrees);

//===----------------------------------------------------------------------===//
// Output (Output.cpp)
//===----------------------------------------------------------------------===//

/// Whether the command line asks for JSON. Read before the command parses
/// its flags, so that an error in them is reported as JSON too.
bool asksForJson(const Argv &args);
void printJson(const nlohmann::json &document);
/// {"error": {"kind", "message", "file"?, "field"?, "value"?}}: how every
/// failure reads in JSON mode (docs/cli.md).
nlohmann::json errorJson(const std::string &kind, const std::string &message,
                         const InputLocation &location = {});

//===----------------------------------------------------------------------===//
// The request check and compile read (Request.cpp)
//===----------------------------------------------------------------------===//

/// A model, a workload and a deployment, from flags or a deployment file.
struct Request {
  ModelSpec spec;
  Workload workload;
  Deployment deployment;
  /// The profile that ranks suggestions (--hardware), read once when the
  /// flag is given; without it, h100-sxm is read only if the check needs it.
  std::optional<HardwareProfile> hardware;
};

Request readRequest(const ArgParser &args);

/// `base` (a deployment file's workload section, or an engine line's) with
/// the workload flags given over it.
WorkloadOptions mergeWorkload(WorkloadOptions base, const WorkloadOptions &flags);

/// Imports the request's model with its deployment attached, and judges
/// it the way dit-check-legality does (reading the deployment back).
LegalityReport checkRequest(mlir::MLIRContext &context, const Request &request,
                            mlir::OwningOpRef<mlir::ModuleOp> &module,
                            ElementType elementType = ElementType::BF16);

/// Notes from resolving the flags, then the rules' diagnostics, one a line.
void printDiagnosticsText(const Request &request, const LegalityReport &report);
/// "legal: MODEL with --flags, N image tokens" (or "illegal: ...").
std::string verdictLine(const Request &request, const LegalityReport &report);
/// The text report of `ditc check`, also printed by a refused compile.
void printCheckText(const Request &request, const LegalityReport &report);
nlohmann::json diagnosticsJson(const Request &request,
                               const LegalityReport &report);
/// The JSON report of `ditc check`, also printed by a refused compile.
nlohmann::json checkJson(const Request &request, const LegalityReport &report);

//===----------------------------------------------------------------------===//
// Other engines' lines (EngineLines.cpp)
//===----------------------------------------------------------------------===//

extern const Flag kFromFlag;   // check --from ENGINE -- LINE
extern const Flag kEmitFlag;   // check, compile, search --emit ENGINE
extern const Flag kEngineFlag; // search --engine ENGINE

/// `argv` split at its first "--": ditc's words, and the engine's line.
std::pair<Argv, std::optional<Argv>> splitEngineLine(const Argv &argv);
/// The engine `flag` names, or nullptr when it is not given; BadInput
/// (listing the engines ditc knows) for a name it does not know.
const engines::Engine *readEngineFlag(const ArgParser &args, const Flag &flag);
/// The request an engine's line describes: its degrees and world as the
/// engine derives them, its workload values under ditc's workload flags,
/// and MODEL. `reading` gets what the engine made of the line.
Request readEngineRequest(const ArgParser &args, const engines::Engine &engine,
                          const Argv &words, engines::EngineReading &reading);
/// Adds to `report` the engine's derivations (notes), its refusals and
/// rules (errors, each with its source), and, when ditc refuses what the
/// engine would start, a note that says so.
void judgeWithEngine(const Request &request, LegalityReport &report,
                     const engines::Engine &engine, const engines::EngineReading &reading);
/// The engine's launch line for the request, or nullopt with its refusals
/// added to `report` as errors.
std::optional<engines::EmittedLaunch> emitForEngine(const Request &request,
                                                    LegalityReport &report,
                                                    const engines::Engine &engine);
/// Whether the engine can run the configuration (its emit refuses nothing).
bool engineAccepts(const engines::Engine &engine, const Deployment &deployment,
                   const ModelSpec &spec, const Workload &workload);
nlohmann::json launchJson(const engines::Engine &engine, const engines::EmittedLaunch &launch);
/// "xdit (xDiT at 175e0bf): torchrun ..."
void printLaunch(const engines::Engine &engine, const engines::EmittedLaunch &launch);

} // namespace ditc

#endif // DITC_TOOLS_DITC_COMMANDS_H
