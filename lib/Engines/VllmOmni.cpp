//===- VllmOmni.cpp - vLLM-Omni: `vllm serve --omni` and DiffusionParallelConfig -===//
//
// vLLM-Omni configures a diffusion stage with DiffusionParallelConfig
// (vllm_omni/diffusion/data.py): sp is allgather_degree when that is above
// 1, else ulysses x ring; the world is pp x dp x tp x sp x cfg; and with
// --num-gpus, dp is inferred as num_gpus / (pp x tp x sp x cfg), which must
// divide. HSDP (FSDP2) overlays the ranks and refuses TP, DP and PP. The
// command line is `vllm serve MODEL --omni ...`; the Python config reads
// as JSON, {"DiffusionParallelConfig": {...}, "num_gpus": N}. Sources are
// at upstream main 10906e3a (docs/engines.md).
//
//===----------------------------------------------------------------------===//
#include "Engines.h"
#include "ditc/Engines/LaunchLine.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Spelling.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ditc::engines {

using nlohmann::json;

namespace {

/// The support matrix of docs/user_guide/diffusion_features.md:117-171 for
/// ditc's families (Wan: the Wan2.2 row; FLUX.1; SD3.5; Qwen-Image).
struct OmniSupport {
  bool listed, sp, cfg, tp, pp;
};
OmniSupport omniSupportOf(const std::string &family) {
  if (family == "wan")
    return {true, true, true, true, true};
  if (family == "qwen_image")
    return {true, true, true, true, false};
  if (family == "flux" || family == "sd3")
    return {true, false, true, true, false};
  return {false, false, false, false, false};
}

/// The parallel fields as vLLM-Omni's dataclass holds them.
struct OmniConfig {
  std::optional<int64_t> dp, numGpus, sp;
  int64_t pp = 1, tp = 1, ulysses = 1, ring = 1, allgather = 1, cfg = 1;
  bool hsdp = false;
  int64_t hsdpShard = -1, hsdpReplicate = 1;
  std::string ulyssesMode = "strict";
};

const FlagTable &omniFlags() {
  static const FlagTable table(
      "vLLM-Omni",
      {
          // Parallelism (serve.py:420-800 and vLLM's parser).
          {"--num-gpus"}, {"--usp", Arity::Value, "--ulysses-degree"}, {"--ulysses-degree"},
          {"--ulysses-mode"}, {"--ring", Arity::Value, "--ring-degree"}, {"--ring-degree"},
          {"--allgather-degree"},
          {"--use-hsdp", Arity::Switch}, {"--hsdp-shard-size"}, {"--hsdp-replicate-size"},
          {"--cfg-parallel-size"}, {"--vae-patch-parallel-size"},
          {"--text-encoder-tp-size"}, {"--vae-parallel-mode"},
          {"--tensor-parallel-size"}, {"-tp", Arity::Value, "--tensor-parallel-size"},
          {"--pipeline-parallel-size"}, {"-pp", Arity::Value, "--pipeline-parallel-size"},
          {"--data-parallel-size"}, {"-dp", Arity::Value, "--data-parallel-size"},
          {"--enable-expert-parallel", Arity::Switch},
          {"--ulysses-a2a-permute", Arity::Switch},
          {"--no-ulysses-a2a-permute", Arity::Switch},
          // Accepted and ignored (serve.py:216-864 and vLLM's server flags).
          {"--omni", Arity::Switch}, {"--model"}, {"--host"}, {"--port"},
          {"--served-model-name"}, {"--trust-remote-code", Arity::Switch},
          {"--max-num-seqs"}, {"--init-timeout"}, {"--stage-init-timeout"},
          {"--log-stats", Arity::Switch}, {"--stage-configs-path"}, {"--deploy-config"},
          {"--stage-overrides"}, {"--cache-backend"}, {"--cache-config"},
          {"--vae-use-tiling", Arity::Switch}, {"--vae-use-slicing", Arity::Switch},
          {"--quantization"}, {"--diffusion-attention-backend"},
          {"--fa-deterministic", Arity::Switch},
          {"--enable-distributed-layerwise-offload", Arity::Switch},
          {"--dlo-no-use-allgather", Arity::Switch}, {"--enable-cpu-offload", Arity::Switch},
          {"--enable-layerwise-offload", Arity::Switch}, {"--enforce-eager", Arity::Switch},
          {"--worker-backend"}, {"--omni-master-address"}, {"--omni-master-port"},
          {"--stage-id"}, {"--headless", Arity::Switch}, {"--default-sampling-params"},
          {"--max-generated-image-size"}, {"--flow-shift"}, {"--boundary-ratio"},
          {"--diffusers-call-kwargs"}, {"--diffusion-compile-granularity"},
          {"--omni-dp-size-local"}, {"--seed"}, {"--dtype"}, {"--api-key"},
          {"--gpu-memory-utilization"},
      },
      /*dashesAreUnderscores=*/true);
  return table;
}

class VllmOmni final : public Engine {
public:
  std::string name() const override { return "vllm-omni"; }
  std::string title() const override { return "vLLM-Omni"; }
  std::string repository() const override { return "vllm-project/vllm-omni"; }
  std::string commit() const override { return "10906e3a6db947290581b88dc4b6f35bd2a26b41"; }

