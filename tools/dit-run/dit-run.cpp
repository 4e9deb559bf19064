//===- dit-run.cpp - execute a compiled ditc plan on N ranks --------------===//
//
//   dit-run PLAN_DIR --nproc N (--output OUT.npy | --requests FILE.jsonl)
//           [--steps K] [--seed S] [--dtype float32|bfloat16] [--timeout SEC]
//           [--backend gloo|nccl] [--text-embeds FILE.npy] [--latents FILE.npy]
//           [--threads T] [--report FILE.json] [--weights SNAPSHOT_DIR]
//           [--skip-memory-check] [--scheduler-config FILE.json]
//           [--sigmas s0,...,sK] [--guidance-scale G] [--pooled-embeds FILE.npy]
//           [--prompt TEXT [--negative-prompt TEXT] [--save-text-embeds E.npy]
//            [--save-pooled P.npy]]
//   dit-run PLAN_DIR --decode-only --latents L.npy [--weights SNAPSHOT_DIR]
//           --output OUT.png [--save-pixels P.npy] [--nproc N] [--timeout SEC]
//
// With --nproc, starts N local ranks on loopback. Without it, runs one rank
// from torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT), so any launcher can place ranks on any host.
// Exit codes: 0 done, 1 run failure, 2 bad input.
//
//===----------------------------------------------------------------------===//
#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Device/Device.h"
#include "ditc/Runtime/Driver/DecodeOnly.h"
#include "ditc/Runtime/Driver/Launcher.h"
#include "ditc/Runtime/Driver/PictureOutputs.h"
#include "ditc/Runtime/IO/Requests.h"
#include "ditc/Runtime/Driver/Runner.h"
#include "ditc/Runtime/Exec/Threads.h"
#include "ditc/Runtime/Sched/Schedulers.h"
#include "ditc/Runtime/Text/Tokenizers.h"
#include "ditc/Support/ArgParser.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/BuildInfo.h"
#include "ditc/Support/Strings.h"
#include "ditc/Support/Utf8.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ditc;
using namespace ditc::runtime;

