//===- SGLang.cpp - SGLang Diffusion: `sglang generate` / `sglang serve` --===//
//
// SGLang Diffusion reads its degrees in ServerArgs
// (python/sglang/multimodal_gen/runtime/server_args/server_args.py) and
// derives what is not given: CFG parallel turns itself on for a model whose
// defaults run CFG when no sequence-parallel flag is given, the GPUs left
// after dp x tp x cfg go to sequence parallelism, and a bare sp of 2
// becomes K/V-gather. Its checks run in a fixed order and the first one
// raises. It never checks that the degrees fill num_gpus, only that each
// divides it. Flags take their dash spelling only. Sources are at commit
// 0048238e (docs/engines.md).
//
//===----------------------------------------------------------------------===//
#include "Engines.h"
#include "ditc/Engines/LaunchLine.h"
#include "ditc/Support/BadInput.h"

#include <algorithm>

namespace ditc::engines {

namespace {

const FlagTable &sglangFlags() {
  static const FlagTable table(
      "SGLang",
      {
          // Parallelism (server_args.py:2171-2330, 2621).
          {"--num-gpus"}, {"--tp-size"}, {"--sp-degree"}, {"--ulysses-degree"},
          {"--ring-degree"}, {"--kv-gather-degree"},
          {"--enable-cfg-parallel", Arity::Optional}, {"--cfg-parallel-size"},
          {"--data-parallel-size"}, {"--dp-size", Arity::Value, "--data-parallel-size"},
          {"--dp", Arity::Value, "--data-parallel-size"}, {"--encoder-parallel"},
          {"--vae-sp", Arity::Optional}, {"--hsdp-replicate-dim"}, {"--hsdp-shard-dim"},
          {"--use-fsdp-inference", Arity::Optional}, {"--dist-timeout"}, {"--nnodes"},
          {"--node-rank"}, {"--dist-init-addr"}, {"--base-gpu-id"}, {"--gpu-ids", Arity::List},
          {"--enable-nccl-nvls", Arity::Optional}, {"--performance-mode"},
          {"--mode", Arity::Value, "--performance-mode"},
          {"--attention-backend"},
          // The workload (sampling_params.py).
          {"--model-path"}, {"--height"}, {"--width"}, {"--num-frames"},
          {"--num-inference-steps"}, {"--guidance-scale"}, {"--guidance-scale-2"},
          {"--negative-prompt"}, {"--num-outputs-per-prompt"},
          {"--720p", Arity::Switch}, {"--1080p", Arity::Switch}, {"--2k", Arity::Switch},
          {"--4k", Arity::Switch},
          // Accepted and ignored.
          {"--model-id"}, {"--backend"}, {"--trust-remote-code", Arity::Optional},
          {"--revision"}, {"--lora-path"}, {"--lora-nickname"}, {"--lora-scale"},
          {"--vae-path"}, {"--dit-precision"}, {"--vae-precision"},
          {"--vae-tiling", Arity::Optional}, {"--vae-slicing", Arity::Optional},
          {"--text-encoder-precisions", Arity::List}, {"--quantization"},
          {"--text-encoder-cpu-offload", Arity::Optional},
          {"--image-encoder-cpu-offload", Arity::Optional},
          {"--vae-cpu-offload", Arity::Optional}, {"--dit-cpu-offload", Arity::Optional},
          {"--dit-layerwise-offload", Arity::Optional}, {"--pin-cpu-memory", Arity::Optional},
          {"--enable-torch-compile", Arity::Optional},
          {"--enable-breakable-cuda-graph", Arity::Optional}, {"--attention-backend-config"},
          {"--cache-dit-config"}, {"--warmup-mode"}, {"--warmup-resolutions", Arity::List},
          {"--warmup-steps"}, {"--warmup-num-frames"}, {"--host"}, {"--port"},
          {"--scheduler-port"}, {"--master-port"}, {"--strict-ports", Arity::Optional},
          {"--webui", Arity::Optional}, {"--webui-port"}, {"--output-path"},
          {"--input-save-path"}, {"--log-level"}, {"--prompt-file-path"}, {"--prompt"},
          {"--prompt-path"}, {"--seed"}, {"--image-path"}, {"--save-output", Arity::Optional},
          {"--no-save-output", Arity::Switch}, {"--output-file-name"},
          {"--return-frames", Arity::Optional}, {"--fps"},
          {"--enable-teacache", Arity::Optional}, {"--profile", Arity::Optional},
          {"--data-type"}, {"--generator-device"}, {"--config"}, {"--perf-dump-path"},
          {"--output-file-path"}, {"--adjust-frames", Arity::Optional},
          {"--num-frames-round-down", Arity::Optional}, {"--guidance-rescale"},
          {"--boundary-ratio"},
      },
      /*dashesAreUnderscores=*/false);
  return table;
}

class SGLang final : public Engine {
public:
  std::string name() const override { return "sglang"; }
  std::string title() const override { return "SGLang Diffusion"; }
  std::string repository() const override { return "sgl-project/sglang"; }
  std::string commit() const override { return "0048238e4f46e6778698d48280bc8248e8a92203"; }

