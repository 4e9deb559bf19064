//===- XDiT.cpp - xDiT (xfuser): torchrun flags and create_config ---------===//
//
// xDiT reads its degrees with argparse (xfuser/config/args.py), `-` and `_`
// alike, and builds its configs in a fixed order (create_config): the DiT
// ranks are the world less any VAE ranks, cfg is 2 with
// --use_cfg_parallel and 1 otherwise, sp = ulysses x ring, and the product
// dp x cfg x sp x tp x pipefusion must equal the DiT ranks: nothing is
// derived to fill the world. Sources are at commit 175e0bf (docs/engines.md).
//
//===----------------------------------------------------------------------===//
#include "Engines.h"
#include "ditc/Engines/LaunchLine.h"
#include "ditc/Support/BadInput.h"

#include <algorithm>

namespace ditc::engines {

namespace {

/// Which parallelism xDiT offers a family: README.md:107-139 (the model
/// table) with the runner's capabilities (runner_models/*.py); listed is
/// false for a family xDiT has no pipeline for.
struct XDiTSupport {
  bool listed, cfg, sp, pipefusion, tp;
};

XDiTSupport xdiTSupportOf(const std::string &family) {
  if (family == "flux")
    return {true, false, true, true, false}; // CFG "NA": guidance-distilled
  if (family == "wan")
    return {true, false, true, false, false};
  if (family == "hunyuan_video")
    return {true, false, true, false, false};
  if (family == "qwen_image")
    return {true, false, true, false, false};
  if (family == "sd3")
    return {true, true, true, true, false};
  if (family == "cogvideox" || family == "mochi")
    return {true, true, true, false, false};
  return {false, false, false, false, false}; // ltx_video: only LTX-2 is listed
}

/// Attention backends xDiT refuses under ring (runtime_state.py:205-258).
bool refusesRing(std::string backend) {
  std::transform(backend.begin(), backend.end(), backend.begin(),
                 [](unsigned char c) { return char(std::toupper(c)); });
  static const char *const refused[] = {
      "SDPA",          "SDPA_MATH",       "FLASH_4",         "FLASH_4_FP4",
      "AITER_FP8",     "AITER_MLA",       "AITER_SPARSE_SAGE", "AITER_SPARSE_SAGE_V2",
      "AITER_SPARGE",  "AITER_SPARGE_V2", "AITER_FLYDSL",    "FLEX_BLOCK_ATTN",
      "FLEX_BLOCK_SPARGE"};
  return std::find(std::begin(refused), std::end(refused), backend) != std::end(refused);
}

const FlagTable &xditFlags() {
  static const FlagTable table(
      "xDiT",
      {
          // Parallelism (args.py:254-326, 485-538).
          {"--data_parallel_degree"}, {"--use_cfg_parallel", Arity::Switch},
          {"--ulysses_degree"}, {"--ring_degree"}, {"--pipefusion_parallel_degree"},
          {"--num_pipeline_patch"}, {"--attn_layer_num_for_pp", Arity::List},
          {"--tensor_parallel_degree"}, {"--split_scheme"}, {"--fully_shard_degree"},
          {"--no_reshard_after_forward", Arity::Switch},
          {"--memory_efficient_sharding", Arity::Switch},
          {"--use_parallel_vae", Arity::Switch}, {"--vae_parallel_size"},
          {"--dit_parallel_size"}, {"--use_ray", Arity::Switch}, {"--ray_world_size"},
          {"--shard_dit", Arity::Switch}, {"--shard_t5_encoder", Arity::Switch},
          {"--attention_backend"}, {"--cross_attention_backend"},
          // The workload (args.py:330-379).
          {"--model"}, {"--height"}, {"--width"}, {"--num_frames"},
          {"--num_inference_steps"}, {"--guidance_scale"}, {"--guidance_scale_2"},
          {"--max_sequence_length"}, {"--prompt", Arity::List},
          {"--negative_prompt", Arity::List}, {"--batch_size"},
          // Accepted and ignored: nothing here changes a degree.
          {"--dataset_path"}, {"--warmup_steps"}, {"--output_type"},
          {"--no_use_resolution_binning", Arity::Switch}, {"--seed"},
          {"--img_file_path"}, {"--input_images", Arity::List},
          {"--resize_input_images", Arity::Switch}, {"--use_torch_compile", Arity::Switch},
          {"--use_onediff", Arity::Switch}, {"--enable_tiling", Arity::Switch},
          {"--enable_slicing", Arity::Switch}, {"--enable_model_cpu_offload", Arity::Switch},
          {"--enable_sequential_cpu_offload", Arity::Switch},
          {"--use_fp8_t5_encoder", Arity::Switch}, {"--use_fp8_gemms", Arity::Switch},
          {"--use_int8_gemms", Arity::Switch}, {"--use_fp4_gemms", Arity::Switch},
          {"--use_teacache", Arity::Switch}, {"--use_fbcache", Arity::Switch},
          {"--use_fast_attn", Arity::Switch}, {"--n_calib"}, {"--threshold"},
          {"--window_size"}, {"--coco_path"}, {"--use_cache", Arity::Switch},
          {"--distilled_transformer_path"}, {"--distilled_transformer_2_path"},
          {"--output_directory"}, {"--num_iterations"}, {"--warmup_calls"},
          {"--profile", Arity::Switch}, {"--task"}, {"--caption_file"},
          {"--sample_images_folder"},
      },
      /*dashesAreUnderscores=*/true);
  return table;
}

class XDiT final : public Engine {
public:
  std::string name() const override { return "xdit"; }
  std::string title() const override { return "xDiT"; }
  std::string repository() const override { return "xdit-project/xDiT"; }
  std::string commit() const override { return "175e0bfec974d0b44a0be9fa511df2f9f5ead080"; }

