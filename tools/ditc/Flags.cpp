//===- Flags.cpp - the flags several ditc commands take -------------------===//
#include "Commands.h"

namespace ditc {

Flag formatFlag(std::string help) {
  return Flag::option("--format", "", std::move(help))
      .choices({{"text", ""}, {"json", ""}});
}

const Flag kFormatFlag = formatFlag("output format (default text)");
const Flag kDtypeFlag =
    Flag::option("--dtype", "", "element type (default bf16)")
        .choices({{"bf16", ""}, {"f32", ""}});
const Flag kHelpFlag = Flag::helpFlag("-h", "this help");
const Flag kHelpLongFlag = Flag::helpFlag("--help", "");

const char *const kModelArgument =
    "a MODEL (a bundled name, config.json or folder)";

const char *const kModelHelp =
    R"(MODEL is a bundled model name (see `ditc models`; any case, or the Hugging
Face repository id of the same checkpoint, e.g. black-forest-labs/FLUX.1-dev),
a diffusers transformer config.json, or an HF-style snapshot folder
(model_index.json, transformer/config.json, vae/config.json).
)";

const char *const kBadInputExit =
    "            2 bad input (a flag, a file or a field)\n";

FlagGroup commonFlags(std::vector<const Flag *> flags) {
  flags.insert(flags.end(), {&kFormatFlag, &kHelpFlag, &kHelpLongFlag});
  return {"flags", flags};
}

//===----------------------------------------------------------------------===//
// Workload
//===----------------------------------------------------------------------===//

namespace {

const Flag kHeight =
    Flag::option("--height", "H",
                 "pixels; each divides by VAE compression x patch")
        .range(1, 65536);
const Flag kWidth = Flag::option("--width", "W", "").range(1, 65536);
const Flag kNumFrames =
    Flag::option("--num-frames", "F",
                 "1 + a multiple of the VAE temporal compression\n"
                 "(1 for image models)")
        .range(1, 100000);
const Flag kBatchSize =
    Flag::option("--batch-size", "B", "prompts per request (default 1)")
        .range(1, 4096);
const Flag kGuidanceScale = Flag::option(
    "--guidance-scale", "G", "CFG scale; at most 1 turns guidance off");
const Flag kSteps =
    Flag::option("--num-inference-steps", "N", "denoising steps")
        .range(1, 10000);
const Flag kTextTokens =
    Flag::option("--text-tokens", "L",
                 "text sequence length, diffusers' max_sequence_length\n"
                 "(1-65536; SD3 adds its 77 CLIP tokens; FLUX and\n"
                 "SD3 allow at most 512, Qwen-Image 1024)")
        .range(1, 65536);

} // namespace

FlagGroup workloadFlags() {
  return {"workload flags (defaults come from the family's diffusers "
          "pipeline)",
          {&kHeight, &kWidth, &kNumFrames, &kBatchSize, &kGuidanceScale,
           &kSteps, &kTextTokens}};
}

WorkloadOptions readWorkloadFlags(const ArgParser &args) {
  WorkloadOptions options;
  options.height = args.getInt(kHeight);
  options.width = args.getInt(kWidth);
  options.frames = args.getInt(kNumFrames);
  options.batch = args.getInt(kBatchSize);
  options.steps = args.getInt(kSteps);
  options.guidanceScale = args.getDouble(kGuidanceScale);
  options.maxSequenceLength = args.getInt(kTextTokens);
  return options;
}

//===----------------------------------------------------------------------===//
// Parallel configuration
//===----------------------------------------------------------------------===//

const Flag kNumGpusFlag = Flag::option("--num-gpus", "N", "world size")
                              .json("num_gpus")
                              .range(1, 1 << 20);

