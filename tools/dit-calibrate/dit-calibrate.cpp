//===- dit-calibrate.cpp - measure this host for `ditc calibrate` ---------===//
//
//   dit-calibrate --output RAW.json [--threads 1,2,...] [--ranks 2,4|none]
//                 [--round-seconds S] [--timeout SEC]
//
// Times the runtime's GEMM, attention and elementwise kernels with each
// thread count, then starts each --ranks count of local ranks (as
// `dit-run --nproc` does) and times the collectives between them and the
// ranks' skew at a barrier (SkewSample). Writes
// the raw measurements (Calibrate.h); `ditc calibrate` runs this tool and
// fits a hardware profile to them. Exit codes: 0 done, 1 run failure, 2 bad
// input.
//
//===----------------------------------------------------------------------===//
#include "ditc/Runtime/Driver/Calibrate.h"
#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Device/CpuDevice.h"
#include "ditc/Runtime/Driver/Launcher.h"
#include "ditc/Runtime/Driver/Runner.h"
#include "ditc/Runtime/Exec/Threads.h"
#include "ditc/Support/ArgParser.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/ReadFile.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>

using namespace ditc;
using namespace ditc::runtime;
using nlohmann::json;

static const char *const kUsage =
    "usage: dit-calibrate --output RAW.json [--threads 1,2,...] [--ranks 2,4|none]\n"
    "                     [--round-seconds S] [--timeout SEC]\n"
    "  --output RAW.json   the raw measurements (ditc calibrate fits a profile to them)\n"
    "  --threads LIST      intra-op thread counts to time the kernels with\n"
    "                      (default: 1 to the usable cores)\n"
    "  --ranks LIST|none   local rank counts to time gloo collectives between\n"
    "                      (default: 2,4); none: the kernels only\n"
    "  --round-seconds S   the length of one timed round of a kernel (default 0.3)\n"
    "  --timeout SEC       how long a rank waits for its peers (default 120)\n"
    "exit codes: 0 done, 1 run failure, 2 bad input\n";

/// "1,2,4": positive integers in [min, max], each once, ascending.
static std::vector<int64_t> parseCounts(const std::string &flag,
                                        const std::string &text, int64_t min,
                                        int64_t max) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    out.push_back(parseIntegerFlag(flag, item, min, max));
  if (out.empty() || text.back() == ',')
    throw BadInput(flag + " is '" + text + "'; expected a comma-separated list "
                   "of integers in [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]");
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] <= out[i - 1])
      throw BadInput(flag + " is '" + text + "'; list each count once, ascending");
  return out;
}

static std::string utcNow() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