  const std::vector<EngineRule> &rules() const override {
    static const std::vector<EngineRule> table = {
        {"xdit-world-size",
         "dp x cfg x ulysses x ring x tp x pipefusion equals the DiT ranks (no degree is "
         "derived)",
         "xfuser/config/config.py:234-263"},
        {"xdit-dp-cfg", "dp x cfg at most the DiT ranks, checked before the product",
         "xfuser/config/config.py:100-114"},
        {"xdit-vae-ranks", "the DiT ranks and --vae_parallel_size sum to the world",
         "xfuser/config/args.py:850-854"},
        {"xdit-degree", "every degree is at least 1 (xDiT checks dp, tp and pipefusion; "
                        "ditc all)",
         "xfuser/config/config.py:100-218"},
        {"xdit-model-support",
         "the model's pipeline offers the axis (README model table; the runner's "
         "ModelCapabilities; FLUX.1's pipeline refuses CFG parallel)",
         "README.md:107-139; xfuser/model_executor/models/runner_models/*.py; "
         "xfuser/model_executor/pipelines/pipeline_flux.py:108"},
        {"xdit-heads", "ulysses divides the heads (and is at most their number)",
         "xfuser/core/distributed/runtime_state.py:568-580"},
        {"xdit-ring-backend", "ring needs a backend that returns the softmax LSE",
         "xfuser/core/distributed/runtime_state.py:205-258"},
        {"xdit-patch-rows",
         "PipeFusion cuts the latent rows into patches: each holds whole patch rows for "
         "every sequence-parallel rank",
         "xfuser/core/distributed/runtime_state.py:641-687"},
        {"xdit-no-kv-gather", "xDiT has no K/V-gather axis", "xfuser/config/args.py:254-326"},
        {"xdit-rank-order",
         "ranks are laid out dp, cfg, pipefusion, ring, ulysses, tp, outermost first, in "
         "contiguous replicas",
         "xfuser/core/distributed/parallel_state.py:455-463 (RankGenerator "
         "\"tp-sp-pp-cfg-dp\", tp innermost), 495-504 (yunchang's set_seq_parallel_pg, "
         "use_ulysses_low=True: Ulysses groups contiguous inside ring)"},
    };
    return table;
  }