  const std::vector<EngineRule> &rules() const override {
    static const std::vector<EngineRule> table = {
        {"vllm-omni-degree", "every degree is above 0", "vllm_omni/diffusion/data.py:242-278"},
        {"vllm-omni-allgather", "allgather (K/V gather) excludes ulysses and ring",
         "vllm_omni/diffusion/data.py:258-263"},
        {"vllm-omni-world-size",
         "--num-gpus divides by pp x tp x sp x cfg (the quotient is dp), and an explicit "
         "dp equals it",
         "vllm_omni/diffusion/data.py:347-381"},
        {"vllm-omni-hsdp",
         "HSDP refuses TP, DP and PP, and its replicate x shard fills the world",
         "vllm_omni/diffusion/data.py:301-343,352-363"},
        {"vllm-omni-model-support",
         "the model's row of the support matrix offers the axis",
         "docs/user_guide/diffusion_features.md:117-171"},
        {"vllm-omni-one-host",
         "a diffusion stage's workers rendezvous on one host (MASTER_ADDR is localhost)",
         "vllm_omni/diffusion/worker/gpu_worker.py (init_device; line 55 at be81443c)"},
        {"vllm-omni-rank-order",
         "ranks are laid out dp, cfg, pp, ring, ulysses (or allgather), tp, outermost first, "
         "in contiguous replicas",
         "vllm_omni/diffusion/distributed/parallel_state.py (initialize_model_parallel: "
         "RankGenerator \"tp-sp-pp-cfg-dp\", tp innermost; set_seq_parallel_pg, "
         "use_ulysses_low=True)"},
    };
    return table;
  }

  EngineReading read(const std::vector<std::string> &words,
                     const ModelSpec &) const override {
    EngineReading reading;
    OmniConfig c;
    if (words.size() == 1 && !words[0].empty() && words[0].front() == '{')
      readJson(words[0], c, reading);
    else
      readCommandLine(words, c, reading);
    derive(c, reading);
    return reading;
  }

