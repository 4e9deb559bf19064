//===- Report.cpp - what a finished run tells: summary, profile, --report -===//
#include "ditc/Runtime/Driver/Report.h"
#include "ditc/Runtime/Exec/Threads.h"
#include "ditc/Support/Utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace ditc::runtime {

void printSummary(const Manifest &m, const RunOptions &options,
                         const Schedule &schedule, int64_t steps, const std::vector<StepTiming> &timings,
                         double setupMs, int64_t paramBytes, int64_t threads,
                         const std::vector<std::pair<std::string, std::vector<int64_t>>>
                             &written,
                         const WeightsRead *weights) {
  std::set<std::string> keys;
  for (const StepTiming &t : timings)
    for (const auto &c : t.comm)
      keys.insert(c.first);
  std::printf("dit-run: %s, plan %s, %lld ranks (%s), %lld steps, %s, seed %lld\n",
              m.modelName.c_str(), m.planHash.substr(0, 16).c_str(),
              (long long)m.worldSize(),
              options.rendezvous.backend == Backend::Nccl ? "nccl" : "gloo",
              (long long)steps, options.bfloat16 ? "bfloat16" : "float32",
              (long long)options.seed);
  if (schedule.scheduler != "linear")
    std::printf("schedule: %s from %s\n", schedule.scheduler.c_str(),
                schedule.source.c_str());
  std::printf("setup %.1f ms (rendezvous, agreement, groups, %.1f MiB of parameters "
              "on rank 0; %lld intra-op thread%s)\n",
              setupMs, paramBytes / 1048576.0, (long long)threads,
              threads == 1 ? "" : "s");
  if (weights)
    std::printf("weights %s: rank 0 read %.2f MiB of the checkpoint's %.2f MiB "
                "(%.1f%%) and %.1f KiB of headers in %.1f ms\n",
                escapeInvalidUtf8(options.weights).c_str(),
                weights->dataBytes / 1048576.0, weights->totalBytes / 1048576.0,
                weights->totalBytes ? 100.0 * double(weights->dataBytes) /
                                          double(weights->totalBytes)
                                    : 0.0,
                weights->headerBytes / 1024.0, weights->ms);
  else
    std::printf("parameters: synthetic (no --weights): every tensor is the plan's seeded "
                "initializer, so the output is no trained model's; pass --weights "
                "SNAPSHOT for one\n");
  // Per axis: the raw collective time and the part the step waited for
  // (exposed); compute is the step less every exposed part.
  std::printf("%6s %10s %10s", "step", "total ms", "compute ms");
  for (const std::string &k : keys)
    std::printf(" %12s %12s", ("comm " + k).c_str(), ("exposed " + k).c_str());
  std::printf("\n");
  double sumTotal = 0, sumRaw = 0, sumExposed = 0;
  std::map<std::string, CommTime> sumPerAxis;
  for (size_t i = 0; i < timings.size(); ++i) {
    double raw = 0, exposed = 0;
    for (const auto &c : timings[i].comm) {
      raw += c.second.rawSeconds;
      exposed += c.second.exposedSeconds;
    }
    std::printf("%6zu %10.2f %10.2f", i + 1, timings[i].totalMs,
                timings[i].totalMs - exposed);
    for (const std::string &k : keys) {
      auto it = timings[i].comm.find(k);
      CommTime v = it == timings[i].comm.end() ? CommTime() : it->second;
      sumPerAxis[k].rawSeconds += v.rawSeconds;
      sumPerAxis[k].exposedSeconds += v.exposedSeconds;
      std::printf(" %12.2f %12.2f", v.rawSeconds, v.exposedSeconds);
    }
    std::printf("\n");
    sumTotal += timings[i].totalMs;
    sumRaw += raw;
    sumExposed += exposed;
  }
  double n = double(std::max<size_t>(1, timings.size()));
  std::printf("%6s %10.2f %10.2f", "mean", sumTotal / n, (sumTotal - sumExposed) / n);
  for (const std::string &k : keys)
    std::printf(" %12.2f %12.2f", sumPerAxis[k].rawSeconds / n,
                sumPerAxis[k].exposedSeconds / n);
  std::printf("\ncommunication share on rank 0: %.1f%% raw, %.1f%% exposed\n",
              sumTotal > 0 ? 100.0 * sumRaw / sumTotal : 0.0,
              sumTotal > 0 ? 100.0 * sumExposed / sumTotal : 0.0);
  for (const auto &[path, shape] : written)
    std::printf("wrote %s: latents %s float32\n", path.c_str(),
                formatShape(shape).c_str());
  std::fflush(stdout);
}