  EngineReading read(const std::vector<std::string> &words,
                     const ModelSpec &) const override {
    const std::string where = "xdit command line";
    EngineReading reading;
    TorchrunLaunch launch = readTorchrun(words, where);
    size_t begin = 0;
    bool runnerCommand = false;
    if (launch.given) {
      begin = launch.argsBegin;
    } else if (!words.empty() &&
               words[0].substr(words[0].find_last_of('/') + 1) == "xdit") {
      runnerCommand = true; // xfuser/cli.py: nproc from the degrees
      begin = 1;
    } else if (!words.empty() &&
               words[0].substr(words[0].find_last_of('/') + 1).rfind("python", 0) == 0) {
      begin = words.size() > 1 && words[1] == "-m" ? 3 : 2;
    } else if (!words.empty() && words[0].rfind("--", 0) != 0) {
      begin = 1; // a script run directly
    }
    begin = std::min(begin, words.size());
    GivenFlags given = xditFlags().read(words, begin, words.size(), where);
    // Every entry point calls parse_args() on a parser without positionals
    // (args.py:30-62, 184-453, 456-819): a stray word is argparse's error.
    if (!given.positionals.empty())
      throw BadInput(where + ": error: unrecognized arguments: " + given.positionals[0]);

    int64_t dp = given.getInt("--data_parallel_degree", -(1 << 20), 1 << 20).value_or(1);
    int64_t ulysses = given.getInt("--ulysses_degree", -(1 << 20), 1 << 20).value_or(1);
    int64_t ring = given.getInt("--ring_degree", -(1 << 20), 1 << 20).value_or(1);
    int64_t tp = given.getInt("--tensor_parallel_degree", -(1 << 20), 1 << 20).value_or(1);
    int64_t pp = given.getInt("--pipefusion_parallel_degree", -(1 << 20), 1 << 20).value_or(1);
    int64_t cfg = given.isOn("--use_cfg_parallel") ? 2 : 1;
    if (given.isOn("--use_cfg_parallel"))
      reading.derivations.push_back("cfg 2 from --use_cfg_parallel (xDiT's CFG degree is "
                                    "always 2 when on; config.py:104-107)");
    for (auto [flag, value] : {std::pair<const char *, int64_t>{"--data_parallel_degree", dp},
                               {"--ulysses_degree", ulysses},
                               {"--ring_degree", ring},
                               {"--tensor_parallel_degree", tp},
                               {"--pipefusion_parallel_degree", pp}})
      if (value < 1)
        reading.refusals.push_back({"xdit-degree", std::string(flag) + " is " +
                                                       std::to_string(value) +
                                                       "; a degree is at least 1"});

    // The world: torchrun's processes, Ray's, or what the xdit command
    // starts (the product of the degrees, cli.py:27-60).
    int64_t world = launch.nprocPerNode * launch.nnodes;
    if (given.isOn("--use_ray")) {
      world = given.getInt("--ray_world_size", 1, 1 << 20).value_or(1);
      reading.derivations.push_back("world " + std::to_string(world) +
                                    " from --ray_world_size (--use_ray)");
    } else if (runnerCommand) {
      world = product({std::max<int64_t>(dp, 1), cfg, std::max<int64_t>(ulysses, 1),
                       std::max<int64_t>(ring, 1), std::max<int64_t>(tp, 1),
                       std::max<int64_t>(pp, 1)});
      reading.derivations.push_back("world " + std::to_string(world) +
                                    ": the xdit command starts as many processes as the "
                                    "degrees multiply to (xfuser/cli.py:27-60)");
    } else if (launch.given) {
      reading.derivations.push_back(
          "world " + std::to_string(world) + " from torchrun (--nproc_per_node " +
          std::to_string(launch.nprocPerNode) +
          (launch.nnodes > 1 ? " x --nnodes " + std::to_string(launch.nnodes) : "") + ")");
    } else {
      reading.derivations.push_back("world 1: the line starts no torchrun");
    }
    // args.py:850-854: the DiT ranks default to the world unless the VAE
    // takes ranks of its own (--use_parallel_vae with a size); the sum is
    // checked either way.
    int64_t vaeRanks = given.getInt("--vae_parallel_size", 0, 1 << 20).value_or(0);
    int64_t dit = given.getInt("--dit_parallel_size", 0, 1 << 20).value_or(0);
    if (dit == 0 && (!given.isOn("--use_parallel_vae") || vaeRanks == 0))
      dit = world;
    if (dit + vaeRanks != world)
      reading.refusals.push_back(
          {"xdit-vae-ranks", "DIT parallel size " + std::to_string(dit) +
                                 " and VAE parallel size " + std::to_string(vaeRanks) +
                                 " must sum to world size " + std::to_string(world)});
    if (vaeRanks > 0)
      reading.derivations.push_back(std::to_string(vaeRanks) +
                                    " VAE rank(s) of their own are left out: ditc judges "
                                    "the " + std::to_string(dit) + " DiT ranks");
    int64_t degrees = product({dp, cfg, ulysses, ring, tp, pp});
    if (dp >= 1 && product({dp, cfg}) > dit)
      reading.refusals.push_back(
          {"xdit-dp-cfg", "dp_degree * cfg_degree must be less than or equal to "
                          "dit_parallel_size because of classifier free guidance (" +
                              std::to_string(dp) + " x " + std::to_string(cfg) + " > " +
                              std::to_string(dit) + ")"});
    else if (degrees != dit)
      reading.refusals.push_back(
          {"xdit-world-size", "parallel_world_size " + std::to_string(degrees) +
                                  " must be equal to dit_parallel_size " +
                                  std::to_string(dit) + " (dp " + std::to_string(dp) +
                                  " x cfg " + std::to_string(cfg) + " x ulysses " +
                                  std::to_string(ulysses) + " x ring " +
                                  std::to_string(ring) + " x tp " + std::to_string(tp) +
                                  " x pipefusion " + std::to_string(pp) + ")"});
    if (pp > 1)
      reading.derivations.push_back(
          "pp " + std::to_string(pp) +
          " from --pipefusion_parallel_degree: ditc pipelines the layers; PipeFusion also "
          "pipelines patches of the image with one-step-stale K/V, which ditc does not "
          "model");

    // A refused split of the world still leaves a world to judge.
    reading.flags.numGpus = dit >= 1 ? dit : world;
    if (launch.given && launch.nnodes > 1 && vaeRanks == 0) {
      reading.flags.nnodes = launch.nnodes;
      reading.flags.gpusPerNode = launch.nprocPerNode;
    }
    reading.flags.dp = std::max<int64_t>(dp, 1);
    reading.flags.cfg = cfg;
    reading.flags.ulysses = std::max<int64_t>(ulysses, 1);
    reading.flags.ring = std::max<int64_t>(ring, 1);
    reading.flags.tp = std::max<int64_t>(tp, 1);
    reading.flags.pp = std::max<int64_t>(pp, 1);
    reading.attentionBackend = given.get("--attention_backend");
    reading.model = given.get("--model");
    reading.workload.height = given.getInt("--height", 1, kAbsurdSize);
    reading.workload.width = given.getInt("--width", 1, kAbsurdSize);
    reading.workload.frames = given.getInt("--num_frames", 1, kAbsurdSize);
    reading.workload.steps = given.getInt("--num_inference_steps", 1, kAbsurdSize);
    reading.workload.guidanceScale = given.getDouble("--guidance_scale");
    reading.workload.maxSequenceLength = given.getInt("--max_sequence_length", 1, kAbsurdSize);
    // The runner's --batch_size (args.py:703-708); the example scripts batch
    // their --prompt words instead (nargs="*", config.py:308-318).
    reading.workload.batch = given.getInt("--batch_size", 1, kAbsurdSize);
    if (auto prompts = given.values.find("--prompt");
        !reading.workload.batch && prompts != given.values.end() && prompts->second.size() > 1) {
      reading.workload.batch = int64_t(prompts->second.size());
      reading.derivations.push_back("batch " + std::to_string(prompts->second.size()) +
                                    ": one per --prompt word (config.py:308-318)");
    }
    return reading;
  }