  const std::vector<EngineRule> &rules() const override {
    static const std::vector<EngineRule> table = {
        {"sglang-kv-gather-compose",
         "kv_gather does not combine with ulysses or ring",
         "python/sglang/multimodal_gen/runtime/server_args/server_args.py:1532-1537"},
        {"sglang-ring-backend", "ring needs the fa or sage_attn backend",
         "python/sglang/multimodal_gen/runtime/server_args/server_args.py:1128-1143"},
        {"sglang-kv-gather-sp", "kv_gather equals the sequence-parallel degree",
         "python/sglang/multimodal_gen/runtime/server_args/server_args.py:3704-3711"},
        {"sglang-nodes",
         "--node-rank lies in [0, nnodes), and --dist-init-addr is given when --nnodes > 1",
         "python/sglang/multimodal_gen/runtime/server_args/server_args.py:3715-3720"},
        {"sglang-divisibility",
         "num_gpus divides by nnodes, sp, dp and dp x tp (x cfg)",
         "python/sglang/multimodal_gen/runtime/server_args/server_args.py:3713-3714,3721-3770"},
        {"sglang-sp-product", "sp = ring x ulysses",
         "python/sglang/multimodal_gen/runtime/server_args/server_args.py:3772-3776"},
        {"sglang-world-size",
         "the degrees fill num_gpus (ServerArgs only checks divisibility; a rank outside the "
         "groups fails GroupCoordinator's assertion at start)",
         "python/sglang/multimodal_gen/runtime/distributed/group_coordinator.py "
         "(GroupCoordinator.__init__)"},
        {"sglang-ring-ulysses-attention",
         "models still on UlyssesAttention (HunyuanVideo) refuse ring; varlen text under "
         "ring raises",
         "python/sglang/multimodal_gen/runtime/layers/attention/layer.py "
         "(UlyssesAttention.__init__, USPAttention.forward)"},
        {"sglang-no-pp", "SGLang Diffusion has no pipeline-parallel flag",
         "python/sglang/multimodal_gen/runtime/server_args/server_args.py:2171-2330"},
        {"sglang-rank-order",
         "ranks are laid out dp, cfg, ring, ulysses (or kv_gather), tp, outermost first, "
         "in contiguous replicas",
         "python/sglang/multimodal_gen/runtime/distributed/parallel_state.py "
         "(initialize_model_parallel: RankGenerator \"tp-sp-pp-cfg-dp\", tp innermost); "
         "parallel_groups.py (set_seq_parallel_pg_by_sp_groups, use_ulysses_low=True)"},
    };
    return table;
  }