namespace {

Flag degree(const char *name, const char *metavar, const char *help,
            const char *json) {
  return Flag::option(name, metavar, help)
      .json(json)
      .range(1, kMaxParallelDegree);
}

const Flag kTpSize = degree("--tp-size", "T", "tensor parallelism", "tp_size");
const Flag kUlysses =
    degree("--ulysses-degree", "U", "Ulysses sequence parallelism (all-to-all)",
           "ulysses_degree");
const Flag kRing =
    degree("--ring-degree", "R", "ring attention", "ring_degree");
const Flag kKVGather =
    degree("--kv-gather-degree", "G", "sequence parallelism by K/V all-gather",
           "kv_gather_degree");
const Flag kSp = Flag::option("--sp-degree", "S",
                              "U x R x G; alone, 2 gives kv_gather 2 and more\n"
                              "gives ulysses S")
                     .range(1, kMaxParallelDegree);
const Flag kCfg =
    degree("--cfg-parallel-size", "C", "guidance branches on separate GPUs",
           "cfg_parallel_size");
// vLLM-Omni's name for the pipeline degree.
const Flag kPp = degree("--pp-size", "P", "pipeline stages", "pp_size")
                     .alias("--pipeline-parallel-size");
const Flag kDp = degree("--dp-size", "D", "replicas", "dp_size");
const Flag kPpPartition =
    Flag::option("--pp-layer-partition", "a,b,...",
                 "blocks per stage; without --pp-size, one stage\n"
                 "per entry");
const Flag kBackend =
    Flag::option("--attention-backend", "NAME",
                 "fa, sage_attn, sdpa or xformers (default fa)");
const Flag kVaeParallelSize =
    degree("--vae-parallel-size", "V",
           "ranks that decode each replica's latents, each\n"
           "a band of latent rows (default 1)",
           "vae_parallel_size");
const Flag kVaeRowSplit =
    Flag::option("--vae-row-split", "a,b,...",
                 "latent rows per VAE band when they are not\n"
                 "equal; without --vae-parallel-size, one band\n"
                 "per entry");
const Flag kTextEncoderTp =
    degree("--text-encoder-tp-size", "T",
           "ranks of each replica that encode its prompts,\n"
           "splitting the text encoders' heads and FFN;\n"
           "they broadcast the embeddings to the rest",
           "text_encoder_tp_size");
const Flag kTextEncoderOffload = Flag::switchFlag(
    "--text-encoder-offload",
    "free the text encoders' weights once the prompts\n"
    "are encoded (their memory is not held while\n"
    "denoising)");
const Flag kExpertOffload = Flag::switchFlag(
    "--expert-offload",
    "a two-expert model (Wan 2.2 A14B): keep only the\n"
    "active expert's weights resident, loading the\n"
    "second in place of the first at the switch");
const Flag kNnodes =
    Flag::option("--nnodes", "K", "node shape, for the cross-node warnings")
        .range(1, kMaxParallelDegree);
const Flag kGpusPerNode =
    Flag::option("--gpus-per-node", "M", "").range(1, kMaxParallelDegree);
/// The degree flags, by axis, in the order `ditc check` prints them.
struct DegreeFlag {
  Axis axis;
  const Flag *flag;
};
const DegreeFlag kDegreeFlags[] = {
    {Axis::TP, &kTpSize}, {Axis::Ulysses, &kUlysses},
    {Axis::Ring, &kRing}, {Axis::KVGather, &kKVGather},
    {Axis::CFG, &kCfg},   {Axis::PP, &kPp},
    {Axis::DP, &kDp}};

} // namespace

const Flag kMeshOrderFlag =
    Flag::option("--mesh-order", "a,b,...",
                 "mesh axes outermost first (default\n"
                 "dp,cfg,pp,ring,kv_gather,ulysses,tp)");
const Flag kHardwareFlag =
    Flag::option("--hardware", "NAME|FILE",
                 "the profile that ranks suggestions for an\n"
                 "illegal configuration (default h100-sxm; see\n"
                 "ditc search)");
const Flag kDeploymentFlag =
    Flag::option("--deployment", "FILE",
                 "per-component degrees and rank lists instead of\n"
                 "the parallel flags (see docs/cli.md)");