  std::vector<EngineFinding> check(const EngineTarget &target) const override {
    std::vector<EngineFinding> findings;
    const Degrees &d = target.deployment.find("transformer")->degrees;
    std::string family = familyOf(target.spec);
    XDiTSupport support = xdiTSupportOf(family);
    auto refuse = [&](const std::string &axis) {
      findings.push_back({"xdit-model-support",
                          "xDiT offers no " + axis + " for " + target.spec.name + " (" +
                              target.spec.className + ")"});
    };
    bool parallel = d.worldSize() > d[Axis::DP];
    if (!support.listed && parallel)
      findings.push_back({"xdit-model-support",
                          "xDiT has no parallel pipeline for " + target.spec.name + " (" +
                              target.spec.className + ")"});
    if (support.listed) {
      if (d[Axis::CFG] > 1 && !support.cfg)
        refuse("CFG parallel");
      if (d[Axis::Ulysses] * d[Axis::Ring] > 1 && !support.sp)
        refuse("sequence parallel");
      if (d[Axis::PP] > 1 && !support.pipefusion)
        refuse("PipeFusion");
      if (d[Axis::TP] > 1 && !support.tp)
        refuse("tensor parallel");
    }
    int64_t heads = target.spec.numHeads;
    if (d[Axis::Ulysses] > 1 && heads > 0 && (heads % d[Axis::Ulysses] != 0 || heads < d[Axis::Ulysses]))
      findings.push_back({"xdit-heads", "transformer backbone has " + std::to_string(heads) +
                                            " heads, which is not divisible by or smaller "
                                            "than ulysses_degree " +
                                            std::to_string(d[Axis::Ulysses]) + "."});
    if (d[Axis::KVGather] > 1)
      findings.push_back({"xdit-no-kv-gather",
                          "kv_gather " + std::to_string(d[Axis::KVGather]) +
                              ": xDiT has no K/V-gather axis (ring or ulysses instead)"});
    if (d[Axis::Ring] > 1 && target.attentionBackend && refusesRing(*target.attentionBackend))
      findings.push_back({"xdit-ring-backend",
                          "Selected attention backend does not support ring parallelism "
                          "(ring " + std::to_string(d[Axis::Ring]) + " with " +
                              *target.attentionBackend + ")"});
    // PipeFusion's patches: the latent rows, cut into pipeline patches of
    // whole patch rows per sequence-parallel rank (runtime_state.py:641-687),
    // in token rows. (Sequence parallelism alone splits the token sequence
    // in the runner's pipelines, so only PipeFusion is held to rows.)
    int64_t sp = d[Axis::Ulysses] * d[Axis::Ring];
    int64_t patchRows = std::max<int64_t>(target.spec.patch[1], 1);
    int64_t rows = target.workload.latentHeight / patchRows;
    int64_t patches = std::max<int64_t>(d[Axis::PP], 1);
    if (patches > 1) {
      std::string why;
      if (target.workload.latentHeight % sp != 0) {
        why = "The height of the input is not divisible by the number of sequence parallel "
              "devices";
      } else {
        int64_t per = (rows + patches - 1) / patches;
        per = (per + sp - 1) / sp * sp;
        int64_t count = (rows + per - 1) / per;
        int64_t last = rows - per * (count - 1);
        if (last <= 0 || last % sp != 0)
          why = "The height of the last pipeline patch is not a multiple of the sequence "
                "parallel degree";
      }
      if (!why.empty())
        findings.push_back({"xdit-patch-rows",
                            why + " (" + std::to_string(target.workload.latentHeight) +
                                " latent rows, " + std::to_string(rows) +
                                " patch rows, sp " + std::to_string(sp) + ", " +
                                std::to_string(patches) + " pipeline patch" +
                                (patches == 1 ? "" : "es") + ")"});
    }
    return findings;
  }