static const char *const kUsage =
    "usage: dit-run PLAN_DIR (--output OUT.npy | --requests FILE.jsonl) [--nproc N]\n"
    "               [--steps K] [--seed S] [--dtype float32|bfloat16] [--timeout SEC]\n"
    "               [--backend gloo|nccl] [--text-embeds FILE.npy] [--latents FILE.npy]\n"
    "               [--threads T] [--report FILE.json] [--weights SNAPSHOT_DIR]\n"
    "               [--skip-memory-check] [--scheduler-config FILE.json]\n"
    "               [--sigmas s0,...,sK] [--guidance-scale G] [--pooled-embeds FILE.npy]\n"
    "               [--text-mask FILE.npy]\n"
    "               [--prompt TEXT [--negative-prompt TEXT] [--save-text-embeds E.npy]\n"
    "                [--save-pooled P.npy]]\n"
    "       dit-run PLAN_DIR --decode-only --latents L.npy [--weights SNAPSHOT_DIR]\n"
    "               --output OUT.png|OUT.mp4 [--save-pixels P.npy] [--nproc N]\n"
    "  PLAN_DIR         a folder written by `ditc compile` (or one rank-<r>/ bundle)\n"
    "  --output OUT.npy the final latents [B, C, F, H, W]; with dp > 1, replica i\n"
    "                   serves seed + i and writes OUT.dp<i>.npy. OUT.png or OUT.mp4\n"
    "                   decodes them with the plan's VAE (pictures or videos;\n"
    "                   OUT.dp<i>.png with dp > 1)\n"
    "  --requests FILE  one JSON object per line, {\"seed\", \"text_embeds\",\n"
    "                   \"latents\", \"pooled_embeds\", \"text_mask\", \"guidance_scale\",\n"
    "                   \"output\",\n"
    "                   \"prompt\", \"negative_prompt\"},\n"
    "                   served round-robin by the dp replicas\n"
    "  --text-embeds F  text embeddings [branches, B, T, E] (default: drawn from the seed)\n"
    "  --latents F      initial noise [B, C, F, H, W] (default: drawn from the seed)\n"
    "  --weights DIR    the parameters from a diffusers snapshot (a pipeline folder or a\n"
    "                   transformer folder); each rank reads only its slices\n"
    "                   (default: drawn from the seed)\n"
    "  --pooled-embeds F  pooled text embeddings [branches, B, pooled_dim] (FLUX, SD3)\n"
    "  --text-mask F    the text's attention mask [branches, B, T], 1 valid and 0\n"
    "                   padding (HunyuanVideo, Mochi, Qwen-Image; default: all valid)\n"
    "  --prompt TEXT    encode TEXT with the pipeline's tokenizers and text encoders\n"
    "                   from --weights (FLUX: CLIP + T5, SD3: two CLIPs + T5, Wan:\n"
    "                   UMT5) instead of --text-embeds/--pooled-embeds\n"
    "  --negative-prompt TEXT  the unconditional branch's prompt (default \"\")\n"
    "       dit-run --version  the version, the torch it links, CUDA and NCCL, and\n"
    "                   the devices it sees\n"
    "       dit-run --tokenize TOKENIZER_DIR --prompt TEXT [--max-length N]\n"
    "                   prints the prompt's ids as that tokenizer gives them\n"
    "  --save-text-embeds E  also write the encoded text [branches, B, T, E] (.npy)\n"
    "  --save-pooled P  also write the pooled text [branches, B, pooled_dim] (.npy)\n"
    "  --guidance-scale G  overrides the plan's guidance scale\n"
    "  --scheduler-config F  a diffusers scheduler_config.json (or a pipeline folder\n"
    "                   holding scheduler/scheduler_config.json): the schedule and step\n"
    "                   of FlowMatchEulerDiscreteScheduler, UniPCMultistepScheduler\n"
    "                   (flow) or CogVideoXDDIMScheduler, as the model's pipeline runs it\n"
    "  --sigmas s0,...,sK  the scheduler's sigmas, used verbatim: K steps\n"
    "                   (default: linear from 1 to 0, flow-matching Euler)\n"
    "  --nproc N        start N local ranks on loopback; without it, run one rank from\n"
    "                   RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (torchrun)\n"
    "  --decode-only    decode --latents with the plan's VAE (AutoencoderKL,\n"
    "                   AutoencoderKLWan or AutoencoderKLQwenImage; its weights from\n"
    "                   --weights' vae/ folder, else drawn from seed 0) instead of\n"
    "                   denoising: one PNG (pictures) or H.264 MP4 (videos, Wan at\n"
    "                   16 fps) per batch item, OUT.png, OUT-1.png, ... (8-bit RGB,\n"
    "                   as diffusers converts); one process, or with --nproc (or a\n"
    "                   launcher) the plan's ranks, in bands when the plan splits the\n"
    "                   VAE (ditc compile --vae-parallel-size)\n"
    "  --save-pixels P  with OUT.png or OUT.mp4, also the float pixels as .npy:\n"
    "                   [B, 3, H, W] for pictures, [B, 3, F, H, W] for videos\n"
    "  --skip-memory-check  run even when the plan's estimated peak exceeds the\n"
    "                   memory available (by default refused before any rank starts)\n"
    "exit codes: 0 done, 1 run failure, 2 bad input\n";

static std::string requireEnv(const char *name) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    throw BadInput(std::string("without --nproc, dit-run runs one rank from the "
                               "torchrun variables RANK, WORLD_SIZE, MASTER_ADDR "
                               "and MASTER_PORT; ") +
                   name + " is not set");
  return value;
}

/// The arguments a launched rank gets: these, without --nproc.
static std::vector<std::string> withoutNproc(const std::vector<std::string> &args) {
  std::vector<std::string> rankArgs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0)
      continue;
    rankArgs.push_back(args[i]);
  }
  return rankArgs;
}

static int64_t envInt(const char *name, int64_t min, int64_t max) {
  return parseIntegerFlag(std::string("environment variable ") + name,
                          requireEnv(name), min, max);
}

