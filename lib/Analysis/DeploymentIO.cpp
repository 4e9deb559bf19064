//===- DeploymentIO.cpp - deployments from flags and from JSON files ------===//
#include "ditc/Analysis/Deployment.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Spelling.h"

#include <set>
#include <sstream>

namespace ditc {

using nlohmann::json;

namespace {

constexpr int64_t kMaxDegree = kMaxParallelDegree;
constexpr int64_t kMaxRank = 1 << 20;
/// A real pipeline sends a handful of signals between its three components;
/// thousands would only repeat the same few pairs.
constexpr size_t kMaxSignals = 4096;

/// Refuses degrees whose product exceeds kMaxRank ranks, before anything
/// sizes a rank table by it.
void checkWorldBound(const std::string &where, const Degrees &d) {
  int64_t ranks = 1;
  for (Axis axis : kAllAxes) {
    if (d[axis] > kMaxRank / ranks)
      throw BadInput(where + ": the degrees " + d.describe() +
                     " multiply to more than " + std::to_string(kMaxRank) +
                     " ranks");
    ranks *= d[axis];
  }
}

std::string backendNames() {
  std::string names;
  for (const AttentionBackend &backend : knownAttentionBackends())
    names += std::string(names.empty() ? "" : ", ") + backend.name;
  return names;
}

/// Parses "a,b,c" into integers; throws BadInput naming the flag.
std::vector<int64_t> parsePartition(const std::string &flag,
                                    const std::string &text,
                                    const char *counts = "block counts") {
  std::vector<int64_t> values;
  std::stringstream stream(text);
  std::string item;
  auto refuse = [&] {
    badFlag(flag, text,
            flag + " value '" + text +
                "' is not a comma-separated list of " + counts +
                " (e.g. 10,10,10,10)");
  };
  if (text.empty() || text.back() == ',')
    refuse();
  while (std::getline(stream, item, ',')) {
    if (item.empty())
      refuse();
    values.push_back(parseIntegerFlag(flag, item, -kMaxRank, kMaxRank));
  }
  return values;
}

} // namespace

Deployment deploymentFromFlags(const ParallelFlags &flags) {
  Deployment deployment;
  Placement transformer;
  transformer.component = "transformer";
  Degrees &d = transformer.degrees;
  d[Axis::TP] = flags.tp.value_or(1);
  d[Axis::CFG] = flags.cfg.value_or(1);
  d[Axis::PP] = flags.pp.value_or(1);
  d[Axis::DP] = flags.dp.value_or(1);
  d[Axis::Ulysses] = flags.ulysses.value_or(1);
  d[Axis::Ring] = flags.ring.value_or(1);
  d[Axis::KVGather] = flags.kvGather.value_or(1);

  if (flags.sp) {
    int64_t sp = *flags.sp;
    bool explicitSp = flags.ulysses || flags.ring || flags.kvGather;
    if (explicitSp) {
      if (d.sequenceShards() != sp)
        badFlag("--sp-degree", std::to_string(sp),
                "--sp-degree " + std::to_string(sp) +
                    " disagrees with --ulysses-degree " +
                    std::to_string(d[Axis::Ulysses]) + " x --ring-degree " +
                    std::to_string(d[Axis::Ring]) + " x --kv-gather-degree " +
                    std::to_string(d[Axis::KVGather]) + " = " +
                    std::to_string(d.sequenceShards()));
    } else if (sp == 2) {
      // Two ranks is K/V-gather's measured-win zone.
      d[Axis::KVGather] = 2;
      deployment.notes.push_back(
          {"sp-degree", "--sp-degree 2 resolves to kv_gather_degree 2"});
    } else if (sp > 2) {
      d[Axis::Ulysses] = sp;
      deployment.notes.push_back(
          {"sp-degree", "--sp-degree " + std::to_string(sp) +
                            " resolves to ulysses_degree " +
                            std::to_string(sp)});
    }
  }

  if (flags.ppPartition) {
    transformer.ppPartition =
        parsePartition("--pp-layer-partition", *flags.ppPartition);
    // A partition lists one entry per stage, so it already says how many
    // stages there are; a separate --pp-size only has to agree with it.
    if (!flags.pp) {
      if (transformer.ppPartition.size() > size_t(kMaxDegree))
        badFlag("--pp-layer-partition", *flags.ppPartition,
                "--pp-layer-partition has " +
                    std::to_string(transformer.ppPartition.size()) +
                    " entries; at most " + std::to_string(kMaxDegree) +
                    " pipeline stages are allowed");
      d[Axis::PP] = int64_t(transformer.ppPartition.size());
      deployment.notes.push_back(
          {"pp-layer-partition",
           "--pp-layer-partition " + *flags.ppPartition + " gives pp_size " +
               std::to_string(d[Axis::PP]) + " (one stage per entry)"});
    }
  }
  checkWorldBound("command line", d);
  if (flags.backend) {
    if (!findAttentionBackend(*flags.backend))
      badFlag("--attention-backend", *flags.backend,
              "--attention-backend value '" + *flags.backend +
                  "' is not known; allowed: " + backendNames());
    transformer.backend = *flags.backend;
  }
  if (flags.meshOrder)
    deployment.meshOrder =
        parseMeshOrder("command line: --mesh-order", *flags.meshOrder);
  transformer.instances = defaultInstances(d, deployment.meshOrder);
  transformer.offload = flags.expertOffload;
  deployment.numGpus = flags.numGpus.value_or(d.worldSize());
  deployment.nnodes = flags.nnodes;
  deployment.gpusPerNode = flags.gpusPerNode;
  deployment.placements.push_back(std::move(transformer));
  if (flags.vaeParallelSize || flags.vaeRowSplit) {
    Placement vae;
    vae.component = "vae";
    if (flags.vaeRowSplit) {
      vae.vaeRowSplit = parsePartition("--vae-row-split", *flags.vaeRowSplit,
                                       "latent row counts");
      for (int64_t rows : vae.vaeRowSplit)
        if (rows < 0)
          badFlag("--vae-row-split", *flags.vaeRowSplit,
                  "--vae-row-split value '" + *flags.vaeRowSplit +
                      "' lists a negative row count");
    }
    // Like --pp-layer-partition, a split says how many bands there are.
    vae.vaeParallelSize = flags.vaeParallelSize.value_or(
        vae.vaeRowSplit.empty() ? 1 : int64_t(vae.vaeRowSplit.size()));
    deployment.placements.push_back(std::move(vae));
  }
  if (flags.textEncoderTp || flags.textEncoderOffload) {
    Placement encoder;
    encoder.component = "text_encoder";
    encoder.degrees[Axis::TP] = flags.textEncoderTp.value_or(1);
    encoder.offload = flags.textEncoderOffload;
    deployment.placements.push_back(std::move(encoder));
  }
  return deployment;
}

namespace {

/// Rejects keys outside `allowed`, naming the key's full path and the
/// allowed key nearest to it.
void checkKeys(const JsonObject &object, const std::set<std::string> &allowed) {
  for (auto it = object.raw().begin(); it != object.raw().end(); ++it) {
    if (allowed.count(it.key()))
      continue;
    std::vector<std::string> names(allowed.begin(), allowed.end());
    throw BadInput(object.file() + ": unknown key '" +
                       object.keyPath(it.key()) + "'" +
                       nearestAndKnown(it.key(), names, "allowed"),
                   InputLocation{object.file(), object.keyPath(it.key()),
                                 shortValueText(it.value())});
  }
}

/// sp_size once meant two things: sequence parallelism, and (Wan2.2) the
/// ranks that split guidance rows. CFG now has its own axis, so a file that
/// still says sp_size is refused with where each meaning went, rather than
/// guessed at.
void refuseSpSize(const JsonObject &object) {
  if (object.raw().contains("sp_size"))
    throw BadInput(
        object.file() + ": key '" + object.keyPath("sp_size") +
            "' is no longer read: CFG parallelism moved to 'cfg_size' (a "
            "guidance split written as sp_size: 2 is now cfg_size: 2), and "
            "sequence parallelism is 'ulysses_degree' and 'ring_degree' (or "
            "'kv_gather_degree')",
        InputLocation{object.file(), object.keyPath("sp_size"),
                      shortValueText(object.raw().at("sp_size"))});
}

/// components.vae: the VAE is split by bands of latent rows only (patch
/// parallelism), so it takes the band count, an optional uneven split and
/// optional rank lists, one per transformer replica.
Placement readVaePlacement(const JsonObject &object) {
  checkKeys(object, {"vae_parallel_size", "row_split", "instances"});
  Placement placement;
  placement.component = "vae";
  placement.vaeParallelSize =
      object.getOptionalInt("vae_parallel_size", 1, kMaxDegree).value_or(1);
  if (object.has("row_split"))
    placement.vaeRowSplit = object.getIntList("row_split", 0, 1 << 20);
  if (object.has("instances")) {
    placement.instances = object.getIntLists("instances", 0, kMaxRank);
    placement.explicitInstances = true;
  }
  placement.degrees[Axis::DP] = std::max<int64_t>(1, int64_t(placement.instances.size()));
  return placement;
}

Placement readPlacement(const JsonObject &object, const std::string &name) {
  if (name == "vae")
    return readVaePlacement(object);
  refuseSpSize(object);
  std::set<std::string> keys = {"tp_size", "ulysses_degree", "ring_degree",
                                "kv_gather_degree", "cfg_size", "pp_size",
                                "attention_backend", "kv_cache", "instances",
                                "pp_partition"};
  // A text encoder may free its weights once the prompts are encoded, and
  // a two-expert transformer hold only its active expert.
  if (name == "text_encoder" || name == "transformer")
    keys.insert("offload");
  checkKeys(object, keys);
  Placement placement;
  placement.component = name;
  Degrees &d = placement.degrees;
  auto degree = [&](const char *key) {
    return object.getOptionalInt(key, 1, kMaxDegree).value_or(1);
  };
  d[Axis::TP] = degree("tp_size");
  d[Axis::Ulysses] = degree("ulysses_degree");
  d[Axis::Ring] = degree("ring_degree");
  d[Axis::KVGather] = degree("kv_gather_degree");
  d[Axis::CFG] = degree("cfg_size");
  d[Axis::PP] = degree("pp_size");
  if (auto backend = object.getOptionalString("attention_backend")) {
    if (!findAttentionBackend(*backend))
      object.fail("attention_backend", "is '" + *backend +
                                           "', not a known backend; allowed: " +
                                           backendNames());
    placement.backend = *backend;
  }
  if (auto cache = object.getOptionalString("kv_cache")) {
    if (*cache != "none" && *cache != "paged")
      object.fail("kv_cache", "is '" + *cache + "'; allowed: none, paged");
    placement.pagedKVCache = *cache == "paged";
  }
  checkWorldBound(object.file() + ": components." + name, d);
  if (object.has("pp_partition"))
    placement.ppPartition =
        object.getIntList("pp_partition", -kMaxRank, kMaxRank);
  if (name == "text_encoder" || name == "transformer")
    placement.offload = object.getOptionalBool("offload", false);
  if (object.has("instances")) {
    placement.instances = object.getIntLists("instances", 0, kMaxRank);
    placement.explicitInstances = true;
  } else if (name != "text_encoder") {
    // A text encoder without lists encodes on each transformer replica's
    // first tp_size ranks (textEncoderGroups).
    placement.instances = defaultInstances(d, {});
  }
  d[Axis::DP] = std::max<int64_t>(1, int64_t(placement.instances.size()));
  return placement;
}

} // namespace

DeploymentFile parseDeploymentFile(const std::string &path) {
  json root = JsonObject::parseFile(path);
  JsonObject top(path, &root);
  checkKeys(top, {"num_gpus", "nnodes", "gpus_per_node", "workload",
                  "components", "signals"});
  DeploymentFile file;
  Deployment &deployment = file.deployment;
  deployment.numGpus = top.getInt("num_gpus", 1, kMaxRank);
  deployment.nnodes = top.getOptionalInt("nnodes", 1, kMaxDegree);
  deployment.gpusPerNode = top.getOptionalInt("gpus_per_node", 1, kMaxDegree);

  if (top.has("workload")) {
    JsonObject workload = top.getObject("workload");
    checkKeys(workload, {"height", "width", "num_frames", "batch_size",
                         "guidance_scale", "num_inference_steps"});
    WorkloadOptions &w = file.workload;
    w.height = workload.getOptionalInt("height", 1, 65536);
    w.width = workload.getOptionalInt("width", 1, 65536);
    w.frames = workload.getOptionalInt("num_frames", 1, 100000);
    w.batch = workload.getOptionalInt("batch_size", 1, 4096);
    w.steps = workload.getOptionalInt("num_inference_steps", 1, 10000);
    if (workload.has("guidance_scale"))
      w.guidanceScale =
          workload.getOptionalDouble("guidance_scale", 1.0, -1e6, 1e6);
  }

  JsonObject components = top.getObject("components");
  for (auto it = components.raw().begin(); it != components.raw().end();
       ++it) {
    const std::vector<std::string> &known = knownComponents();
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      throw BadInput(path + ": unknown component '" +
                         components.keyPath(it.key()) + "'" +
                         nearestAndKnown(it.key(), known, "allowed"),
                     InputLocation{path, components.keyPath(it.key()), ""});
    deployment.placements.push_back(
        readPlacement(components.getObject(it.key()), it.key()));
  }
  if (!deployment.find("transformer"))
    throw BadInput(path + ": field 'components' has no 'transformer'; the "
                          "denoiser must be placed");

  if (top.has("signals")) {
    const json &signals = root.at("signals");
    if (!signals.is_array())
      top.fail("signals", "is " + describeJson(signals) +
                              ", expected a list of signals");
    if (signals.size() > kMaxSignals)
      top.fail("signals", "has " + std::to_string(signals.size()) +
                              " entries; a deployment may have at most " +
                              std::to_string(kMaxSignals) + " signals");
    for (size_t i = 0; i < signals.size(); ++i) {
      std::string key = "signals[" + std::to_string(i) + "]";
      if (!signals[i].is_object())
        top.fail(key, "is " + describeJson(signals[i]) +
                          ", expected an object");
      JsonObject entry(path, &signals[i], key + ".");
      checkKeys(entry, {"from", "to", "shard_dim"});
      Signal signal;
      signal.from = entry.getString("from");
      signal.to = entry.getString("to");
      for (const std::string *end : {&signal.from, &signal.to})
        if (!deployment.find(*end))
          entry.fail(end == &signal.from ? "from" : "to",
                     "is '" + *end + "', not a component of this deployment");
      signal.shardDim = entry.getOptionalInt("shard_dim", 0, 7);
      deployment.signals.push_back(signal);
    }
  }
  return file;
}

} // namespace ditc