  std::vector<EngineFinding> check(const EngineTarget &target) const override {
    std::vector<EngineFinding> findings;
    const Degrees &d = target.deployment.find("transformer")->degrees;
    OmniSupport support = omniSupportOf(familyOf(target.spec));
    bool parallel = d.worldSize() > d[Axis::DP];
    auto refuse = [&](const std::string &axis) {
      findings.push_back({"vllm-omni-model-support",
                          "vLLM-Omni's support matrix has no " + axis + " for " +
                              target.spec.name + " (" + target.spec.className + ")"});
    };
    if (!support.listed && parallel)
      findings.push_back({"vllm-omni-model-support",
                          "vLLM-Omni lists no parallel pipeline for " + target.spec.name +
                              " (" + target.spec.className + ")"});
    if (support.listed) {
      if (d.sequenceShards() > 1 && !support.sp)
        refuse("sequence parallelism");
      if (d[Axis::CFG] > 1 && !support.cfg)
        refuse("CFG parallel");
      if (d[Axis::TP] > 1 && !support.tp)
        refuse("tensor parallelism");
      if (d[Axis::PP] > 1 && !support.pp)
        refuse("pipeline parallelism");
    }
    if (d[Axis::KVGather] > 1 && (d[Axis::Ulysses] > 1 || d[Axis::Ring] > 1))
      findings.push_back({"vllm-omni-allgather",
                          "AllGather-KV (allgather_degree>1) is mutually exclusive with "
                          "Ulysses/Ring in v1 (kv_gather " +
                              std::to_string(d[Axis::KVGather]) + ", ulysses " +
                              std::to_string(d[Axis::Ulysses]) + ", ring " +
                              std::to_string(d[Axis::Ring]) + ")"});
    return findings;
  }

  EmittedLaunch launchLine(const EngineTarget &target,
                           std::vector<EngineFinding> &refusals) const override {
    int64_t perNode = target.deployment.ranksPerNode().value_or(target.deployment.numGpus);
    if (perNode > 0 && target.deployment.numGpus > perNode)
      refusals.push_back({"vllm-omni-one-host",
                          std::to_string(target.deployment.numGpus) + " ranks over " +
                              std::to_string(target.deployment.numGpus / perNode) +
                              " nodes of " + std::to_string(perNode) +
                              ": vLLM-Omni's diffusion workers all rendezvous at localhost"});
    if (target.deployment.numGpus != target.deployment.find("transformer")->degrees.worldSize())
      refusals.push_back({"vllm-omni-world-size", "the deployment holds ranks beyond the "
                                                  "transformer's"});
    if (!refusals.empty())
      return {};
    const Degrees &d = target.deployment.find("transformer")->degrees;
    std::vector<std::string> argv = {"vllm", "serve", modelWord(target.spec), "--omni",
                                     "--num-gpus", std::to_string(target.deployment.numGpus)};
    auto add = [&](const std::string &flag, int64_t value) {
      if (value != 1)
        argv.insert(argv.end(), {flag, std::to_string(value)});
    };
    add("--cfg-parallel-size", d[Axis::CFG]);
    add("--pipeline-parallel-size", d[Axis::PP]);
    add("--tensor-parallel-size", d[Axis::TP]);
    add("--ulysses-degree", d[Axis::Ulysses]);
    add("--ring-degree", d[Axis::Ring]);
    add("--allgather-degree", d[Axis::KVGather]);
    return {argv, shellLine(argv), {}};
  }

private:
  void readCommandLine(const std::vector<std::string> &words, OmniConfig &c,
                       EngineReading &reading) const {
    const std::string where = "vllm-omni command line";
    size_t begin = 0;
    if (!words.empty() && words[0].substr(words[0].find_last_of('/') + 1) == "vllm") {
      if (words.size() < 2 || words[1] != "serve")
        throw BadInput(where + ": expected 'vllm serve MODEL --omni ...'");
      begin = 2;
    }
    GivenFlags given = omniFlags().read(words, begin, words.size(), where);
    if (!given.has("--omni"))
      throw BadInput(where + ": the line has no --omni, so vLLM serves it as a language "
                             "model, not a diffusion stage");
    if (given.positionals.size() > 1)
      throw BadInput(where + ": unexpected argument '" + given.positionals[1] + "'");
    reading.model = given.positionals.empty() ? given.get("--model") : given.positionals[0];
    auto degree = [&](std::initializer_list<const char *> flags) -> std::optional<int64_t> {
      std::optional<int64_t> value;
      for (const char *flag : flags)
        if (auto v = given.getInt(flag, -(1 << 20), 1 << 20))
          value = v;
      return value;
    };
    c.numGpus = given.getInt("--num-gpus", -(1 << 20), 1 << 20);
    c.ulysses = degree({"--ulysses-degree"}).value_or(1);
    c.ring = degree({"--ring-degree"}).value_or(1);
    c.allgather = degree({"--allgather-degree"}).value_or(1);
    c.cfg = degree({"--cfg-parallel-size"}).value_or(1);
    c.tp = degree({"--tensor-parallel-size"}).value_or(1);
    c.pp = degree({"--pipeline-parallel-size"}).value_or(1);
    c.dp = degree({"--data-parallel-size"});
    c.hsdp = given.isOn("--use-hsdp");
    c.hsdpShard = given.getInt("--hsdp-shard-size", -1, 1 << 20).value_or(-1);
    c.hsdpReplicate = given.getInt("--hsdp-replicate-size", -(1 << 20), 1 << 20).value_or(1);
    if (auto mode = given.get("--ulysses-mode")) {
      if (*mode != "strict" && *mode != "advanced_uaa")
        badFlag("--ulysses-mode", *mode,
                where + ": --ulysses-mode '" + *mode +
                    "' is not one of strict, advanced_uaa (argparse choices)");
      c.ulyssesMode = *mode;
    }
    if (auto mode = given.get("--vae-parallel-mode"))
      if (*mode != "tile" && *mode != "spatial_shard_height" && *mode != "spatial_shard_width")
        badFlag("--vae-parallel-mode", *mode,
                where + ": --vae-parallel-mode '" + *mode +
                    "' is not one of tile, spatial_shard_height, spatial_shard_width");
  }

