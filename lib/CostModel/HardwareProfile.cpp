//===- HardwareProfile.cpp - read and check hardware profiles -------------===//
#include "ditc/CostModel/HardwareProfile.h"

#include "ditc/Importer/ModelSpec.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Spelling.h"
#include "ditc/Support/Utf8.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <sstream>

using nlohmann::json;

namespace ditc {

const char *collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce: return "all_reduce";
  case CollectiveKind::AllGather: return "all_gather";
  case CollectiveKind::AllToAll: return "all_to_all";
  case CollectiveKind::SendRecv: return "send_recv";
  case CollectiveKind::RingShift: return "ring_shift";
  }
  return "?";
}

namespace {

constexpr CollectiveKind kCollectiveKinds[] = {
    CollectiveKind::AllReduce, CollectiveKind::AllGather,
    CollectiveKind::AllToAll, CollectiveKind::SendRecv,
    CollectiveKind::RingShift};

/// Bounds that no real machine reaches, so a typo (bytes for gigabytes, a
/// negative sign) is refused rather than priced.
constexpr double kMaxFlops = 1e18;       // an exaFLOP/s per GPU
constexpr double kMaxBytes = 1e15;       // a petabyte of memory
constexpr double kMaxBandwidth = 1e14;   // 100 TB/s
constexpr double kMaxLatency = 1.0;      // a second per collective step
constexpr double kMaxKeys = 1e9;         // keys per attention call
constexpr double kMaxMergeBytes = 1024;  // bytes per merged output element
constexpr double kMaxSkewFraction = 10;  // a wait ten times the compute
/// And bounds below that no real machine falls under, so a rate that is
/// zero in all but name (1e-320, a denormal) is refused rather than turned
/// into infinite or NaN times: every time the model prints stays finite.
constexpr double kMinFlops = 1e6;        // a megaFLOP/s
constexpr double kMinBytes = 1e6;        // a megabyte of memory
constexpr double kMinBandwidth = 1e6;    // a megabyte per second
constexpr double kMinEfficiency = 1e-3;  // a thousandth of a peak

/// A number field {value, source}: the value within (min, max], and a
/// non-empty source, since every profile number must say where it is from.
double sourcedNumber(const JsonObject &object, const std::string &field,
                     double min, double max, bool minInclusive = false) {
  JsonObject entry = object.getObject(field);
  if (!entry.has("value"))
    entry.fail("value", "is missing; every profile number is {\"value\": "
                        "N, \"source\": \"...\"}");
  const json &raw = entry.raw().at("value");
  std::ostringstream allowed;
  allowed << "a number in " << (minInclusive ? "[" : "(") << min << ", "
          << max << "]";
  if (!raw.is_number())
    entry.fail("value", "is " + describeJson(raw) + ", expected " + allowed.str());
  double value = raw.get<double>();
  if (!std::isfinite(value) || value > max ||
      (minInclusive ? value < min : value <= min))
    entry.fail("value", "is " + raw.dump() + ", expected " + allowed.str());
  std::string source = entry.getString("source");
  if (source.empty())
    entry.fail("source", "is empty; say which datasheet, measurement or "
                         "assumption the number comes from");
  return value;
}

/// "2" -> 2: a count written as an object key of `section` (named
/// `sectionName`, e.g. host.threads), a whole number in [min, 1024]; `noun`
/// names what it counts.
int64_t countKey(const JsonObject &section, const char *sectionName,
                 const std::string &key, int64_t min, const char *noun) {
  bool digits = !key.empty() && key.size() <= 4 && key[0] != '0' &&
                key.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoll(key) < min || std::stoll(key) > 1024)
    section.fail(key, std::string("is not a ") + noun + " count; the keys of " +
                          sectionName + " are whole numbers in [" +
                          std::to_string(min) + ", 1024]");
  return std::stoll(key);
}