/// A launched rank's place from torchrun-style variables: returns RANK,
/// sets `world` and the rendezvous address.
static int64_t joinFromEnvironment(RendezvousOptions &rendezvous, int64_t &world) {
  int64_t rank = envInt("RANK", 0, 1 << 20);
  world = envInt("WORLD_SIZE", 1, 1 << 20);
  rendezvous.masterAddr = requireEnv("MASTER_ADDR");
  rendezvous.masterPort = int(envInt("MASTER_PORT", 1, 65535));
  return rank;
}

/// `dit-run --version`: the project's version, the torch this binary was
/// compiled against, whether its CUDA and NCCL path is in, and the devices
/// this process sees now.
static void printVersion() {
  DeviceFacts facts = deviceFacts();
  std::printf("dit-run %s\n", DITC_VERSION_STRING);
  std::printf("torch: %s\n", facts.torchVersion.c_str());
  if (facts.cudaCompiled)
    std::printf("CUDA: compiled in (runtime %s)\nNCCL: compiled in (%s)\n",
                facts.cudaVersion.c_str(),
                facts.ncclVersion.empty() ? "library version unknown"
                                          : ("library " + facts.ncclVersion).c_str());
  else
    std::printf("CUDA: not compiled in\nNCCL: not compiled in\n");
  std::string devices;
  for (const std::string &device : facts.devices)
    devices += (devices.empty() ? "" : ", ") + device;
  std::printf("devices: %s\n", devices.c_str());
  if (!facts.gpuNote.empty())
    std::printf("GPUs: none seen (%s)\n", facts.gpuNote.c_str());
}

/// Skips static destructors: c10d's threads are done, and a fast exit
/// keeps a finished rank from waiting on peers' sockets.
[[noreturn]] static void exitFinishedRank() {
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(0);
}