  void readJson(const std::string &text, OmniConfig &c, EngineReading &reading) const {
    const std::string where = "vllm-omni config";
    json config = JsonObject::parseText(text, where);
    if (!config.is_object())
      throw BadInput(where + ": is " + describeJson(config) + ", expected a JSON object");
    static const std::vector<std::string> top = {"DiffusionParallelConfig", "num_gpus"};
    for (auto it = config.begin(); it != config.end(); ++it)
      if (std::find(top.begin(), top.end(), it.key()) == top.end())
        throw BadInput(where + ": unknown key '" + it.key() + "'" +
                       nearestAndKnown(it.key(), top, "allowed"));
    auto found = config.find("DiffusionParallelConfig");
    if (found == config.end() || !found->is_object())
      throw BadInput(where + ": needs a DiffusionParallelConfig object");
    static const std::vector<std::string> fields = {
        "pipeline_parallel_size", "data_parallel_size", "tensor_parallel_size",
        "enable_expert_parallel", "sequence_parallel_size", "ulysses_degree", "ring_degree",
        "allgather_degree", "ulysses_mode", "cfg_parallel_size", "vae_patch_parallel_size",
        "text_encoder_tp_size", "vae_parallel_mode", "use_hsdp", "mask_sp_padding",
        "hsdp_shard_size", "hsdp_replicate_size", "ulysses_a2a_permute"};
    auto integer = [&](const std::string &key) {
      auto it = found->find(key);
      return jsonInteger(it == found->end() ? nullptr : &*it,
                         where + ": DiffusionParallelConfig." + key);
    };
    for (auto it = found->begin(); it != found->end(); ++it)
      if (std::find(fields.begin(), fields.end(), it.key()) == fields.end())
        throw BadInput(where + ": DiffusionParallelConfig has no field '" + it.key() +
                       "' (extra fields are forbidden)" +
                       nearestAndKnown(it.key(), fields, "allowed"));
    c.pp = integer("pipeline_parallel_size").value_or(1);
    c.dp = integer("data_parallel_size");
    c.tp = integer("tensor_parallel_size").value_or(1);
    c.sp = integer("sequence_parallel_size");
    c.ulysses = integer("ulysses_degree").value_or(1);
    c.ring = integer("ring_degree").value_or(1);
    c.allgather = integer("allgather_degree").value_or(1);
    c.cfg = integer("cfg_parallel_size").value_or(1);
    c.hsdpShard = integer("hsdp_shard_size").value_or(-1);
    c.hsdpReplicate = integer("hsdp_replicate_size").value_or(1);
    if (auto it = found->find("use_hsdp"); it != found->end() && !it->is_null()) {
      if (!it->is_boolean())
        throw BadInput(where + ": DiffusionParallelConfig.use_hsdp is " + describeJson(*it) +
                       ", expected true or false");
      c.hsdp = it->get<bool>();
    }
    if (auto it = found->find("ulysses_mode"); it != found->end() && !it->is_null()) {
      if (!it->is_string() ||
          (it->get<std::string>() != "strict" && it->get<std::string>() != "advanced_uaa"))
        throw BadInput(where + ": DiffusionParallelConfig.ulysses_mode is " +
                       describeJson(*it) + ", expected \"strict\" or \"advanced_uaa\"");
      c.ulyssesMode = it->get<std::string>();
    }
    if (auto it = config.find("num_gpus"); it != config.end())
      c.numGpus = jsonInteger(&*it, where + ": num_gpus");
  }