/// DITC_PROFILE_OPS=1: each rank's time per op kind on stderr, costliest
/// first, per step and as a share of the time in ops.
void printOpProfile(int64_t rank, const std::string &program, int64_t steps,
                           const std::map<std::string, Executor::OpTime> &profile) {
  if (profile.empty())
    return;
  std::vector<std::pair<std::string, Executor::OpTime>> rows(profile.begin(),
                                                             profile.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.second.seconds > b.second.seconds;
  });
  double total = 0;
  for (const auto &row : rows)
    total += row.second.seconds;
  std::string text = "dit-run: rank " + std::to_string(rank) + " op profile, program " +
                     program + ", " + std::to_string(steps) + " steps\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-28s %12s %7s %10s\n", "op", "ms/step", "share",
                "ops/step");
  text += line;
  double n = double(std::max<int64_t>(1, steps));
  for (const auto &[name, t] : rows) {
    std::snprintf(line, sizeof line, "  %-28s %12.2f %6.1f%% %10.1f\n", name.c_str(),
                  1000.0 * t.seconds / n, total > 0 ? 100.0 * t.seconds / total : 0.0,
                  double(t.count) / n);
    text += line;
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

std::string runReportJson(const Manifest &m, const RunOptions &options,
                          const Schedule &schedule, const ReportFacts &facts) {
  nlohmann::json report = {{"plan_hash", m.planHash},
                           {"model", m.modelName},
                           {"ranks", m.worldSize()},
                           {"steps", facts.steps},
                           {"requests", facts.requests},
                           {"dtype", options.bfloat16 ? "bfloat16" : "float32"},
                           {"setup_ms", facts.setupMs},
                           {"threads", facts.threads},
                           {"omp_wait_policy", waitPolicyAtLoad()},
                           // How rank 0's groups all-reduce: in shared
                           // memory or through gloo, and why (HostReduce.h).
                           {"all_reduce_transport", facts.allReduceTransport},
                           {"all_to_all_transport", facts.allToAllTransport}};
  // The schedule as run: the scheduler's sigma table and, per step, its
  // timestep (the transformer's timestep input).
  nlohmann::json scheduleJson = {{"scheduler", schedule.scheduler},
                                 {"source", schedule.source},
                                 {"sigmas", schedule.sigmas},
                                 {"timesteps", nlohmann::json::array()}};
  for (const ScheduleStep &s : schedule.steps)
    scheduleJson["timesteps"].push_back(s.timestep);
  if (schedule.mu)
    scheduleJson["mu"] = *schedule.mu;
  report["schedule"] = scheduleJson;
  for (const std::vector<int64_t> &row : facts.memory) {
    report["peak_rss_mib"].push_back(double(row[0]) / 1048576.0);
    report["param_mib"].push_back(double(row[1]) / 1048576.0);
    report["estimated_peak_mib"].push_back(double(row[2]) / 1048576.0);
    report["rss_start_mib"].push_back(double(row[3]) / 1048576.0);
    report["rss_ready_mib"].push_back(double(row[4]) / 1048576.0);
    report["rss_file_mib"].push_back(double(row[5]) / 1048576.0);
    // On a GPU: the caching allocator's peak of the rank's tensors.
    if (row.size() > 6 && row[6] >= 0)
      report["device_peak_mib"].push_back(double(row[6]) / 1048576.0);
    else
      report["device_peak_mib"].push_back(nullptr);
  }
  // step_cpu_ms[rank][step]: the process's CPU time over each step, all
  // its threads.
  report["step_cpu_ms"] = nlohmann::json::array();
  for (const std::vector<int64_t> &perStep : facts.stepCpu) {
    nlohmann::json row = nlohmann::json::array();
    for (int64_t micros : perStep)
      row.push_back(double(micros) / 1000.0);
    report["step_cpu_ms"].push_back(std::move(row));
  }
  if (facts.weights) {
    nlohmann::json w = {{"snapshot", escapeInvalidUtf8(options.weights)},
                        {"checkpoint_bytes", facts.weights->totalBytes}};
    for (const std::vector<int64_t> &r : facts.weightsReadPerRank) {
      w["bytes_read"].push_back(r[0]);
      w["header_bytes_read"].push_back(r[1]);
      w["load_ms"].push_back(double(r[2]) / 1000.0);
      w["load_cpu_ms"].push_back(double(r[3]) / 1000.0);
    }
    report["weights"] = std::move(w);
  }
  // comm_ms: each step's raw time per axis. comm_axes: per axis, the mean
  // raw, exposed and peer-wait time of the steps after the first (the first also
  // connects gloo's pairs and builds tables), or of the only step.
  nlohmann::json commAxes = nlohmann::json::object();
  size_t firstTimed = facts.timings.size() > 1 ? 1 : 0;
  std::map<std::string, CommTime> sums;
  for (size_t i = 0; i < facts.timings.size(); ++i) {
    const StepTiming &t = facts.timings[i];
    report["step_ms"].push_back(t.totalMs);
    nlohmann::json raw = nlohmann::json::object();
    for (const auto &[key, time] : t.comm) {
      raw[key] = time.rawSeconds;
      if (i >= firstTimed) {
        sums[key].rawSeconds += time.rawSeconds;
        sums[key].exposedSeconds += time.exposedSeconds;
        sums[key].peerWaitSeconds += time.peerWaitSeconds;
      }
    }
    report["comm_ms"].push_back(raw);
  }
  double timed = double(std::max<size_t>(1, facts.timings.size() - firstTimed));
  for (const auto &[key, time] : sums)
    commAxes[key] = {{"raw_ms", time.rawSeconds / timed},
                     {"exposed_ms", time.exposedSeconds / timed},
                     {"peer_wait_ms", time.peerWaitSeconds / timed}};
  report["comm_axes"] = commAxes;
  return report.dump(1) + "\n";
}

} // namespace ditc::runtime