/// dit-run with `args`; `argv` is the process's own, for the restart that
/// sets OMP_WAIT_POLICY. A launched rank runs this again, forked, with the
/// arguments less --nproc. Leaves through _exit except on --help.
static int runDitRun(const std::vector<std::string> &args, char **argv) {
  if (ArgParser::asksForHelp(args)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args.size() == 1 && args[0] == "--version") {
    printVersion();
    return 0;
  }
  int64_t rank = -1;
  try {
    ArgParser parser("dit-run");
    for (const char *flag : {"--nproc", "--output", "--steps", "--seed", "--dtype",
                             "--timeout", "--backend", "--text-embeds", "--threads",
                             "--report", "--latents", "--requests", "--weights",
                             "--pooled-embeds", "--text-mask", "--guidance-scale",
                             "--scheduler-config", "--sigmas", "--save-pixels",
                             "--save-text-embeds", "--save-pooled", "--tokenize",
                             "--max-length"})
      parser.addOption(flag);
    parser.addTextOption("--prompt");
    parser.addTextOption("--negative-prompt");
    parser.addSwitch("--skip-memory-check");
    parser.addSwitch("--decode-only");
    parser.parse(args);
    if (auto folder = parser.get("--tokenize")) {
      // A prompt's ids as the folder's tokenizer gives them; no plan.
      parser.expectPositionals(0, "");
      auto prompt = parser.get("--prompt");
      if (!prompt)
        throw BadInput("--tokenize needs --prompt TEXT");
      auto tokenizer = openTokenizerFolder(*folder);
      int64_t length = parser.getInt("--max-length", 2, 1 << 20)
                           .value_or(tokenizer->modelMaxLength());
      if (length < 2)
        throw BadInput(escapeInvalidUtf8(*folder) +
                       "/tokenizer_config.json states no model_max_length; pass --max-length");
      TokenizedPrompt tokens = tokenizer->encode(*prompt, length, "--prompt");
      std::string ids;
      for (int64_t i = 0; i < tokens.length; ++i)
        ids += (i ? ", " : "") + std::to_string(tokens.ids[size_t(i)]);
      std::printf("{\"ids\": [%s], \"length\": %lld, \"untruncated\": %lld}\n", ids.c_str(),
                  (long long)tokens.length, (long long)tokens.untruncatedLength);
      if (tokens.truncated())
        std::fprintf(stderr, "dit-run: warning: --prompt is %lld tokens; the pipeline keeps "
                             "the first %lld\n",
                     (long long)tokens.untruncatedLength, (long long)length);
      return 0;
    }
    parser.expectPositionals(1, "PLAN_DIR");
    if (parser.has("--decode-only")) {
      // The decode takes no denoising flags.
      for (const char *flag : {"--steps", "--seed", "--dtype", "--backend", "--text-embeds",
                               "--threads", "--report", "--requests", "--pooled-embeds",
                               "--guidance-scale", "--scheduler-config", "--sigmas",
                               "--text-mask",
                               "--prompt", "--negative-prompt", "--save-text-embeds",
                               "--save-pooled"})
        if (parser.get(flag))
          throw BadInput(std::string(flag) + " does not apply with --decode-only, "
                         "which decodes given latents");
      DecodeOptions decode;
      decode.planDir = parser.positional()[0];
      decode.latents = parser.get("--latents").value_or("");
      decode.weights = parser.get("--weights").value_or("");
      while (decode.weights.size() > 1 && decode.weights.back() == '/')
        decode.weights.pop_back();
      decode.output = parser.get("--output").value_or("");
      decode.savePixels = parser.get("--save-pixels").value_or("");
      decode.memoryCheck = !parser.has("--skip-memory-check");
      int64_t timeoutSeconds = parser.getInt("--timeout", 1, 86400).value_or(300);
      decode.rendezvous.timeout = std::chrono::milliseconds(timeoutSeconds * 1000);
      if (auto nproc = parser.getInt("--nproc", 1, 4096)) {
        // The plan's ranks on loopback, each decoding its band.
        decode.distributed = true;
        decode.worldSize = *nproc;
        // The ranks are forks of this process, so its own libgomp must
        // wait passively (Threads.h).
        restartForPassiveWait(argv);
        return launchLocalRanks(
            int(*nproc), decode.rendezvous.timeout, [&] { validateDecodeOnly(decode); },
            [&] { return runDitRun(withoutNproc(args), argv); });
      }
      if (std::getenv("WORLD_SIZE")) {
        // A rank started by --nproc or another launcher.
        restartForPassiveWait(argv);
        decode.distributed = true;
        rank = joinFromEnvironment(decode.rendezvous, decode.worldSize);
        decode.rank = rank;
        runDecodeOnly(decode);
        exitFinishedRank();
      }
      runDecodeOnly(decode);
      return 0;
    }
    if (auto pixels = parser.get("--save-pixels")) {
      if (!isPictureOutput(parser.get("--output").value_or("")))
        throw BadInput("--save-pixels needs --output OUT.png or OUT.mp4 (or "
                       "--decode-only): a run that writes latents decodes nothing");
      if (!endsWith(*pixels, ".npy"))
        throw BadInput("--save-pixels '" + pixels->substr(0, 200) + "' does not end in .npy");
    }
    RunOptions options;
    options.planDir = parser.positional()[0];
    while (options.planDir.size() > 1 && options.planDir.back() == '/')
      options.planDir.pop_back();
    if (parser.get("--requests") && parser.get("--output"))
      throw BadInput("--output and --requests both name outputs; each "
                     "line of the requests file gives its own \"output\"");
    if (!parser.get("--output") && !parser.get("--requests"))
      throw BadInput("dit-run: --output OUT.npy is required");
    options.output = parser.get("--output").value_or("");
    options.steps = parser.getInt("--steps", 1, 100000).value_or(0);
    options.seed = parser.getInt("--seed", 0, INT64_MAX).value_or(0);
    options.threads = parser.getInt("--threads", 1, 1024).value_or(0);
    options.textEmbeds = parser.get("--text-embeds").value_or("");
    options.latents = parser.get("--latents").value_or("");
    options.requestsFile = parser.get("--requests").value_or("");
    options.report = parser.get("--report").value_or("");
    options.savePixels = parser.get("--save-pixels").value_or("");
    options.weights = parser.get("--weights").value_or("");
    while (options.weights.size() > 1 && options.weights.back() == '/')
      options.weights.pop_back();
    options.memoryCheck = !parser.has("--skip-memory-check");
    options.pooledEmbeds = parser.get("--pooled-embeds").value_or("");
    options.textMask = parser.get("--text-mask").value_or("");
    // An empty --prompt is a prompt (the pipelines encode ""), not absent.
    options.prompt = parser.get("--prompt");
    options.negativePrompt = parser.get("--negative-prompt");
    if (options.prompt && (!options.textEmbeds.empty() || !options.pooledEmbeds.empty() ||
                           !options.textMask.empty()))
      throw BadInput(std::string(!options.textEmbeds.empty()     ? "--text-embeds"
                                 : !options.pooledEmbeds.empty() ? "--pooled-embeds"
                                                                 : "--text-mask") +
                     " and --prompt both give the text; pass one of them");
    if (options.negativePrompt && !options.prompt && !parser.get("--requests"))
      throw BadInput("--negative-prompt needs --prompt");
    for (const char *flag : {"--save-text-embeds", "--save-pooled"})
      if (auto path = parser.get(flag); path && !endsWith(*path, ".npy"))
        throw BadInput(std::string(flag) + " '" + path->substr(0, 200) +
                       "' does not end in .npy");
    options.saveTextEmbeds = parser.get("--save-text-embeds").value_or("");
    options.savePooled = parser.get("--save-pooled").value_or("");
    options.schedulerConfig = parser.get("--scheduler-config").value_or("");
    if (auto text = parser.get("--sigmas"))
      options.sigmas = parseSigmas(*text, "--sigmas");
    if (auto text = parser.get("--guidance-scale")) {
      double g = parseFloatFlag("--guidance-scale", *text);
      if (std::fabs(g) > kMaxGuidanceScale)
        throw BadInput("--guidance-scale value " + *text +
                       " is out of range; expected a number in [-1e6, 1e6]");
      options.guidanceScale = g;
    }
    std::string backend = parser.get("--backend").value_or("gloo");
    if (backend != "gloo" && backend != "nccl")
      throw BadInput("--backend is '" + backend + "'; expected gloo or nccl");
    // On GPUs (NCCL) bfloat16 is the default, as every DiT serves there; on
    // the CPU, float32.
    std::string dtype =
        parser.get("--dtype").value_or(backend == "nccl" ? "bfloat16" : "float32");
    if (dtype != "float32" && dtype != "bfloat16")
      throw BadInput("--dtype is '" + dtype + "'; expected float32 or bfloat16");
    options.bfloat16 = dtype == "bfloat16";
    options.rendezvous.backend = backend == "nccl" ? Backend::Nccl : Backend::Gloo;
    int64_t timeoutSeconds = parser.getInt("--timeout", 1, 86400).value_or(300);
    options.rendezvous.timeout = std::chrono::milliseconds(timeoutSeconds * 1000);

    if (auto nproc = parser.getInt("--nproc", 1, 4096)) {
      options.worldSize = *nproc;
      options.rank = 0;
      // The ranks are forks of this process, so its own libgomp must wait
      // passively (Threads.h). Bad input is refused once, by the launcher,
      // rather than once per rank.
      restartForPassiveWait(argv);
      return launchLocalRanks(
          int(*nproc), options.rendezvous.timeout, [&] { validateBeforeRendezvous(options); },
          [&] { return runDitRun(withoutNproc(args), argv); });
    }

    restartForPassiveWait(argv);
    rank = joinFromEnvironment(options.rendezvous, options.worldSize);
    options.rank = rank;
    runRank(options);
    exitFinishedRank();
  } catch (const BadInput &error) {
    std::fprintf(stderr, "dit-run: %s\n", error.what());
    std::fflush(stderr);
    ::_exit(2);
  } catch (const RunFailure &error) {
    std::fprintf(stderr, "dit-run: %s\n", error.what());
    std::fflush(stderr);
    // A failed collective may leave c10d worker threads blocked; exiting
    // without destructors guarantees the process ends now.
    ::_exit(1);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "dit-run: %s%s\n",
                 rank >= 0 ? ("rank " + std::to_string(rank) + ": ").c_str() : "",
                 firstLine(error).c_str());
    std::fflush(stderr);
    ::_exit(1);
  }
}

int main(int argc, char **argv) {
  setReproducibleBlas();
  return runDitRun(std::vector<std::string>(argv + 1, argv + argc), argv);
}