const std::vector<const Flag *> &deploymentFlags() {
  static const std::vector<const Flag *> flags = {
      &kNumGpusFlag, &kTpSize, &kUlysses,    &kRing, &kKVGather,
      &kSp,          &kCfg,    &kPp,         &kDp,   &kPpPartition,
      &kBackend,     &kVaeParallelSize, &kVaeRowSplit, &kTextEncoderTp,
      &kTextEncoderOffload, &kExpertOffload, &kNnodes, &kGpusPerNode};
  return flags;
}

FlagGroup parallelFlags() {
  std::vector<const Flag *> flags = deploymentFlags();
  flags.insert(flags.end(),
               {&kMeshOrderFlag, &kHardwareFlag, &kDeploymentFlag});
  return {"parallel flags (degrees default to 1, --num-gpus to their product)",
          flags};
}

ArgParser parseFlags(const std::string &command,
                     const std::vector<FlagGroup> &groups, const Argv &argv) {
  ArgParser args(command);
  for (const FlagGroup &group : groups)
    args.add(group.flags);
  args.parse(argv);
  return args;
}

ParallelFlags readParallelFlags(const ArgParser &args) {
  ParallelFlags flags;
  flags.numGpus = args.getInt(kNumGpusFlag);
  flags.tp = args.getInt(kTpSize);
  flags.ulysses = args.getInt(kUlysses);
  flags.ring = args.getInt(kRing);
  flags.kvGather = args.getInt(kKVGather);
  flags.sp = args.getInt(kSp);
  flags.cfg = args.getInt(kCfg);
  flags.pp = args.getInt(kPp);
  flags.dp = args.getInt(kDp);
  flags.ppPartition = args.get(kPpPartition);
  flags.backend = args.get(kBackend);
  flags.vaeParallelSize = args.getInt(kVaeParallelSize);
  flags.vaeRowSplit = args.get(kVaeRowSplit);
  flags.textEncoderTp = args.getInt(kTextEncoderTp);
  flags.textEncoderOffload = args.has(kTextEncoderOffload);
  flags.expertOffload = args.has(kExpertOffload);
  flags.nnodes = args.getInt(kNnodes);
  flags.gpusPerNode = args.getInt(kGpusPerNode);
  flags.meshOrder = args.get(kMeshOrderFlag);
  return flags;
}

std::string componentsAsFlags(const SuggestedComponents &c) {
  std::string out;
  if (c.expertOffload)
    out += " --expert-offload";
  if (c.textEncoderTpSize > 1)
    out += " --text-encoder-tp-size " + std::to_string(c.textEncoderTpSize);
  if (c.textEncoderOffload)
    out += " --text-encoder-offload";
  if (c.vaeParallelSize > 1)
    out += " --vae-parallel-size " + std::to_string(c.vaeParallelSize);
  return out;
}

std::string degreesAsFlags(const Degrees &d, int64_t numGpus) {
  std::string out = kNumGpusFlag.name + " " + std::to_string(numGpus);
  for (const DegreeFlag &f : kDegreeFlags)
    if (d[f.axis] > 1)
      out += " " + f.flag->name + " " + std::to_string(d[f.axis]);
  return out;
}

nlohmann::json degreesAsJson(const Degrees &d) {
  nlohmann::json out = nlohmann::json::object();
  for (const DegreeFlag &f : kDegreeFlags)
    out[f.flag->jsonKey] = d[f.axis];
  return out;
}

//===----------------------------------------------------------------------===//
// Format and element type
//===----------------------------------------------------------------------===//

Format readFormat(const ArgParser &args, const Flag &flag) {
  return args.getChoice(flag).value_or("text") == "json" ? Format::Json
                                                         : Format::Text;
}

ElementType readElementType(const ArgParser &args) {
  return args.getChoice(kDtypeFlag).value_or("bf16") == "f32"
             ? ElementType::F32
             : ElementType::BF16;
}

} // namespace ditc
