//===- Calibrate.cpp - `ditc calibrate` ------------------------------------===//
#include "Calibrate.h"

#include "ditc/CostModel/Calibration.h"
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

std::string calibrateUsage() {
  return R"(usage: ditc calibrate -o PROFILE.json [--name NAME] [--runtime PATH]
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

flags:
  -o PROFILE.json           the profile to write (atomically)
  --name NAME               the profile's name (default calibrated)
  --runtime PATH            the dit-calibrate executable (default: the one
                            next to this ditc)
  --threads LIST            thread counts to time the kernels with
                            (default: 1 to the usable cores)
  --ranks LIST              local rank counts to time collectives between
                            (default 2,4)
  --round-seconds S         one timed round of a kernel (default 0.3)
  --timeout SEC             how long a rank waits for its peers (default 120)
  --keep-measurements RAW   also write dit-calibrate's raw measurements
  --from-measurements RAW   fit a profile to measurements written earlier
                            instead of measuring
  --format text|json        json: one document on stdout, {"written",
                            "name", "cores", "profile"}; errors as JSON too

exit codes: 0 written, 1 the measurement failed (a rank failed, or the
            timings fit no bandwidth), 2 bad input (a flag, a file or a field)
)";
}

namespace {

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

int runCalibrate(const std::vector<std::string> &argv) {
  ArgParser args("ditc calibrate");
  for (const char *flag : {"-o", "--name", "--runtime", "--threads", "--ranks",
                           "--round-seconds", "--timeout", "--keep-measurements",
                           "--from-measurements", "--format"})
    args.addOption(flag);
  args.parse(argv);
  std::string format = args.get("--format").value_or("text");
  if (format != "text" && format != "json")
    badFlag("--format", format,
            "--format value '" + format + "' is not allowed; expected text or json");
  args.expectPositionals(0, "no positional arguments");
  if (!args.get("-o"))
    badFlag("-o", "", "'ditc calibrate' needs -o PROFILE.json");
  std::string output = *args.get("-o");
  checkOutputPath(output, "-o");
  std::string name = args.get("--name").value_or("calibrated");
  if (name.empty() || name.find_first_of("\"\\/") != std::string::npos)
    badFlag("--name", name, "--name '" + name + "' must be a non-empty name "
                            "without quotes, backslashes or slashes");

  std::string measurements, measurementsFile;
  if (auto from = args.get("--from-measurements")) {
    for (const char *flag : {"--runtime", "--threads", "--ranks", "--round-seconds",
                             "--timeout", "--keep-measurements"})
      if (args.has(flag))
        badFlag(flag, *args.get(flag),
                std::string(flag) + " measures; --from-measurements fits "
                                    "measurements already taken");
    measurementsFile = *from;
    measurements = readRegularFile(*from, kMaxJsonFileBytes,
                                   {false, "calibration measurements"});
  } else {
    if (args.get("--ranks").value_or("") == "none")
      badFlag("--ranks", "none",
              "--ranks none times no collectives, and a profile needs them; "
              "expected a comma-separated list of rank counts (dit-calibrate "
              "--ranks none alone times the kernels)");
    std::string runtime = args.get("--runtime").value_or(defaultRuntime());
    struct stat st;
    if (::stat(runtime.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        ::access(runtime.c_str(), X_OK) != 0)
      badFlag("--runtime", runtime,
              "--runtime: '" + runtime + "' is not an executable file; build "
              "the runtime's dit-calibrate (ninja dit-calibrate) or name it "
              "with --runtime PATH");
    if (auto keep = args.get("--keep-measurements"))
      checkOutputPath(*keep, "--keep-measurements");
    char pattern[] = "/tmp/ditc-calibrate-XXXXXX";
    int fd = ::mkstemp(pattern);
    if (fd < 0)
      throw BadInput("cannot create a temporary file in /tmp");
    ::close(fd);
    measurementsFile = pattern;
    std::vector<std::string> command = {runtime, "--output", measurementsFile};
    for (const char *flag : {"--threads", "--ranks", "--round-seconds", "--timeout"})
      if (auto value = args.get(flag)) {
        command.push_back(flag);
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
    if (auto keep = args.get("--keep-measurements"))
      writeFileAtomically(*keep, measurements);
    measurementsFile = args.get("--keep-measurements").value_or("dit-calibrate's output");
  }
  CalibratedProfile calibrated;
  try {
    calibrated = profileFromCalibration(measurements, measurementsFile, name);
  } catch (const BadInput &error) {
    if (args.has("--from-measurements"))
      throw;
    // Fresh measurements that cannot be fitted are a failed measurement
    // (a host too busy to time), not bad input.
    throw CalibrationFailed(std::string("the measurement failed: ") + error.what());
  }
  std::string text = hardwareProfileToJson(calibrated.profile, calibrated.sources);
  // What ditc writes, ditc search must read back.
  parseHardwareProfiles(text, output);
  writeFileAtomically(output, text);
  if (format == "json") {
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