  /// __post_init__, the after-validator and resolve_data_parallel_size, in
  /// their order: the first refusal is the one vLLM-Omni raises.
  void derive(const OmniConfig &c, EngineReading &reading) const {
    auto refuse = [&](const std::string &rule, const std::string &message) {
      if (reading.refusals.empty())
        reading.refusals.push_back({rule, message});
    };
    int64_t expectedSp = c.allgather > 1 ? c.allgather : product({c.ulysses, c.ring});
    int64_t sp = c.sp.value_or(expectedSp);
    int64_t other = product({c.pp, c.dp.value_or(1), c.tp, sp, c.cfg});
    int64_t world = other;
    if (c.hsdp) {
      std::string bad;
      for (auto [name, on] : {std::pair<const char *, bool>{"TP", c.tp > 1},
                              {"DP", c.dp.value_or(1) > 1},
                              {"PP", c.pp > 1}})
        if (on)
          bad += std::string(bad.empty() ? "" : ", ") + name;
      if (!bad.empty())
        refuse("vllm-omni-hsdp", "HSDP (FSDP2) is not compatible with " + bad);
      else if (c.hsdpReplicate <= 0)
        refuse("vllm-omni-hsdp", "hsdp_replicate_size must be > 0 (got " +
                                     std::to_string(c.hsdpReplicate) + ")");
      else if (c.hsdpShard == 0 || c.hsdpShard < -1)
        refuse("vllm-omni-hsdp", "HSDP shard size must be > 0 (got " +
                                     std::to_string(c.hsdpShard) + ")");
      else if (c.hsdpShard == -1 && other == 1)
        refuse("vllm-omni-hsdp", "Cannot auto-calculate hsdp_shard_size when other "
                                 "parallelism is all 1");
      else if (c.hsdpShard == -1 && c.hsdpReplicate > 0 && other % c.hsdpReplicate != 0)
        refuse("vllm-omni-hsdp", "Invalid HSDP configuration: replicate_size (" +
                                     std::to_string(c.hsdpReplicate) +
                                     ") must evenly divide world_size (" +
                                     std::to_string(other) + ") when shard_size is -1.");
      else if (c.hsdpShard != -1 && other == 1)
        world = product({c.hsdpReplicate, c.hsdpShard});
      else if (c.hsdpShard != -1 && product({c.hsdpReplicate, c.hsdpShard}) != other)
        refuse("vllm-omni-hsdp", "HSDP dimensions (" + std::to_string(c.hsdpReplicate) +
                                     " × " + std::to_string(c.hsdpShard) + " = " +
                                     std::to_string(product({c.hsdpReplicate, c.hsdpShard})) +
                                     ") must equal world_size from other parallelism (" +
                                     std::to_string(other) + ")");
      reading.derivations.push_back("HSDP shards the weights over the ranks; ditc does not "
                                    "model FSDP, so its memory figures hold whole weights");
    }
    for (auto [name, value] : {std::pair<const char *, int64_t>{"Pipeline parallel", c.pp},
                               {"Data parallel", c.dp.value_or(1)},
                               {"Tensor parallel", c.tp},
                               {"Sequence parallel", sp},
                               {"Ulysses degree", c.ulysses},
                               {"Ring degree", c.ring},
                               {"AllGather degree", c.allgather},
                               {"CFG parallel", c.cfg}})
      if (value <= 0)
        refuse("vllm-omni-degree", std::string(name) + (std::string(name).find("degree") !=
                                                                 std::string::npos
                                                             ? ""
                                                             : " size") +
                                       " must be > 0 (got " + std::to_string(value) + ")");
    if (c.allgather > 1 && (c.ulysses > 1 || c.ring > 1))
      refuse("vllm-omni-allgather",
             "AllGather-KV (allgather_degree>1) is mutually exclusive with Ulysses/Ring in v1");
    if (sp != expectedSp)
      refuse("vllm-omni-degree", "Sequence parallel size must be " +
                                     std::to_string(expectedSp) + ", but got " +
                                     std::to_string(sp));
    int64_t dp = c.dp.value_or(1);
    int64_t n = c.numGpus.value_or(world);
    if (n <= 0) {
      refuse("vllm-omni-world-size", "WORLD size must be > 0, but got " + std::to_string(n));
    } else if (c.hsdp) {
      // The shard size, resolved: other / replicate when automatic.
      int64_t shard = c.hsdpShard == -1 && c.hsdpReplicate > 0 ? other / c.hsdpReplicate
                                                               : c.hsdpShard;
      int64_t size = product({c.hsdpReplicate, shard});
      if (n != size)
        refuse("vllm-omni-hsdp", "WORLD size (" + std::to_string(n) + ") must equal HSDP size (" +
                                     std::to_string(c.hsdpReplicate) + " x " +
                                     std::to_string(shard) + " = " + std::to_string(size) + ")");
      dp = 1;
    } else {
      int64_t nonDp = product({c.pp, c.tp, sp, c.cfg});
      if (nonDp > 0 && n % nonDp != 0) {
        refuse("vllm-omni-world-size", "WORLD size (" + std::to_string(n) +
                                           ") must be divisible by non-DP parallel size (" +
                                           std::to_string(nonDp) + ")");
      } else if (nonDp > 0) {
        int64_t inferred = n / nonDp;
        if (c.dp && *c.dp != inferred)
          refuse("vllm-omni-world-size", "data_parallel_size (" + std::to_string(*c.dp) +
                                             ") does not match WORLD-derived value (" +
                                             std::to_string(inferred) + ")");
        else if (c.numGpus && !c.dp && inferred > 1)
          reading.derivations.push_back("dp " + std::to_string(inferred) + " from --num-gpus " +
                                        std::to_string(n) + " / (pp x tp x sp x cfg = " +
                                        std::to_string(nonDp) + ")");
        dp = inferred;
      }
    }
    if (!c.numGpus)
      reading.derivations.push_back("world " + std::to_string(n) +
                                    ": no --num-gpus, so the product of the degrees");
    if (c.allgather > 1)
      reading.derivations.push_back("kv_gather " + std::to_string(c.allgather) +
                                    " from --allgather-degree (AllGather-KV)");
    if (c.ulyssesMode == "advanced_uaa")
      reading.derivations.push_back("--ulysses-mode advanced_uaa pads uneven heads; ditc's "
                                    "ulysses-heads still holds the heads to an even split");
    reading.flags.numGpus = std::max<int64_t>(n, 1);
    reading.flags.dp = std::max<int64_t>(dp, 1);
    reading.flags.cfg = std::max<int64_t>(c.cfg, 1);
    reading.flags.pp = std::max<int64_t>(c.pp, 1);
    reading.flags.tp = std::max<int64_t>(c.tp, 1);
    if (c.allgather > 1) {
      reading.flags.kvGather = c.allgather;
    } else {
      reading.flags.ulysses = std::max<int64_t>(c.ulysses, 1);
      reading.flags.ring = std::max<int64_t>(c.ring, 1);
    }
  }
};

} // namespace

const Engine &vllmOmniEngine() {
  static const VllmOmni engine;
  return engine;
}

} // namespace ditc::engines
