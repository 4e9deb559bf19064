//===- CalibrateCommand.cpp - `ditc calibrate`: a host profile ------------===//
//
// Runs the runtime's dit-calibrate (built next to dit-run; it times the
// runtime's own kernels and collectives, so ditc never links torch),
// fits a profile to its measurements (ditc/CostModel/Calibration.h) and
// writes it atomically, loadable by `ditc search --hardware FILE`.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "ditc/CostModel/Calibration.h"
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Support/ArgParser.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

namespace ditc {

namespace {

const Flag kProfileOutput =
    Flag::option("-o", "PROFILE.json", "the profile to write (atomically)");
const Flag kName = Flag::option("--name", "NAME",
                                "the profile's name (default calibrated)");
const Flag kRuntime =
    Flag::option("--runtime", "PATH",
                 "the dit-calibrate executable (default: the one\n"
                 "next to this ditc)");
// --threads to --timeout are dit-calibrate's own flags, passed on.
const Flag kThreads = Flag::option("--threads", "LIST",
                                   "thread counts to time the kernels with\n"
                                   "(default: 1 to the usable cores)");
const Flag kRanks =
    Flag::option("--ranks", "LIST",
                 "local rank counts to time collectives between\n"
                 "(default 2,4)");
const Flag kRoundSeconds = Flag::option(
    "--round-seconds", "S", "one timed round of a kernel (default 0.3)");
const Flag kTimeout = Flag::option(
    "--timeout", "SEC", "how long a rank waits for its peers (default 120)");
const Flag kKeep = Flag::option("--keep-measurements", "RAW",
                                "also write dit-calibrate's raw measurements");
const Flag kFrom =
    Flag::option("--from-measurements", "RAW",
                 "fit a profile to measurements written earlier\n"
                 "instead of measuring");
const Flag kCalibrateFormat =
    formatFlag("json: one document on stdout, {\"written\",\n"
               "\"name\", \"cores\", \"profile\"}; errors as "
               "JSON too");

const std::vector<const Flag *> kMeasureFlags = {&kThreads, &kRanks,
                                                 &kRoundSeconds, &kTimeout};

std::vector<FlagGroup> calibrateFlags() {
  return {{"flags",
           {&kProfileOutput, &kName, &kRuntime, &kThreads, &kRanks,
            &kRoundSeconds, &kTimeout, &kKeep, &kFrom, &kCalibrateFormat}}};
}

/// dit-calibrate beside this ditc (both land in the build's bin/).
std::string defaultRuntime() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return "dit-calibrate";
  std::string path(self, size_t(n));
  return path.substr(0, path.rfind('/') + 1) + "dit-calibrate";
}

/// Runs `argv` and returns its exit code (128 + signal when killed).
int runProgram(const std::vector<std::string> &argv) {
  std::cout.flush();
  pid_t pid = ::fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    std::vector<char *> args;
    for (const std::string &arg : argv)
      args.push_back(const_cast<char *>(arg.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "ditc: error: cannot run %s\n", args[0]);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    ;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

std::string calibrateUsage() {
  return formatUsage(
      R"(usage: ditc calibrate -o PROFILE.json [--name NAME] [--runtime PATH]
                      [--threads LIST] [--ranks LIST] [--round-seconds S]
                      [--timeout SEC] [--keep-measurements RAW.json]
       ditc calibrate -o PROFILE.json --from-measurements RAW.json [--name NAME]
       (either form also takes --format text|json)

Measures this host with the runtime library (never MLIR): runs dit-calibrate,
which times dit-run's GEMM and attention kernels and an elementwise op with
each thread count, and dit-run's all-reduce (shared memory), all-gather,
all-to-all, ring shift and send/recv (gloo) between local ranks at several
message sizes. Fits a latency
and a bandwidth per collective kind to the cost model's own formulas, and
writes a hardware profile with a "host" section (docs/search.md) for
`ditc search --hardware PROFILE.json`. Every number's source says it was
measured, on which host, when and how.
)",
      calibrateFlags(),
      R"(exit codes: 0 written, 1 the measurement failed (a rank failed, or the
            timings fit no bandwidth), 2 bad input (a flag, a file or a field)
)");
}

int runCalibrate(const std::vector<std::string> &argv) {
  ArgParser args = parseFlags("ditc calibrate", calibrateFlags(), argv);
  Format format = readFormat(args, kCalibrateFormat);
  args.expectPositionals(0, "no positional arguments");
  if (!args.get(kProfileOutput))
    badFlag(kProfileOutput.name, "",
            "'ditc calibrate' needs " + kProfileOutput.name + " " +
                kProfileOutput.metavar);
  std::string output = *args.get(kProfileOutput);
  // The profile may not replace what the command reads, nor the kept
  // measurements (the runtime's output policy, IO/OutputPolicy.h).
  runtime::OutputPolicy outputs;
  if (auto from = args.get(kFrom))
    outputs.readsInput(kFrom.name, *from);
  outputs.claimOutput(kProfileOutput.name, output);
  if (!args.get(kFrom))
    if (auto keep = args.get(kKeep))
      outputs.claimOutput(kKeep.name, *keep);
  std::string name = args.get(kName).value_or("calibrated");
  if (name.empty() || name.find_first_of("\"\\/") != std::string::npos)
    badFlag(kName.name, name, kName.name + " '" + name + "' must be a non-empty name "
                            "without quotes, backslashes or slashes");

  std::string measurements, measurementsFile;
  if (auto from = args.get(kFrom)) {
    std::vector<const Flag *> measuring = {&kRuntime, &kThreads, &kRanks,
                                           &kRoundSeconds, &kTimeout, &kKeep};
    for (const Flag *flag : measuring)
      if (args.has(*flag))
        badFlag(flag->name, *args.get(*flag),
                flag->name + " measures; " + kFrom.name +
                    " fits measurements already taken");
    measurementsFile = *from;
    measurements = readRegularFile(*from, kMaxJsonFileBytes,
                                   {false, "calibration measurements"});
  } else {
    if (args.get(kRanks).value_or("") == "none")
      badFlag(kRanks.name, "none",
              "--ranks none times no collectives, and a profile needs them; "
              "expected a comma-separated list of rank counts (dit-calibrate "
              "--ranks none alone times the kernels)");
    std::string runtime = args.get(kRuntime).value_or(defaultRuntime());
    struct stat st;
    if (::stat(runtime.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        ::access(runtime.c_str(), X_OK) != 0)
      badFlag(kRuntime.name, runtime,
              "--runtime: '" + runtime + "' is not an executable file; build "
              "the runtime's dit-calibrate (ninja dit-calibrate) or name it "
              "with --runtime PATH");
    if (auto keep = args.get(kKeep))
      checkOutputPath(*keep, kKeep.name);
    char pattern[] = "/tmp/ditc-calibrate-XXXXXX";
    int fd = ::mkstemp(pattern);
    if (fd < 0)
      throw BadInput("cannot create a temporary file in /tmp");
    ::close(fd);
    measurementsFile = pattern;
    std::vector<std::string> command = {runtime, "--output", measurementsFile};
    for (const Flag *flag : kMeasureFlags)
      if (auto value = args.get(*flag)) {
        command.push_back(flag->name);
        command.push_back(*value);
      }
    int code = runProgram(command);
    if (code == 0)
      measurements = readRegularFile(measurementsFile, kMaxJsonFileBytes,
                                     {false, "calibration measurements"});
    ::unlink(measurementsFile.c_str());
    if (code == 2)
      throw BadInput("dit-calibrate refused its input (its message is above)");
    if (code != 0)
      throw CalibrationFailed("the measurement failed: " + runtime + " exited with " +
                              std::to_string(code));
    if (auto keep = args.get(kKeep))
      writeFileAtomically(*keep, measurements);
    measurementsFile = args.get(kKeep).value_or("dit-calibrate's output");
  }
  CalibratedProfile calibrated;
  try {
    calibrated = profileFromCalibration(measurements, measurementsFile, name);
  } catch (const BadInput &error) {
    if (args.has(kFrom))
      throw;
    // Fresh measurements that cannot be fitted are a failed measurement
    // (a host too busy to time), not bad input.
    throw CalibrationFailed(std::string("the measurement failed: ") + error.what());
  }
  std::string text = hardwareProfileToJson(calibrated.profile, calibrated.sources);
  // What ditc writes, ditc search must read back.
  parseHardwareProfiles(text, output);
  writeFileAtomically(output, text);
  if (format == Format::Json) {
    nlohmann::json document = {{"written", output},
                               {"name", name},
                               {"cores", calibrated.profile.host->cores},
                               {"profile", nlohmann::json::parse(text)}};
    std::cout << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  std::cout << "wrote " << output << ": profile '" << name << "' for "
            << calibrated.profile.host->cores << " cores\n";
  return 0;
}

} // namespace ditc