  EngineReading read(const std::vector<std::string> &words,
                     const ModelSpec &spec) const override {
    const std::string where = "sglang command line";
    size_t begin = 0;
    bool serve = false;
    if (!words.empty()) {
      std::string program = words[0].substr(words[0].find_last_of('/') + 1);
      if (program == "sglang") {
        if (words.size() < 2 || (words[1] != "generate" && words[1] != "serve"))
          throw BadInput(where + ": expected 'sglang generate ...' or 'sglang serve ...'");
        serve = words[1] == "serve";
        begin = 2;
      } else if (program.rfind("python", 0) == 0 && words.size() > 1 && words[1] == "-m") {
        if (words.size() < 4 || (words[3] != "generate" && words[3] != "serve"))
          throw BadInput(where + ": expected 'python -m "
                                 "sglang.multimodal_gen.runtime.entrypoints.cli.main "
                                 "generate|serve ...'");
        serve = words[3] == "serve";
        begin = 4;
      }
    }
    GivenFlags given = sglangFlags().read(words, begin, words.size(), where);
    EngineReading reading;
    if (given.positionals.size() > (serve ? 1u : 0u))
      throw BadInput(where + ": error: unrecognized arguments: " +
                     given.positionals[serve ? 1 : 0]);
    reading.model = given.get("--model-path");
    if (serve && !given.positionals.empty())
      reading.model = given.positionals[0];
    auto refuse = [&](const std::string &rule, const std::string &message) {
      if (reading.refusals.empty())
        reading.refusals.push_back({rule, message});
    };

    // _adjust_parallelism (server_args.py:1425-1554), in its order.
    int64_t n = given.getInt("--num-gpus", -(1 << 20), 1 << 20).value_or(1);
    if (n <= 0)
      throw BadInput(where + ": Number of gpus must be positive (--num-gpus " +
                     std::to_string(n) + ")");
    int64_t dp = given.getInt("--data-parallel-size", 1, 1 << 20).value_or(1);
    std::optional<int64_t> sp = given.getInt("--sp-degree", 1, 1 << 20);
    std::optional<int64_t> ulysses = given.getInt("--ulysses-degree", 1, 1 << 20);
    std::optional<int64_t> ring = given.getInt("--ring-degree", 1, 1 << 20);
    std::optional<int64_t> kvGather = given.getInt("--kv-gather-degree", 1, 1 << 20);
    int64_t tp = given.getInt("--tp-size", 1, 1 << 20).value_or(1);
    std::optional<bool> cfgOn;
    if (given.has("--enable-cfg-parallel"))
      cfgOn = given.isOn("--enable-cfg-parallel");
    std::optional<int64_t> cfgSize = given.getInt("--cfg-parallel-size", 1, 1 << 20);
    if (cfgSize)
      cfgOn = *cfgSize > 1;
    std::string mode = given.get("--performance-mode").value_or("auto");
    if (mode != "auto" && mode != "manual" && mode != "speed" && mode != "memory")
      badFlag("--performance-mode", mode,
              where + ": --performance-mode '" + mode +
                  "' is not one of manual, auto, speed, memory (argparse choices)");
    // The model runs CFG by default: a negative prompt and guidance above 1
    // in its default sampling params (_model_default_uses_cfg, 1556-1573).
    bool usesCfg = spec.family.branches > 1 && spec.family.defaultGuidance > 1;
    int64_t cfg = 1;
    if (!cfgOn) {
      const int64_t degree = 2; // auto_cfg_parallel_degree_by_num_gpus' default
      if (mode != "manual" && usesCfg && n >= 2 && n % product({dp, tp, degree}) == 0 && !sp &&
          !ulysses && !ring) {
        cfgOn = true;
        cfg = degree;
        reading.derivations.push_back(
            "cfg 2: SGLang turns CFG parallel on by itself for a model whose defaults run "
            "CFG, when no --sp-degree, --ulysses-degree or --ring-degree is given "
            "(server_args.py:1452-1489)");
      } else {
        cfgOn = false;
      }
    } else {
      cfg = cfgSize ? *cfgSize : (*cfgOn ? 2 : 1);
      if (!*cfgOn)
        cfg = 1;
    }
    if (!sp) {
      int64_t groups = product({dp, tp, cfg});
      sp = n % groups == 0 ? n / groups : 1;
      if (*sp > 1)
        reading.derivations.push_back("sp " + std::to_string(*sp) + " from --num-gpus " +
                                      std::to_string(n) + " / (dp x tp x cfg = " +
                                      std::to_string(groups) + ")");
    }
    if (!ulysses && !ring && !kvGather && *sp != 1) {
      if (*sp == 2) {
        kvGather = 2;
        reading.derivations.push_back(
            "kv_gather 2: a bare sp of 2 becomes K/V-gather (server_args.py:1506-1527; "
            "--ulysses-degree 2 keeps the Ulysses exchange)");
      } else {
        ulysses = *sp;
        reading.derivations.push_back("ulysses " + std::to_string(*sp) +
                                      ": a bare sp other than 2 becomes Ulysses");
      }
    }
    int64_t kv = kvGather.value_or(1);
    if (kv > 1 && (ulysses.value_or(1) != 1 || ring.value_or(1) != 1))
      refuse("sglang-kv-gather-compose",
             "kv_gather_degree does not compose with ulysses_degree or ring_degree yet; set "
             "exactly one of them above 1");
    int64_t u = ulysses.value_or(1), r = ring.value_or(1);
    // _adjust_attention_backend (1128-1143): ring forces fa when unset.
    reading.attentionBackend = given.get("--attention-backend");
    if (r > 1) {
      std::string backend = reading.attentionBackend.value_or("fa");
      if (backend == "fa3" || backend == "fa4")
        backend = "fa";
      if (backend != "fa" && backend != "sage_attn")
        refuse("sglang-ring-backend",
               "Ring Attention requires one of the ring-capable backends (fa, sage_attn), got '" +
                   backend + "'");
    }
    // _validate_parallelism (3704-3776), in its order.
    int64_t nnodes = given.getInt("--nnodes", -(1 << 20), 1 << 20).value_or(1);
    int64_t nodeRank = given.getInt("--node-rank", -(1 << 20), 1 << 20).value_or(0);
    if (kv > 1 && *sp != kv)
      refuse("sglang-kv-gather-sp",
             "kv_gather_degree (" + std::to_string(kv) + ") must equal sp_degree (" +
                 std::to_string(*sp) +
                 "); check how many GPUs remain for sequence parallelism after dp/tp/cfg");
    if (nnodes < 1)
      refuse("sglang-divisibility", "--nnodes must be a natural number");
    else if (nodeRank < 0 || nodeRank >= nnodes)
      refuse("sglang-nodes", "--node-rank (" + std::to_string(nodeRank) +
                                 ") must be in [0, nnodes=" + std::to_string(nnodes) + ")");
    else if (nnodes > 1 && !given.has("--dist-init-addr"))
      refuse("sglang-nodes", "--dist-init-addr is required when --nnodes > 1 (--nnodes " +
                                 std::to_string(nnodes) + ")");
    else if (n % nnodes != 0)
      refuse("sglang-divisibility", "num_gpus (" + std::to_string(n) +
                                        ") must be divisible by nnodes (" +
                                        std::to_string(nnodes) + ")");
    if (*sp > n || n % *sp != 0)
      refuse("sglang-divisibility", "num_gpus (" + std::to_string(n) +
                                        ") must be >= and divisible by sp_degree (" +
                                        std::to_string(*sp) + ")");
    if (n % dp != 0)
      refuse("sglang-divisibility", "num_gpus (" + std::to_string(n) +
                                        ") must be divisible by dp_size (" +
                                        std::to_string(dp) + ")");
    int64_t groups = product({dp, tp, *cfgOn ? cfg : 1});
    if (n % groups != 0)
      refuse("sglang-divisibility",
             "num_gpus (" + std::to_string(n) + ") must be divisible by (dp_size * tp_size" +
                 (*cfgOn ? " * " + std::to_string(cfg) : std::string()) + ") = " +
                 std::to_string(groups));
    int64_t effectiveU = kv > 1 ? kv : u;
    if (*sp != product({r, effectiveU}))
      refuse("sglang-sp-product", "sp_degree (" + std::to_string(*sp) +
                                      ") must equal ring_degree * ulysses_degree (" +
                                      std::to_string(r) + " * " + std::to_string(effectiveU) +
                                      " = " + std::to_string(product({r, effectiveU})) +
                                      ")");
    int64_t filled = product({dp, cfg, tp, *sp});
    if (filled != n)
      refuse("sglang-world-size",
             "dp x cfg x tp x sp = " + std::to_string(filled) + " of num_gpus " +
                 std::to_string(n) +
                 ": ServerArgs accepts it (each degree divides num_gpus), but the ranks "
                 "outside the groups fail GroupCoordinator's assertion at start");
    reading.flags.numGpus = n;
    reading.flags.dp = dp;
    reading.flags.cfg = cfg;
    reading.flags.tp = tp;
    reading.flags.ulysses = kv > 1 ? 1 : u;
    reading.flags.ring = r;
    reading.flags.kvGather = kv;
    if (nnodes >= 1 && n % nnodes == 0)
      reading.flags.nnodes = nnodes;
    // The workload: shortcuts first, explicit sizes over them.
    for (auto [flag, w, h] : {std::tuple<const char *, int64_t, int64_t>{"--720p", 1280, 720},
                              {"--1080p", 1920, 1080},
                              {"--2k", 2560, 1440},
                              {"--4k", 3840, 2160}})
      if (given.has(flag)) {
        reading.workload.width = w;
        reading.workload.height = h;
      }
    if (auto h = given.getInt("--height", 1, kAbsurdSize))
      reading.workload.height = h;
    if (auto w = given.getInt("--width", 1, kAbsurdSize))
      reading.workload.width = w;
    reading.workload.frames = given.getInt("--num-frames", 1, kAbsurdSize);
    reading.workload.steps = given.getInt("--num-inference-steps", 1, kAbsurdSize);
    reading.workload.guidanceScale = given.getDouble("--guidance-scale");
    // sampling_params.py: num_outputs_per_prompt, denoised together.
    reading.workload.batch = given.getInt("--num-outputs-per-prompt", 1, kAbsurdSize);
    return reading;
  }

