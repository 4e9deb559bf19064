//===- Report.h - what a finished run tells: summary, profile, --report -*- C++ -*-===//
//
// Rank 0's progress line while a run steps, the summary it prints at the
// end, each rank's op profile (DITC_PROFILE_OPS=1), and the --report JSON:
// per-step wall and CPU time, communication per axis, memory per rank, the
// schedule as run, and what --weights read.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DRIVER_REPORT_H
#define DITC_RUNTIME_DRIVER_REPORT_H

#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Driver/Runner.h"
#include "ditc/Runtime/Exec/Executor.h"
#include "ditc/Runtime/Sched/Schedulers.h"

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include <unistd.h>

namespace ditc::runtime {

/// Rank 0's progress bar on stderr: redrawn in place on a terminal, and a
/// line per step (at most ~20 lines) otherwise, always including step 1.
class Progress {
public:
  Progress(int64_t steps, bool enabled)
      : steps(steps), enabled(enabled), tty(::isatty(2)) {}
  void update(int64_t done, double lastMs) {
    if (!enabled)
      return;
    if (tty) {
      int width = 30, filled = int(width * done / steps);
      std::fprintf(stderr, "\r[%s%s] step %lld/%lld  %.1f ms/step",
                   std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), (long long)done,
                   (long long)steps, lastMs);
      if (done == steps)
        std::fputc('\n', stderr);
    } else {
      int64_t every = std::max<int64_t>(1, steps / 20);
      if (done == 1 || done == steps || done % every == 0)
        std::fprintf(stderr, "dit-run: step %lld/%lld done (%.1f ms)\n",
                     (long long)done, (long long)steps, lastMs);
    }
    std::fflush(stderr);
  }

private:
  int64_t steps;
  bool enabled, tty;
};

struct StepTiming {
  double totalMs;
  /// The whole process's CPU time over the step (every thread: ATen's,
  /// gloo's, the transfer waiters): on a shared host, how much of the
  /// cores the step took, which the wall time alone does not say.
  double cpuMs = 0;
  std::map<std::string, CommTime> comm; // milliseconds, raw and exposed
};

/// What --weights cost a rank: tensor bytes it read, header bytes, the
/// tensor bytes of the components the plan runs, and the time.
struct WeightsRead {
  int64_t dataBytes = 0, headerBytes = 0, totalBytes = 0;
  double ms = 0;
  double cpuMs = 0; // this thread's CPU time: on a shared host, ms - cpuMs waited
};

/// What --report says of a finished run, gathered on rank 0: per rank
/// (memory, stepCpu, weightsReadPerRank) the values collectOnRankZero
/// returned, per step rank 0's timings.
struct ReportFacts {
  int64_t steps = 0, threads = 0;
  size_t requests = 0;
  double setupMs = 0;
  std::map<std::string, std::string> allReduceTransport, allToAllTransport;
  /// Per rank: peak RSS, parameter bytes, estimated peak, RSS at start,
  /// RSS when ready, file-backed RSS (bytes).
  std::vector<std::vector<int64_t>> memory;
  /// Per rank, per step: the process's CPU time in microseconds.
  std::vector<std::vector<int64_t>> stepCpu;
  /// Per rank with --weights: data bytes, header bytes, load and CPU
  /// microseconds.
  std::vector<std::vector<int64_t>> weightsReadPerRank;
  std::vector<StepTiming> timings;
  const WeightsRead *weights = nullptr; // with --weights
};

/// The --report JSON, one line per field.
std::string runReportJson(const Manifest &m, const RunOptions &options,
                          const Schedule &schedule, const ReportFacts &facts);

/// The run's last lines on stdout: the plan, ranks, dtype, steps, setup and
/// per-step time, and the outputs written.
void printSummary(const Manifest &m, const RunOptions &options, const Schedule &schedule,
                  int64_t steps, const std::vector<StepTiming> &timings, double setupMs,
                  int64_t paramBytes, int64_t threads,
                  const std::vector<std::pair<std::string, std::vector<int64_t>>> &written,
                  const WeightsRead *weightsRead);

/// DITC_PROFILE_OPS=1: each rank's time per op kind on stderr, costliest
/// first, per step and as a share of the time in ops.
void printOpProfile(int64_t rank, const std::string &program, int64_t steps,
                    const std::map<std::string, Executor::OpTime> &profile);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DRIVER_REPORT_H