  EmittedLaunch launchLine(const EngineTarget &target,
                           std::vector<EngineFinding> &refusals) const override {
    const Deployment &deployment = target.deployment;
    const Degrees &d = deployment.find("transformer")->degrees;
    if (d[Axis::CFG] > 2)
      refusals.push_back({"xdit-model-support",
                          "cfg " + std::to_string(d[Axis::CFG]) +
                              ": xDiT's CFG parallel degree is 2 or nothing"});
    if (deployment.numGpus != d.worldSize())
      refusals.push_back({"xdit-world-size", "the deployment holds ranks beyond the "
                                             "transformer's; xDiT runs every rank as DiT"});
    if (!refusals.empty())
      return {};
    EmittedLaunch launch;
    int64_t perNode = deployment.ranksPerNode().value_or(deployment.numGpus);
    std::vector<std::string> argv = {"torchrun", "--nproc_per_node=" + std::to_string(perNode)};
    // torchrun's rendezvous on node 0 (examples/run_multinodes.sh:24-27).
    if (int64_t nodes = deployment.numGpus / perNode; nodes > 1) {
      argv.insert(argv.end(), {"--nnodes=" + std::to_string(nodes), "--node_rank=0",
                               "--master_addr=" + std::string(kFirstNodeAddress),
                               "--master_port=29500"});
      launch.notes.push_back(multiNodeNote(nodes, "--node_rank"));
    }
    argv.insert(argv.end(), {"-m", "xfuser.runner", "--model", modelWord(target.spec)});
    auto add = [&](const std::string &flag, int64_t value) {
      if (value != 1)
        argv.insert(argv.end(), {flag, std::to_string(value)});
    };
    add("--data_parallel_degree", d[Axis::DP]);
    if (d[Axis::CFG] == 2)
      argv.push_back("--use_cfg_parallel");
    add("--ulysses_degree", d[Axis::Ulysses]);
    add("--ring_degree", d[Axis::Ring]);
    add("--pipefusion_parallel_degree", d[Axis::PP]);
    add("--tensor_parallel_degree", d[Axis::TP]);
    appendWorkload(argv, target, '_');
    // The runner's own flags; without them it runs batch 1 and the model's
    // default text length (args.py:570-574, 703-708).
    add("--batch_size", target.workload.batch);
    const FamilyInfo &family = target.spec.family;
    if (target.workload.textTokens != family.textTokens)
      argv.insert(argv.end(), {"--max_sequence_length",
                               std::to_string(target.workload.textTokens -
                                              family.fixedTextTokens)});
    launch.argv = argv;
    launch.text = shellLine(argv);
    return launch;
  }
};

} // namespace

const Engine &xditEngine() {
  static const XDiT engine;
  return engine;
}

} // namespace ditc::engines