/// The optional "host" section of a CPU host profile (HostRates).
HostRates parseHost(const JsonObject &host) {
  HostRates out;
  double cores = sourcedNumber(host, "cores", 1, 1 << 20, /*minInclusive=*/true);
  out.cores = int64_t(cores);
  if (double(out.cores) != cores)
    host.getObject("cores").fail("value", "is not a whole number");
  JsonObject threads = host.getObject("threads");
  if (!threads.raw().contains("1"))
    host.fail("threads", "lacks \"1\"; the rates of one thread are needed "
                         "for ranks that time-share the cores");
  for (auto &[key, value] : threads.raw().items()) {
    int64_t t = countKey(threads, "host.threads", key, 1, "thread");
    JsonObject rates = threads.getObject(key);
    out.gemmFlops[t] = sourcedNumber(rates, "gemm_flops", kMinFlops, kMaxFlops, /*minInclusive=*/true);
    out.attentionFlops[t] = sourcedNumber(rates, "attention_flops", kMinFlops, kMaxFlops, /*minInclusive=*/true);
    out.elementwiseBandwidth[t] =
        sourcedNumber(rates, "elementwise_bandwidth", kMinBandwidth, kMaxBandwidth,
                      /*minInclusive=*/true);
    if (rates.has("elementwise_flops"))
      out.elementwiseFlops[t] = sourcedNumber(rates, "elementwise_flops", kMinFlops, kMaxFlops, /*minInclusive=*/true);
  }
  if (!out.elementwiseFlops.empty() && !out.elementwiseFlops.count(1))
    host.fail("threads", "gives elementwise_flops for some thread counts but "
                         "not for 1; give it for every count or none");
  if (host.has("collectives")) {
    JsonObject collectives = host.getObject("collectives");
    for (auto &[key, value] : collectives.raw().items()) {
      const CollectiveKind *kind = std::find_if(
          std::begin(kCollectiveKinds), std::end(kCollectiveKinds),
          [&](CollectiveKind k) { return key == collectiveKindName(k); });
      if (kind == std::end(kCollectiveKinds))
        collectives.fail(key, "is not a collective kind; expected all_reduce, "
                              "all_gather, all_to_all, send_recv or ring_shift");
      JsonObject link = collectives.getObject(key);
      out.collectives[*kind] = {
          sourcedNumber(link, "bandwidth", kMinBandwidth, kMaxBandwidth, /*minInclusive=*/true),
          sourcedNumber(link, "latency", 0, kMaxLatency, /*minInclusive=*/true)};
    }
  }
  if (host.has("skew")) {
    JsonObject skew = host.getObject("skew");
    for (auto &[key, value] : skew.raw().items()) {
      int64_t ranks = countKey(skew, "host.skew", key, 2, "rank");
      JsonObject wait = skew.getObject(key);
      out.skew[ranks] = {
          sourcedNumber(wait, "wait_per_sync", 0, kMaxLatency, /*minInclusive=*/true),
          sourcedNumber(wait, "wait_fraction", 0, kMaxSkewFraction,
                        /*minInclusive=*/true)};
    }
  }
  return out;
}