  std::vector<EngineFinding> check(const EngineTarget &target) const override {
    std::vector<EngineFinding> findings;
    const Degrees &d = target.deployment.find("transformer")->degrees;
    if (d[Axis::Ring] > 1 && familyOf(target.spec) == "hunyuan_video")
      findings.push_back(
          {"sglang-ring-ulysses-attention",
           "ring " + std::to_string(d[Axis::Ring]) + " on " + target.spec.name +
               ": its blocks still use UlyssesAttention, which is not ring-aware "
               "(NotImplementedError when the model is built), and its varlen text raises "
               "under ring"});
    if (d[Axis::PP] > 1)
      findings.push_back({"sglang-no-pp", "pp " + std::to_string(d[Axis::PP]) +
                                              ": SGLang Diffusion has no pipeline stages"});
    if (d[Axis::KVGather] > 1 && (d[Axis::Ulysses] > 1 || d[Axis::Ring] > 1))
      findings.push_back({"sglang-kv-gather-compose",
                          "kv_gather_degree does not compose with ulysses_degree or "
                          "ring_degree yet"});
    if (d[Axis::Ring] > 1 && target.attentionBackend) {
      std::string backend = *target.attentionBackend;
      if (backend != "fa" && backend != "fa3" && backend != "fa4" && backend != "sage_attn")
        findings.push_back({"sglang-ring-backend",
                            "Ring Attention requires one of the ring-capable backends (fa, "
                            "sage_attn), got '" + backend + "'"});
    }
    return findings;
  }

