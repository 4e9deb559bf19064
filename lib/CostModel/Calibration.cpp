//===- Calibration.cpp - fit a hardware profile to this host's timings ----===//
#include "ditc/CostModel/Calibration.h"

#include "ditc/CostModel/CostModel.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using nlohmann::json;

namespace ditc {

LinkClass fitCollective(CollectiveKind kind,
                        const std::vector<TimedCollective> &samples,
                        double *fitError) {
  // The model's own formula, split into its latency coefficient (seconds
  // per unit of latency) and its bytes coefficient (bytes over a bandwidth
  // of 1): t = a·alpha + b·gamma, gamma = 1 / bandwidth.
  auto coefficients = [&](const TimedCollective &s) {
    double a = collectiveSeconds(kind, 0, s.ranks, {1.0, 1.0}, 1.0);
    double b = collectiveSeconds(kind, s.bytes, s.ranks, {1.0, 0.0}, 1.0);
    return std::make_pair(a, b);
  };
  // Weighted least squares: minimize sum w²(a·alpha + b·gamma - t)², with
  // alpha >= 0. With w = 1/t the residuals are relative.
  auto fit = [&](bool relative, double &alpha, double &gamma) {
    double aa = 0, ab = 0, bb = 0, at = 0, bt = 0;
    for (const TimedCollective &s : samples) {
      auto [a, b] = coefficients(s);
      double w2 = relative ? 1.0 / (s.seconds * s.seconds) : 1.0;
      aa += w2 * a * a, ab += w2 * a * b, bb += w2 * b * b;
      at += w2 * a * s.seconds, bt += w2 * b * s.seconds;
    }
    double det = aa * bb - ab * ab;
    alpha = det > 0 ? (at * bb - bt * ab) / det : 0;
    gamma = det > 0 ? (aa * bt - ab * at) / det : 0;
    if (alpha < 0 || det <= 0) {
      alpha = 0;
      gamma = bb > 0 ? bt / bb : 0;
    }
  };
  double alpha = 0, gamma = 0;
  fit(/*relative=*/true, alpha, gamma);
  // On a busy host the small messages' times scatter; when they leave no
  // positive slope, the large messages (absolute residuals) still fix the
  // bandwidth.
  if (!(gamma > 0))
    fit(/*relative=*/false, alpha, gamma);
  if (!(gamma > 0) || !std::isfinite(gamma))
    throw BadInput(std::string("the timings of ") + collectiveKindName(kind) +
                   " do not grow with the message size, so no bandwidth "
                   "fits them; calibrate again on a quieter host");
  if (fitError) {
    *fitError = 0;
    for (const TimedCollective &s : samples) {
      auto [a, b] = coefficients(s);
      *fitError = std::max(*fitError,
                           std::fabs(a * alpha + b * gamma - s.seconds) / s.seconds);
    }
  }
  return {1.0 / gamma, alpha};
}

HostRates::Skew fitSkew(const std::vector<TimedSkew> &samples) {
  auto excess = [](const TimedSkew &s) {
    return std::max(0.0, s.lockstepSeconds - s.freeSeconds - s.barrierSeconds);
  };
  // Least squares of e = w + f·c; where that leaves a term negative, the
  // best fit with that term 0.
  double n = 0, c = 0, cc = 0, e = 0, ce = 0;
  for (const TimedSkew &s : samples) {
    double wait = excess(s);
    n += 1, c += s.freeSeconds, cc += s.freeSeconds * s.freeSeconds;
    e += wait, ce += s.freeSeconds * wait;
  }
  HostRates::Skew out;
  if (n == 0)
    return out;
  double det = n * cc - c * c;
  if (det > 0) {
    out.fraction = (n * ce - c * e) / det;
    out.perSync = (e - out.fraction * c) / n;
  }
  if (det <= 0 || out.fraction < 0) {
    out.fraction = 0;
    out.perSync = e / n;
  } else if (out.perSync < 0) {
    out.perSync = 0;
    out.fraction = cc > 0 ? ce / cc : 0;
  }
  return out;
}

namespace {

constexpr CollectiveKind kKinds[] = {
    CollectiveKind::AllReduce, CollectiveKind::AllGather,
    CollectiveKind::AllToAll, CollectiveKind::SendRecv,
    CollectiveKind::RingShift};

double positive(const JsonObject &object, const std::string &field) {
  if (!object.has(field))
    object.fail(field, "is missing");
  const json &value = object.raw().at(field);
  if (!value.is_number() || !std::isfinite(value.get<double>()) ||
      value.get<double>() <= 0)
    object.fail(field, "is " + describeJson(value) + ", expected a positive number");
  return value.get<double>();
}

std::string formatted(const char *format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

} // namespace

CalibratedProfile profileFromCalibration(const std::string &text,
                                         const std::string &file,
                                         const std::string &name) {
  json root = JsonObject::parseText(text, file);
  if (!root.is_object())
    badFile(file, "is " + describeJson(root) + ", expected dit-calibrate's "
                                               "measurements (an object)");
  JsonObject top(file, &root);
  std::string format = top.getString("format");
  if (format != "ditc-calibration/1")
    top.fail("format", "is '" + format + "', expected ditc-calibration/1");
  std::string host = top.getString("host"), time = top.getString("time"),
              method = top.getString("method");
  int64_t cores = top.getInt("cores", 1, 1 << 20);
  std::string measured = "measured by ditc calibrate on " + host + " at " + time;

  CalibratedProfile out;
  HardwareProfile &p = out.profile;
  auto &src = out.sources;
  p.name = name;
  p.description = "CPU host " + host + " (" + std::to_string(cores) +
                  " cores), dit-run ranks on one host, " + measured;
  p.host.emplace();
  p.host->cores = cores;
  src["host.cores"] = measured + ": the CPUs this process may run on";
  p.gpusPerNode = cores;
  src["gpus_per_node"] = measured + ": one rank per usable core; more ranks "
                         "on the host time-share it (pass --gpus-per-node)";

  double bestGemm = 0, bestAttention = 0, bestBandwidth = 0;
  for (const JsonObject &entry : top.getObjectList(
           "compute", "is not a non-empty list of per-thread-count rates",
           /*allowEmpty=*/false)) {
    int64_t t = entry.getInt("threads", 1, 1024);
    if (p.host->gemmFlops.count(t))
      entry.fail("threads", "repeats an earlier entry's thread count");
    double gemm = positive(entry, "gemm_flops_per_s");
    double attention = positive(entry, "attention_flops_per_s");
    double bandwidth = positive(entry, "elementwise_bytes_per_s");
    p.host->gemmFlops[t] = gemm;
    p.host->attentionFlops[t] = attention;
    p.host->elementwiseBandwidth[t] = bandwidth;
    std::string key = "host.threads." + std::to_string(t) + ".";
    std::string how = measured + " with " + std::to_string(t) + " thread" +
                      (t == 1 ? "" : "s") + ": " + method;
    src[key + "gemm_flops"] = how;
    src[key + "attention_flops"] = how;
    src[key + "elementwise_bandwidth"] = how;
    // Measurements kept before dit-calibrate timed the element-wise ops
    // lack it; the profile then prices them by their bytes, as before.
    if (entry.has("elementwise_elements_per_s")) {
      p.host->elementwiseFlops[t] = positive(entry, "elementwise_elements_per_s");
      src[key + "elementwise_flops"] = how;
    }
    bestGemm = std::max(bestGemm, gemm);
    bestAttention = std::max(bestAttention, attention);
    bestBandwidth = std::max(bestBandwidth, bandwidth);
  }
  if (!p.host->gemmFlops.count(1))
    top.fail("compute", "has no entry for 1 thread; ranks that time-share "
                        "the cores are priced from it");
  if (!p.host->elementwiseFlops.empty() &&
      p.host->elementwiseFlops.size() != p.host->gemmFlops.size())
    top.fail("compute", "gives elementwise_elements_per_s for some thread "
                        "counts but not all");

  // The summary fields, for readers and for tools that ignore "host": the
  // best rank alone, with efficiencies relative to its GEMM rate.
  p.peakFlopsFp32 = p.peakFlopsBf16 = bestGemm;
  src["peak_flops_fp32"] = measured + ": the best GEMM rate of one rank "
                           "(host.threads gives it per thread count)";
  src["peak_flops_bf16"] = measured + ": as peak_flops_fp32, since dit-run "
                           "computes bf16 plans with float32 CPU kernels";
  p.gemmEfficiency = 1;
  src["gemm"] = "measured: the peak is the achieved GEMM rate";
  p.attentionEfficiency = std::min(1.0, bestAttention / bestGemm);
  src["attention"] = measured + ": the best attention rate over the best "
                     "GEMM rate (at most 1)";
  p.memoryBandwidth = bestBandwidth;
  src["memory_bandwidth"] = measured + ": the best elementwise rate of one rank";
  p.elementwiseEfficiency = 1;
  src["elementwise"] = "measured: the bandwidth is the achieved one";
  double memory = top.raw().contains("memory_bytes") ? positive(top, "memory_bytes") : 0;
  if (memory <= 0)
    top.fail("memory_bytes", "is missing");
  p.memoryBytes = memory;
  src["memory_bytes"] = measured + ": physical memory (all ranks of the host "
                        "share it)";

  // Collectives: one fit per kind over every size and rank count.
  std::map<CollectiveKind, std::vector<TimedCollective>> byKind;
  for (const JsonObject &entry : top.getObjectList(
           "collectives", "is not a list of timed collectives", /*allowEmpty=*/true)) {
    std::string kindName = entry.getString("kind");
    const CollectiveKind *kind =
        std::find_if(std::begin(kKinds), std::end(kKinds), [&](CollectiveKind k) {
          return kindName == collectiveKindName(k);
        });
    if (kind == std::end(kKinds))
      entry.fail("kind", "is '" + kindName + "', expected all_reduce, "
                         "all_gather, all_to_all, send_recv or ring_shift");
    TimedCollective sample;
    sample.kind = *kind;
    sample.ranks = entry.getInt("ranks", 2, 1 << 20);
    sample.bytes = positive(entry, "bytes");
    sample.seconds = positive(entry, "seconds");
    byKind[*kind].push_back(sample);
  }
  for (CollectiveKind kind : kKinds) {
    auto it = byKind.find(kind);
    if (it == byKind.end() || it->second.size() < 2)
      top.fail("collectives", std::string("has fewer than two timings of ") +
                                  collectiveKindName(kind) +
                                  "; a latency and a bandwidth need two sizes");
    double error = 0;
    LinkClass link = fitCollective(kind, it->second, &error);
    p.host->collectives[kind] = link;
    std::string how = measured + ": dit-run's " + collectiveKindName(kind) +
                      " between local ranks, alpha and beta fitted to its "
                      "formula over " + std::to_string(it->second.size()) +
                      " timings (sizes and rank counts), worst fit error " +
                      formatted("%.0f%%", 100 * error);
    std::string key = std::string("host.collectives.") + collectiveKindName(kind) + ".";
    src[key + "bandwidth"] = how;
    src[key + "latency"] = how;
  }
  // Skew: optional, since measurements kept before dit-calibrate timed it
  // lack it; the model then adds no wait.
  if (top.has("skew")) {
    std::map<int64_t, std::vector<TimedSkew>> byRanks;
    for (const JsonObject &entry : top.getObjectList(
             "skew", "is not a list of skew timings", /*allowEmpty=*/true)) {
      TimedSkew sample;
      sample.ranks = entry.getInt("ranks", 2, 1024);
      entry.getInt("rows", 1, 1 << 20);
      entry.getInt("iterations", 1, 1 << 20);
      sample.freeSeconds = positive(entry, "free_seconds");
      sample.lockstepSeconds = positive(entry, "lockstep_seconds");
      sample.barrierSeconds = positive(entry, "barrier_seconds");
      byRanks[sample.ranks].push_back(sample);
    }
    for (auto &[ranks, samples] : byRanks) {
      HostRates::Skew skew = fitSkew(samples);
      if (skew.fraction > 10)
        top.fail("skew", "gives " + std::to_string(ranks) + " ranks a wait " +
                             formatted("%.1f", skew.fraction) +
                             " times their compute; calibrate again on a "
                             "quieter host");
      p.host->skew[ranks] = skew;
      std::string how =
          measured + ": " + std::to_string(ranks) + " ranks computing the same "
          "chunks with a barrier after each, against free-running; the wait "
          "beyond an idle barrier fitted as wait_per_sync + wait_fraction x "
          "compute over " + std::to_string(samples.size()) + " chunk lengths";
      std::string key = "host.skew." + std::to_string(ranks) + ".";
      src[key + "wait_per_sync"] = how;
      src[key + "wait_fraction"] = how;
    }
  }
  const LinkClass &p2p = p.host->collectives[CollectiveKind::SendRecv];
  p.intraNode = p2p;
  src["intra_node_bandwidth"] = src["intra_node_latency"] =
      measured + ": the send_recv fit (host.collectives gives each kind its own)";
  p.interNode = p2p;
  src["inter_node_bandwidth"] = src["inter_node_latency"] =
      "assumption: not measured (ditc calibrate times one host); the loopback "
      "send_recv figures";
  for (CollectiveKind kind : kKinds) {
    p.collectiveEfficiency[kind] = 1;
    src[collectiveKindName(kind)] =
        "measured: host.collectives holds this kind's achieved latency and "
        "bandwidth";
  }
  p.ringOverlap = 0;
  src["ring_overlap"] = "assumption, not measured: as cpu-local, dit-run "
                        "waits for each K/V hop before it computes on it";
  return out;
}

} // namespace ditc