static std::string hostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) != 0 || !*name)
    return "unknown host";
  return name;
}

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (ArgParser::asksForHelp(args)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  // dit-run's ranks run PASSIVE with strict MKL, so the kernels are timed as
  // they run there.
  setReproducibleBlas();
  restartForPassiveWait(argv);
  try {
    ArgParser parser("dit-calibrate");
    for (const char *flag : {"--output", "--threads", "--ranks", "--round-seconds",
                             "--timeout", "--rank-output"})
      parser.addOption(flag);
    parser.parse(args);
    parser.expectPositionals(0, "nothing");
    auto timeout = std::chrono::milliseconds(
        parser.getInt("--timeout", 1, 86400).value_or(120) * 1000);
    std::vector<int64_t> sizes = calibrationMessageSizes();

    // A rank the launcher started: time the collectives; rank 0 writes them.
    if (auto rankOutput = parser.get("--rank-output")) {
      LocalRankTimings timings = measureLocalRanks(sizes, timeout);
      if (!timings.collectives.empty()) {
        json out = {{"collectives", json::array()}, {"skew", json::array()}};
        for (const CollectiveSample &s : timings.collectives)
          out["collectives"].push_back({{"kind", s.kind}, {"ranks", s.ranks},
                                        {"bytes", s.bytes}, {"seconds", s.seconds}});
        for (const SkewSample &s : timings.skew)
          out["skew"].push_back({{"ranks", s.ranks}, {"rows", s.rows},
                                 {"iterations", s.iterations},
                                 {"free_seconds", s.freeSeconds},
                                 {"lockstep_seconds", s.lockstepSeconds},
                                 {"barrier_seconds", s.barrierSeconds}});
        writeFileAtomically(*rankOutput, out.dump() + "\n");
      }
      std::fflush(stdout);
      ::_exit(0);
    }

    if (!parser.get("--output"))
      throw BadInput("dit-calibrate: --output RAW.json is required");
    std::string output = *parser.get("--output");
    checkOutputPath(output, "--output");
    int64_t cores = CpuDevice::usableCores();
    std::vector<int64_t> threads;
    if (auto text = parser.get("--threads"))
      threads = parseCounts("--threads", *text, 1, 1024);
    else
      for (int64_t t = 1; t <= cores; ++t)
        threads.push_back(t);
    // "none" times the kernels alone: a quick reading of the host's compute
    // speed, merged by its reader with a full measurement's collectives.
    std::string ranksText = parser.get("--ranks").value_or("2,4");
    std::vector<int64_t> ranks;
    if (ranksText != "none")
      ranks = parseCounts("--ranks", ranksText, 2, 64);
    double roundSeconds = 0.3;
    if (auto text = parser.get("--round-seconds")) {
      roundSeconds = parseFloatFlag("--round-seconds", *text);
      if (!(roundSeconds >= 0.01 && roundSeconds <= 60))
        throw BadInput("--round-seconds is '" + *text +
                       "'; expected a number of seconds in [0.01, 60]");
    }

    json compute = json::array();
    for (int64_t t : threads) {
      ComputeRates r = measureComputeRates(t, roundSeconds);
      std::printf("threads %lld: GEMM %.1f GFLOP/s, attention %.1f GFLOP/s, "
                  "elementwise %.2f GB/s, %.2f G elements/s\n",
                  (long long)t, r.gemmFlopsPerSecond / 1e9,
                  r.attentionFlopsPerSecond / 1e9,
                  r.elementwiseBytesPerSecond / 1e9,
                  r.elementwiseElementsPerSecond / 1e9);
      std::fflush(stdout);
      compute.push_back({{"threads", t},
                         {"gemm_flops_per_s", r.gemmFlopsPerSecond},
                         {"attention_flops_per_s", r.attentionFlopsPerSecond},
                         {"elementwise_bytes_per_s", r.elementwiseBytesPerSecond},
                         {"elementwise_elements_per_s", r.elementwiseElementsPerSecond}});
    }

    json collectives = json::array(), skew = json::array();
    for (int64_t n : ranks) {
      char pattern[] = "/tmp/dit-calibrate-XXXXXX";
      int fd = ::mkstemp(pattern);
      if (fd < 0)
        throw RunFailure("cannot create a temporary file in /tmp");
      ::close(fd);
      std::string rankFile = pattern;
      std::fflush(stdout);
      int code = launchLocalRankPrograms(
          int(n), {"--rank-output", rankFile, "--timeout",
                   std::to_string(timeout.count() / 1000)},
          timeout);
      std::string text;
      if (code == 0)
        text = readRegularFile(rankFile, 1 << 24, {false, "rank 0's timings"});
      ::unlink(rankFile.c_str());
      if (code != 0)
        throw RunFailure("timing gloo collectives between " + std::to_string(n) +
                         " local ranks failed (exit " + std::to_string(code) + ")");
      json timings = json::parse(text);
      for (json &sample : timings.at("collectives"))
        collectives.push_back(sample);
      std::printf("%lld ranks: %zu collective timings\n", (long long)n,
                  timings.at("collectives").size());
      for (json &sample : timings.at("skew")) {
        std::printf("%lld ranks, %lld-row chunks: %.2f ms free, %.2f ms in "
                    "lockstep (idle barrier %.3f ms)\n",
                    (long long)n, (long long)sample.at("rows").get<int64_t>(),
                    1e3 * sample.at("free_seconds").get<double>(),
                    1e3 * sample.at("lockstep_seconds").get<double>(),
                    1e3 * sample.at("barrier_seconds").get<double>());
        skew.push_back(sample);
      }
    }

    json out = {{"format", "ditc-calibration/1"},
                {"host", hostName()},
                {"time", utcNow()},
                {"cores", cores},
                {"memory_bytes", double(::sysconf(_SC_PHYS_PAGES)) *
                                     double(::sysconf(_SC_PAGESIZE))},
                {"compute", compute},
                {"collectives", collectives},
                {"skew", skew},
                {"method", calibrationMethod()}};
    writeFileAtomically(output, out.dump(1) + "\n");
    std::printf("wrote %s\n", output.c_str());
    return 0;
  } catch (const BadInput &error) {
    std::fprintf(stderr, "dit-calibrate: %s\n", error.what());
    return 2;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "dit-calibrate: %s\n", firstLine(error).c_str());
    return 1;
  }
}