  EmittedLaunch launchLine(const EngineTarget &target,
                           std::vector<EngineFinding> &refusals) const override {
    const Deployment &deployment = target.deployment;
    if (deployment.numGpus != deployment.find("transformer")->degrees.worldSize())
      refusals.push_back({"sglang-world-size", "the deployment holds ranks beyond the "
                                               "transformer's"});
    if (!refusals.empty())
      return {};
    const Degrees &d = deployment.find("transformer")->degrees;
    std::vector<std::string> argv = {"sglang", "generate", "--model-path",
                                     modelWord(target.spec), "--num-gpus",
                                     std::to_string(deployment.numGpus)};
    auto add = [&](const std::string &flag, int64_t value) {
      if (value != 1)
        argv.insert(argv.end(), {flag, std::to_string(value)});
    };
    add("--dp-size", d[Axis::DP]);
    add("--tp-size", d[Axis::TP]);
    // Always explicit, so SGLang's automatic CFG does not redo the split.
    argv.insert(argv.end(), {"--cfg-parallel-size", std::to_string(d[Axis::CFG])});
    add("--ulysses-degree", d[Axis::Ulysses]);
    add("--ring-degree", d[Axis::Ring]);
    add("--kv-gather-degree", d[Axis::KVGather]);
    // One line per node: --num-gpus is the whole world (server_args.py), the
    // node's ranks start at node_rank x num_gpus / nnodes.
    EmittedLaunch launch;
    int64_t perNode = deployment.ranksPerNode().value_or(deployment.numGpus);
    int64_t nodes = perNode > 0 ? deployment.numGpus / perNode : 1;
    if (nodes > 1) {
      argv.insert(argv.end(), {"--nnodes", std::to_string(nodes), "--node-rank", "0",
                               "--dist-init-addr", std::string(kFirstNodeAddress) + ":30005"});
      launch.notes.push_back(multiNodeNote(nodes, "--node-rank"));
    }
    appendWorkload(argv, target, '-');
    // num_outputs_per_prompt: the prompt's outputs denoise as one batch.
    if (target.workload.batch > 1)
      argv.insert(argv.end(), {"--num-outputs-per-prompt", std::to_string(target.workload.batch)});
    launch.argv = argv;
    launch.text = shellLine(argv);
    return launch;
  }
};

} // namespace

const Engine &sglangEngine() {
  static const SGLang engine;
  return engine;
}

} // namespace ditc::engines