HardwareProfile parseProfile(const JsonObject &object, const std::string &name) {
  HardwareProfile p;
  p.name = name;
  p.file = object.file();
  p.description = object.getOptionalString("description").value_or("");
  p.gpusPerNode = int64_t(sourcedNumber(object, "gpus_per_node", 1, 1 << 20,
                                        /*minInclusive=*/true));
  if (double(p.gpusPerNode) !=
      object.raw().at("gpus_per_node").at("value").get<double>())
    object.getObject("gpus_per_node").fail("value", "is not a whole number");
  p.peakFlopsBf16 = sourcedNumber(object, "peak_flops_bf16", kMinFlops, kMaxFlops, /*minInclusive=*/true);
  p.peakFlopsFp32 = sourcedNumber(object, "peak_flops_fp32", kMinFlops, kMaxFlops, /*minInclusive=*/true);
  p.memoryBytes = sourcedNumber(object, "memory_bytes", kMinBytes, kMaxBytes, /*minInclusive=*/true);
  p.memoryBandwidth = sourcedNumber(object, "memory_bandwidth", kMinBandwidth, kMaxBandwidth,
                    /*minInclusive=*/true);
  p.intraNode.bandwidth =
      sourcedNumber(object, "intra_node_bandwidth", kMinBandwidth, kMaxBandwidth,
                    /*minInclusive=*/true);
  p.intraNode.latency = sourcedNumber(object, "intra_node_latency", 0,
                                      kMaxLatency, /*minInclusive=*/true);
  p.interNode.bandwidth =
      sourcedNumber(object, "inter_node_bandwidth", kMinBandwidth, kMaxBandwidth,
                    /*minInclusive=*/true);
  p.interNode.latency = sourcedNumber(object, "inter_node_latency", 0,
                                      kMaxLatency, /*minInclusive=*/true);
  JsonObject efficiency = object.getObject("efficiency");
  p.gemmEfficiency = sourcedNumber(efficiency, "gemm", kMinEfficiency, 1, /*minInclusive=*/true);
  p.attentionEfficiency = sourcedNumber(efficiency, "attention", kMinEfficiency, 1, /*minInclusive=*/true);
  p.elementwiseEfficiency = sourcedNumber(efficiency, "elementwise", kMinEfficiency, 1, /*minInclusive=*/true);
  for (CollectiveKind kind : kCollectiveKinds)
    p.collectiveEfficiency[kind] =
        sourcedNumber(efficiency, collectiveKindName(kind), kMinEfficiency, 1,
                      /*minInclusive=*/true);
  p.ringOverlap = sourcedNumber(efficiency, "ring_overlap", 0, 1,
                                /*minInclusive=*/true);
  p.attentionHalfKeys = sourcedNumber(object, "attention_half_keys", 0,
                                      kMaxKeys, /*minInclusive=*/true);
  p.ringMergeBytes = sourcedNumber(object, "ring_merge_bytes", 0, kMaxMergeBytes,
                                   /*minInclusive=*/true);
  p.ringHopOverhead = sourcedNumber(object, "ring_hop_overhead", 0, kMaxLatency,
                                    /*minInclusive=*/true);
  // Optional, so that profiles written before them still load: absent,
  // the model prices a compiled engine with no host work between steps.
  if (object.has("kernel_launch"))
    p.kernelLaunch = sourcedNumber(object, "kernel_launch", 0, kMaxLatency,
                                   /*minInclusive=*/true);
  if (object.has("step_host_overhead"))
    p.stepHostOverhead = sourcedNumber(object, "step_host_overhead", 0, kMaxLatency,
                                       /*minInclusive=*/true);
  if (object.has("host_to_device_bandwidth"))
    p.hostToDeviceBandwidth = sourcedNumber(object, "host_to_device_bandwidth", kMinBandwidth,
                                            kMaxBandwidth, /*minInclusive=*/true);
  if (object.has("host"))
    p.host = parseHost(object.getObject("host"));
  return p;
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

std::vector<HardwareProfile> parseHardwareProfiles(const std::string &text,
                                                   const std::string &file) {
  json root = JsonObject::parseText(text, file);
  if (!root.is_object())
    badFile(file, "is " + describeJson(root) +
                      ", expected an object {\"profiles\": {NAME: {...}}}");
  JsonObject top(file, &root);
  JsonObject profiles = top.getObject("profiles");
  if (profiles.raw().empty())
    top.fail("profiles", "is empty, expected at least one profile");
  std::vector<HardwareProfile> out;
  for (auto &[name, value] : profiles.raw().items()) {
    if (name.empty())
      profiles.fail(name, "has an empty profile name");
    out.push_back(parseProfile(profiles.getObject(name), name));
  }
  return out;
}

std::string bundledHardwareFile() {
  return bundledModelsDir() + "/hardware/profiles.json";
}

std::vector<std::string> bundledHardwareNames() {
  std::string file = bundledHardwareFile();
  std::vector<std::string> names;
  for (const HardwareProfile &p : parseHardwareProfiles(
           readRegularFile(file, kMaxJsonFileBytes, {false, "hardware profiles"}), file))
    names.push_back(p.name);
  return names;
}

HardwareProfile loadHardwareProfile(const std::string &nameOrFile) {
  bool endsInJson = nameOrFile.size() > 5 &&
                    nameOrFile.compare(nameOrFile.size() - 5, 5, ".json") == 0;
  bool looksLikePath = nameOrFile.find('/') != std::string::npos || endsInJson;
  if (looksLikePath || isRegularFile(nameOrFile)) {
    std::string text =
        readRegularFile(nameOrFile, kMaxJsonFileBytes, {false, "hardware profile"});
    std::vector<HardwareProfile> profiles =
        parseHardwareProfiles(text, escapeInvalidUtf8(nameOrFile));
    if (profiles.size() != 1)
      badFile(escapeInvalidUtf8(nameOrFile),
              "holds " + std::to_string(profiles.size()) +
                  " profiles; pass a bundled name to choose one, or a file "
                  "with exactly one");
    return profiles.front();
  }
  std::string file = bundledHardwareFile();
  std::vector<HardwareProfile> profiles = parseHardwareProfiles(
      readRegularFile(file, kMaxJsonFileBytes, {false, "hardware profiles"}), file);
  std::vector<std::string> names;
  for (const HardwareProfile &p : profiles) {
    if (equalsIgnoringCase(p.name, nameOrFile))
      return p;
    names.push_back(p.name);
  }
  badFlag("--hardware", escapeInvalidUtf8(nameOrFile),
          "--hardware '" + escapeInvalidUtf8(nameOrFile) +
              "' is neither a known profile nor a file" +
              nearestAndKnown(nameOrFile, names, "known profiles"));
}

std::string hardwareProfileToJson(
    const HardwareProfile &p, const std::map<std::string, std::string> &sources) {
  auto number = [&](const std::string &field, double value) {
    auto it = sources.find(field);
    return json{{"value", value},
                {"source", it != sources.end() ? it->second : "assumption"}};
  };
  json profile = {
      {"description", p.description},
      {"gpus_per_node", number("gpus_per_node", double(p.gpusPerNode))},
      {"peak_flops_bf16", number("peak_flops_bf16", p.peakFlopsBf16)},
      {"peak_flops_fp32", number("peak_flops_fp32", p.peakFlopsFp32)},
      {"memory_bytes", number("memory_bytes", p.memoryBytes)},
      {"memory_bandwidth", number("memory_bandwidth", p.memoryBandwidth)},
      {"intra_node_bandwidth", number("intra_node_bandwidth", p.intraNode.bandwidth)},
      {"intra_node_latency", number("intra_node_latency", p.intraNode.latency)},
      {"inter_node_bandwidth", number("inter_node_bandwidth", p.interNode.bandwidth)},
      {"inter_node_latency", number("inter_node_latency", p.interNode.latency)},
      {"attention_half_keys", number("attention_half_keys", p.attentionHalfKeys)},
      {"ring_merge_bytes", number("ring_merge_bytes", p.ringMergeBytes)},
      {"ring_hop_overhead", number("ring_hop_overhead", p.ringHopOverhead)},
      {"kernel_launch", number("kernel_launch", p.kernelLaunch)},
      {"step_host_overhead", number("step_host_overhead", p.stepHostOverhead)},
  };
  // 0 is "unknown", which the range refuses: leave it out.
  if (p.hostToDeviceBandwidth > 0)
    profile["host_to_device_bandwidth"] =
        number("host_to_device_bandwidth", p.hostToDeviceBandwidth);
  json efficiency = {
      {"gemm", number("gemm", p.gemmEfficiency)},
      {"attention", number("attention", p.attentionEfficiency)},
      {"elementwise", number("elementwise", p.elementwiseEfficiency)},
      {"ring_overlap", number("ring_overlap", p.ringOverlap)}};
  for (auto &[kind, value] : p.collectiveEfficiency)
    efficiency[collectiveKindName(kind)] = number(collectiveKindName(kind), value);
  profile["efficiency"] = efficiency;
  if (p.host) {
    json threads = json::object();
    for (auto &[t, flops] : p.host->gemmFlops) {
      std::string at = "host.threads." + std::to_string(t) + ".";
      auto rate = [&](const std::map<int64_t, double> &rates) {
        auto it = rates.find(t);
        return it == rates.end() ? 0.0 : it->second;
      };
      threads[std::to_string(t)] = {
          {"gemm_flops", number(at + "gemm_flops", flops)},
          {"attention_flops", number(at + "attention_flops", rate(p.host->attentionFlops))},
          {"elementwise_bandwidth",
           number(at + "elementwise_bandwidth", rate(p.host->elementwiseBandwidth))}};
      if (p.host->elementwiseFlops.count(t))
        threads[std::to_string(t)]["elementwise_flops"] =
            number(at + "elementwise_flops", rate(p.host->elementwiseFlops));
    }
    json collectives = json::object();
    for (auto &[kind, link] : p.host->collectives) {
      std::string at = std::string("host.collectives.") + collectiveKindName(kind) + ".";
      collectives[collectiveKindName(kind)] = {
          {"bandwidth", number(at + "bandwidth", link.bandwidth)},
          {"latency", number(at + "latency", link.latency)}};
    }
    profile["host"] = {{"cores", number("host.cores", double(p.host->cores))},
                       {"threads", threads},
                       {"collectives", collectives}};
    if (!p.host->skew.empty()) {
      json skew = json::object();
      for (auto &[ranks, wait] : p.host->skew) {
        std::string at = "host.skew." + std::to_string(ranks) + ".";
        skew[std::to_string(ranks)] = {
            {"wait_per_sync", number(at + "wait_per_sync", wait.perSync)},
            {"wait_fraction", number(at + "wait_fraction", wait.fraction)}};
      }
      profile["host"]["skew"] = skew;
    }
  }
  json root = {{"format", "ditc-hardware-profiles/1"},
               {"profiles", {{p.name, profile}}}};
  return root.dump(2) + "\n";
}

} // namespace ditc
