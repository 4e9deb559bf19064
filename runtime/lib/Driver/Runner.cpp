//===- Runner.cpp - one rank's whole run: load, agree, denoise, write -----===//
#include "ditc/Runtime/Driver/Runner.h"
#include "ditc/Runtime/Driver/PictureOutputs.h"
#include "ditc/Runtime/Driver/PromptStage.h"
#include "ditc/Runtime/Driver/Report.h"
#include "ditc/Runtime/Comm/ProcessGroups.h"
#include "ditc/Runtime/Plan/CollectivePairing.h"
#include "ditc/Runtime/Plan/ProgramReader.h"
#include "ditc/Runtime/Exec/Executor.h"
#include "ditc/Runtime/IO/Initializer.h"
#include "ditc/Runtime/Driver/MemoryCheck.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Runtime/IO/RequestInputs.h"
#include "ditc/Runtime/Exec/Threads.h"
#include "ditc/Runtime/IO/Requests.h"
#include "ditc/Runtime/IO/Weights.h"
#include "ditc/Runtime/Sched/Schedulers.h"
#include "ditc/Runtime/Text/PipelinePrompts.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/ReadFile.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <dlfcn.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <chrono>
#include <climits>
#include <ctime>
#include <cstdlib>
#include <cstdio>
#include <set>
#include <thread>
#include <unistd.h>

namespace ditc::runtime {

using Clock = std::chrono::steady_clock;

namespace {
struct LoadedRank {
  Manifest manifest;
  std::vector<Program> programs; // program, then program_2
  std::vector<Request> requests; // this rank's replica's share, in order
  std::shared_ptr<const checkpoint::Snapshot> weights; // --weights, checked
  /// Every program any rank runs, in a full plan folder; empty for a
  /// rank-<r>/ bundle, which holds only its own.
  std::map<std::string, Program> every;
  Schedule schedule;
  /// The VAE stage, when an output is a picture or a video (.png, .mp4).
  std::optional<PictureOutputs> pictures;
  /// The text stage, when a request brings a prompt (Text/PipelinePrompts.h).
  std::unique_ptr<PipelinePrompts> prompts;
};
} // namespace

/// The rank a rank-<r>/ bundle folder was written for, or -1.
static int64_t bundleRank(const std::string &dir) {
  std::string name = dir.substr(dir.find_last_of('/') + 1);
  // Ranks are below 2^20, so more than 7 digits is no bundle ditc wrote.
  if (name.rfind("rank-", 0) != 0 || name.size() == 5 || name.size() > 12 ||
      name.find_first_not_of("0123456789", 5) != std::string::npos)
    return -1;
  return std::stoll(name.substr(5));
}

/// Loads `id`, explaining a missing file when the folder is another rank's
/// bundle.
static Program loadRankProgram(const Manifest &m, const std::string &id,
                               int64_t rank) {
  int64_t bundle = bundleRank(m.dir);
  if (bundle >= 0 && bundle != rank &&
      ::access((m.dir + "/" + m.programEntry(id).file).c_str(), F_OK) != 0)
    throw BadInput(m.dir + ": is the bundle of rank " + std::to_string(bundle) +
                   " and holds only its programs, but rank " + std::to_string(rank) +
                   " runs program '" + id + "'; start rank " + std::to_string(rank) +
                   " on rank-" + std::to_string(rank) +
                   "/ or on the full plan folder (--nproc needs the full folder)");
  return loadProgram(m, id);
}

/// The run's schedule (Schedulers.h): --sigmas verbatim, or the scheduler
/// config's, or the linear default.
static Schedule planSchedule(const RunOptions &options, const Manifest &m) {
  ScheduleRequest request;
  request.family = m.family;
  request.steps = options.steps > 0 ? options.steps : m.steps;
  int64_t frames = m.latentFrames / m.patch[0];
  request.imageSeqLen = frames * (m.latentHeight / m.patch[1]) * (m.latentWidth / m.patch[2]);
  request.videoSeqLen = m.latentFrames * m.latentHeight * m.latentWidth;
  request.configPath = options.schedulerConfig;
  // A diffusers pipeline folder stands for its scheduler/scheduler_config.json.
  struct stat info;
  if (!request.configPath.empty() && ::stat(request.configPath.c_str(), &info) == 0 &&
      S_ISDIR(info.st_mode)) {
    request.configPath = schedulerConfigIn(options.schedulerConfig);
    if (request.configPath.empty())
      throw BadInput("--scheduler-config " + escapeInvalidUtf8(options.schedulerConfig) +
                     ": is a folder without scheduler/scheduler_config.json; give the "
                     "file itself or a diffusers pipeline folder");
  }
  // A pipeline snapshot carries its scheduler: --weights DIR runs it unless
  // --scheduler-config names another (a transformer folder has none, and
  // keeps the linear default).
  if (request.configPath.empty() && !options.weights.empty())
    request.configPath = schedulerConfigIn(options.weights);
  request.sigmas = options.sigmas;
  if (options.sigmas && options.steps > 0 &&
      int64_t(options.sigmas->size()) != options.steps + 1)
    throw BadInput("--sigmas holds " + std::to_string(options.sigmas->size()) +
                   " sigmas, so " + std::to_string(options.sigmas->size() - 1) +
                   " steps, but --steps is " + std::to_string(options.steps) +
                   "; give K + 1 sigmas for K steps, or drop --steps");
  return buildSchedule(request);
}

static LoadedRank load(const RunOptions &options, bool run = true) {
  LoadedRank loaded{loadManifest(options.planDir), {}, {}, {}};
  const Manifest &m = loaded.manifest;
  if (options.worldSize != m.worldSize())
    throw BadInput("WORLD_SIZE/--nproc is " + std::to_string(options.worldSize) +
                   " but " + m.path + " is a plan for " +
                   std::to_string(m.worldSize()) + " ranks");
  if (options.rank < 0 || options.rank >= m.worldSize())
    throw BadInput("RANK is " + std::to_string(options.rank) + "; expected [0, " +
                   std::to_string(m.worldSize() - 1) + "]");
  // In a full plan folder every rank (and the launcher) validates every
  // program any rank runs, and that they pair up, so a plan that would hang
  // its ranks is refused before any of them meets another. A rank-<r>
  // bundle holds only its own programs; its peers check theirs.
  std::map<std::string, Program> &every = loaded.every;
  if (bundleRank(m.dir) < 0)
    every = loadEveryProgram(m);
  const RankEntry &entry = m.ranks[options.rank];
  for (const auto &id : {entry.program, entry.program2})
    if (id)
      loaded.programs.push_back(every.count(*id)
                                    ? every.at(*id)
                                    : loadRankProgram(m, *id, options.rank));
  // The snapshot is checked against every program any rank runs when the
  // folder holds them all, so the launcher refuses it once, before any rank
  // starts; a bundle checks its own programs.
  if (!options.weights.empty()) {
    std::vector<const Program *> checked;
    for (const auto &entry : every)
      checked.push_back(&entry.second);
    if (checked.empty())
      for (const Program &p : loaded.programs)
        checked.push_back(&p);
    loaded.weights = openWeights(options.weights, m, checked);
  }
  // Every request is checked by every rank before the rendezvous, so a bad
  // line stops the whole run before any work, whichever replica serves it.
  RequestDefaults defaults{options.seed,         options.textEmbeds,   options.latents,
                           options.output,       options.requestsFile, options.pooledEmbeds,
                           options.textMask,     options.guidanceScale, options.prompt,
                           options.negativePrompt};
  int64_t replicas = m.axisSize("dp");
  std::vector<Request> requests = buildRequests(defaults, replicas);
  std::set<std::string> checkedInputs;
  for (const Request &request : requests) {
    try {
      if (!request.textEmbeds.empty() && checkedInputs.insert(request.textEmbeds).second)
        readTextEmbeds(request, m);
      if (!request.latents.empty() && checkedInputs.insert(request.latents).second)
        readLatents(request, m);
      if (!request.pooledEmbeds.empty() &&
          checkedInputs.insert(request.pooledEmbeds).second)
        readPooledEmbeds(request, m);
      if (!request.textMask.empty() && checkedInputs.insert(request.textMask).second)
        readTextMask(request, m, loaded.programs);
      checkGuidanceScale(request, m, loaded.programs);
    } catch (const BadInput &error) {
      if (!request.fromFile())
        throw;
      throw BadInput(request.origin + ": " + error.what());
    }
  }
  loaded.prompts = loadPromptStage(options, m, requests, run);
  if ((!options.saveTextEmbeds.empty() || !options.savePooled.empty()) && !loaded.prompts)
    throw BadInput(std::string(options.saveTextEmbeds.empty() ? "--save-pooled"
                                                               : "--save-text-embeds") +
                   " needs --prompt: it writes the embeddings the prompt is encoded to");
  if (!options.savePooled.empty() && m.pooledDim == 0)
    throw BadInput("--save-pooled: " + m.modelName +
                   " takes no pooled text embeddings (its plan's pooled_dim is 0)");
  // The outputs, checked before any work against each other and against
  // every file the run reads (OutputPolicy.h).
  OutputPolicy outputs;
  outputs.readsInput("the plan folder", m.dir);
  outputs.readsInput("--requests", options.requestsFile);
  outputs.readsInput("--weights", options.weights);
  // A pipeline folder given as --scheduler-config is read for its
  // scheduler/scheduler_config.json only.
  struct stat schedulerInfo;
  bool schedulerFolder = ::stat(options.schedulerConfig.c_str(), &schedulerInfo) == 0 &&
                         S_ISDIR(schedulerInfo.st_mode);
  outputs.readsInput("--scheduler-config", schedulerFolder
                                               ? schedulerConfigIn(options.schedulerConfig)
                                               : options.schedulerConfig);
  for (const Request &request : requests) {
    std::string from = request.fromFile() ? request.origin + ": " : "--";
    outputs.readsInput(from + (request.fromFile() ? "text_embeds" : "text-embeds"),
                       request.textEmbeds);
    outputs.readsInput(from + "latents", request.latents);
    outputs.readsInput(from + (request.fromFile() ? "pooled_embeds" : "pooled-embeds"),
                       request.pooledEmbeds);
    outputs.readsInput(from + (request.fromFile() ? "text_mask" : "text-mask"),
                       request.textMask);
  }
  for (const Request &request : requests)
    if (isPictureOutput(request.output) && !loaded.pictures)
      loaded.pictures.emplace(m, options.weights);
  for (const Request &request : requests) {
    std::string flag = request.fromFile() ? request.origin + ": output" : "--output";
    if (!isPictureOutput(request.output)) {
      outputs.claimOutput(flag, request.output);
      continue;
    }
    loaded.pictures->checkOutput(flag, request.output, m.latentFrames);
    for (const std::string &path : loaded.pictures->outputPaths(request.output, m.batch))
      outputs.claimOutput(flag, path);
  }
  // Each replica saves its own pixels (P.dp<d>.npy), as it writes its own
  // output.
  for (int64_t d = 0; d < replicas && !options.savePixels.empty(); ++d)
    outputs.claimOutput("--save-pixels", replicaOutput(options.savePixels, d, replicas));
  if (!options.saveTextEmbeds.empty())
    outputs.claimOutput("--save-text-embeds", options.saveTextEmbeds);
  if (!options.savePooled.empty())
    outputs.claimOutput("--save-pooled", options.savePooled);
  if (!options.report.empty())
    outputs.claimOutput("--report", options.report);
  loaded.schedule = planSchedule(options, m);
  // Round-robin: replica d serves requests d, d + D, d + 2D, ...
  int64_t replica = m.ranks[options.rank].coords.at("dp");
  // The replica's decoding ranks (its leader alone, or the plan's VAE
  // bands) read and check their VAE tensors before the rendezvous, like
  // every other input.
  std::vector<int64_t> decoders = m.vaeDecoders(replica);
  if (loaded.pictures && std::count(decoders.begin(), decoders.end(), options.rank))
    loaded.pictures->loadParameters(uint64_t(options.seed));
  for (size_t k = size_t(replica); k < requests.size(); k += size_t(replicas))
    loaded.requests.push_back(requests[k]);
  return loaded;
}

/// The memory check before loading (MemoryCheck.h) for the ranks in
/// `hostRanks`, which share this host. A rank whose programs this folder
/// lacks (a bundle's peers) is taken to need what `options.rank` needs.
static void checkMemory(const RunOptions &options, const LoadedRank &loaded,
                        const std::vector<int64_t> &hostRanks) {
  if (!options.memoryCheck)
    return;
  const Manifest &m = loaded.manifest;
  int64_t elementBytes = options.bfloat16 ? 2 : 4;
  std::string dtype = options.bfloat16 ? "bfloat16" : "float32";
  std::vector<const Program *> own;
  for (const Program &p : loaded.programs)
    own.push_back(&p);
  RankMemoryNeed mine = estimateRankMemory(m, own, options.rank, elementBytes);
  std::vector<RankMemoryNeed> needs;
  for (int64_t rank : hostRanks) {
    const RankEntry &entry = m.ranks[rank];
    std::vector<const Program *> programs;
    bool known = true;
    for (const auto &id : {entry.program, entry.program2})
      if (id) {
        auto it = loaded.every.find(*id);
        known = known && it != loaded.every.end();
        if (known)
          programs.push_back(&it->second);
      }
    RankMemoryNeed need =
        rank == options.rank || !known ? mine
                                       : estimateRankMemory(m, programs, rank, elementBytes);
    need.rank = rank;
    // A rank that decodes its replica's pictures holds the VAE too.
    if (loaded.pictures) {
      std::vector<int64_t> decoders = m.vaeDecoders(m.ranks[size_t(rank)].coords.at("dp"));
      if (std::count(decoders.begin(), decoders.end(), rank)) {
        const VaeModel &vae = loaded.pictures->vae();
        std::vector<int64_t> bands = m.vaeBands();
        int64_t rows = *std::max_element(bands.begin(), bands.end()) + (bands.size() > 1 ? 2 : 0);
        need.vaeParamBytes = vaeParameterBytes(vae.parameters());
        need.decodeBytes = vae.decodePeakBytes(m.batch, m.latentFrames, rows, m.latentWidth);
      }
    }
    // The ranks that encode hold their share of the encoders (every rank
    // of a TP group the same share).
    if (loaded.prompts && encodesPrompts(m, rank)) {
      need.textParamBytes = loaded.prompts->parameterBytes();
      need.encodeBytes = loaded.prompts->encodePeakBytes(m.batch);
      need.textOffloaded = m.textEncoderOffload;
    }
    needs.push_back(need);
  }
  bool onDevice = options.rendezvous.backend == Backend::Nccl;
  checkHostMemory(m, needs, dtype, onDevice);
}

void validateBeforeRendezvous(const RunOptions &options) {
  // load() checks every program of a full plan folder; --nproc on a bundle
  // is refused here, naming the first rank whose program it lacks.
  LoadedRank loaded = load(options, /*run=*/false);
  if (bundleRank(loaded.manifest.dir) >= 0)
    for (const RankEntry &entry : loaded.manifest.ranks)
      for (const auto &id : {entry.program, entry.program2})
        if (id)
          loadRankProgram(loaded.manifest, *id, entry.rank);
  // --nproc starts every rank on this host.
  std::vector<int64_t> all;
  for (int64_t r = 0; r < loaded.manifest.worldSize(); ++r)
    all.push_back(r);
  checkMemory(options, loaded, all);
}

/// Axis tuples the programs use, in a canonical order (fewer axes first,
/// then by mesh position), so every rank builds its groups in one order.
static std::vector<std::vector<std::string>>
axisTuples(const Manifest &m, const std::vector<Program> &programs) {
  std::set<std::vector<std::string>> found;
  auto visit = [&](const Function &fn) {
    for (const Op &op : fn.ops)
      if (!op.axes.empty())
        found.insert(op.axes);
  };
  for (const Program &p : programs) {
    visit(p.step);
    for (const auto &fn : p.functions)
      visit(fn.second);
  }
  auto position = [&](const std::string &axis) {
    for (size_t i = 0; i < m.axes.size(); ++i)
      if (m.axes[i].name == axis)
        return int(i);
    return -1;
  };
  std::vector<std::vector<std::string>> tuples(found.begin(), found.end());
  for (auto &t : tuples)
    std::sort(t.begin(), t.end(), [&](const std::string &a, const std::string &b) {
      return position(a) < position(b);
    });
  std::sort(tuples.begin(), tuples.end(), [&](const auto &a, const auto &b) {
    if (a.size() != b.size())
      return a.size() < b.size();
    for (size_t i = 0; i < a.size(); ++i)
      if (position(a[i]) != position(b[i]))
        return position(a[i]) < position(b[i]);
    return false;
  });
  tuples.erase(std::unique(tuples.begin(), tuples.end()), tuples.end());
  return tuples;
}

namespace {
static double cpuClockMs(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

/// This thread's CPU time in milliseconds.
static double threadCpuMs() { return cpuClockMs(CLOCK_THREAD_CPUTIME_ID); }

/// This process's CPU time, all its threads, in milliseconds.
static double processCpuMs() { return cpuClockMs(CLOCK_PROCESS_CPUTIME_ID); }
} // namespace

void runRank(const RunOptions &options) {
  Clock::time_point start = Clock::now();
  // The memory breakdown of --report: before the plan, and once the
  // parameters are in place (before the first step).
  ResidentMemory residentStart = residentMemory(), residentReady;

  LoadedRank loaded = load(options); // BadInput stops here, before rendezvous
  const Manifest &m = loaded.manifest;
  int64_t rank = options.rank;
  checkMemory(options, loaded, ranksOnThisHost(rank, m.worldSize()));
  // Threads once the plan says which ranks share this host's cores; nothing
  // before this point computes.
  int64_t threads = configureThreads(
      options.threads > 0 ? options.threads : planDefaultThreads(m, rank));
  std::vector<const Program *> own;
  for (const Program &p : loaded.programs)
    own.push_back(&p);
  RankMemoryNeed estimate =
      estimateRankMemory(m, own, rank, options.bfloat16 ? 2 : 4);
  std::unique_ptr<Device> rankDevice = openRankDevice(rank, options.rendezvous.backend);
  if (options.memoryCheck && !rankDevice->isHost() && !loaded.programs.empty())
    checkDeviceMemory(m, estimate, *rankDevice, options.bfloat16 ? "bfloat16" : "float32");
  loaded.every.clear(); // only the rank's own programs run
  Vote vote{m.planHash, ""};
  for (const Program &p : loaded.programs)
    vote.programs += (vote.programs.empty() ? "" : ",") + p.id + ":" + p.sha256;
  if (vote.programs.empty())
    vote.programs = "-";

  Communicator comm(m, rank, vote, axisTuples(m, loaded.programs),
                    options.rendezvous, std::move(rankDevice));
  at::ScalarType computeType = options.bfloat16 ? at::kBFloat16 : at::kFloat;
  std::vector<std::unique_ptr<Executor>> experts;
  for (const Program &p : loaded.programs)
    experts.push_back(std::make_unique<Executor>(m, rank, p, &comm, computeType));
  // Expert offload: every expert but the first starts released, and is made
  // (read from --weights, or drawn from the seed) when its first step
  // comes, after the others are freed.
  if (m.expertOffload)
    for (size_t i = 1; i < experts.size(); ++i)
      experts[i]->releaseParameters(
          loaded.weights ? &loaded.weights->component(experts[i]->program().expert) : nullptr);
  // --weights: each rank reads its own slices, once, whatever the seed.
  WeightsRead weightsRead;
  if (loaded.weights) {
    Clock::time_point loadStart = Clock::now();
    double cpuStart = threadCpuMs();
    std::set<std::string> components;
    for (auto &executor : experts) {
      const std::string &expert = executor->program().expert;
      if (executor->parametersResident())
        executor->loadParameters(loaded.weights->component(expert));
      components.insert(expert);
    }
    for (const std::string &expert : components) {
      const checkpoint::TransformerWeights &w = loaded.weights->component(expert);
      weightsRead.headerBytes += w.headerBytes();
      weightsRead.dataBytes += w.bytesRead() - w.headerBytes();
    }
    for (const std::string &expert : loaded.weights->components())
      if (expert == "transformer" || m.experts == 2)
        weightsRead.totalBytes += loaded.weights->component(expert).dataBytes();
    weightsRead.cpuMs = threadCpuMs() - cpuStart;
    weightsRead.ms =
        std::chrono::duration<double, std::milli>(Clock::now() - loadStart).count();
  }
  const Schedule &schedule = loaded.schedule;
  int64_t steps = int64_t(schedule.steps.size());
  auto device = at::TensorOptions(at::kFloat).device(comm.device());
  int64_t replica = m.ranks[rank].coords.at("dp");
  bool leader = rank == m.replicaLeader(replica);
  comm.takeCommTimes();
  double setupMs =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();

  // Each replica serves its requests one after another; replicas exchange
  // nothing, so they may serve different counts.
  std::vector<StepTiming> timings;
  std::vector<std::pair<std::string, std::vector<int64_t>>> written;
  std::vector<int64_t> seeds; // of the outputs written, in order
  std::vector<std::string> decoded; // the picture and video outputs, described
  // Every output of the run is staged and committed once every rank has
  // finished, or removed when any fails (OutputPolicy.h).
  StagedOutputs staged;
  // Encoding over the plan's text_encoder ranks: a split encoder sums its
  // partial outputs over their TP group.
  if (loaded.prompts && comm.textEncoderTpGroup()) {
    Group *group = comm.textEncoderTpGroup();
    at::Device device = comm.device();
    bool onHost = comm.rankDevice().isHost();
    loaded.prompts->setAllReduce([group, device, onHost](at::Tensor &x) {
      if (onHost) {
        group->allreduce(x)();
        return;
      }
      at::Tensor onDevice = x.to(device);
      group->allreduce(onDevice)();
      x.copy_(onDevice.cpu());
    });
  }
  // The plan's text_encoder offload: every request's prompts are encoded
  // first, then the encoders are freed before the first step.
  // Every rank with a program takes part (it receives the broadcast), and
  // so does an encoder on ranks of its own.
  bool joinsEncoding = !experts.empty() || encodesPrompts(m, rank);
  std::vector<std::vector<PromptEmbeddings>> offloaded;
  if (loaded.prompts && m.textEncoderOffload && joinsEncoding) {
    for (const Request &request : loaded.requests)
      offloaded.push_back(request.prompt ? encodeRequestPrompts(m, *loaded.prompts, request, comm)
                                         : std::vector<PromptEmbeddings>());
    loaded.prompts->release();
  }
  for (const Request &request : loaded.requests) {
    // Synthetic parameters are a function of the seed, as in a one-replica
    // run of the same request (loaded ones stay as they are).
    for (auto &executor : experts)
      executor->materializeParameters(request.seed);
    if (!residentReady.total)
      residentReady = residentMemory();
    // Step inputs: this rank's noise block, and the text of every branch.
    StepValue latents;
    std::vector<at::Tensor> texts, pooled, givenPooled, textMasks;
    if (!request.pooledEmbeds.empty())
      givenPooled = readPooledEmbeds(request, m);
    // Without --text-mask every text token is valid, as with an all-ones
    // prompt_attention_mask.
    std::vector<at::Tensor> givenMasks;
    if (!request.textMask.empty())
      givenMasks = readTextMask(request, m, loaded.programs);
    // Branch 0 the prompt, the unconditional branch last: the negative
    // prompt, "" when none is given (as the pipelines encode it).
    std::vector<PromptEmbeddings> branches;
    if (request.prompt && joinsEncoding)
      branches = offloaded.empty() ? encodeRequestPrompts(m, *loaded.prompts, request, comm)
                                   : offloaded[size_t(&request - loaded.requests.data())];
    if (!experts.empty()) {
      latents.tensor =
          request.latents.empty()
              ? drawNoiseBlock(request.seed, m, m.latentBlock(rank))
              : patchifyBlock(readLatents(request, m), m, m.latentBlock(rank));
      latents.tensor = latents.tensor.to(comm.device());
      std::vector<at::Tensor> given;
      if (!request.textEmbeds.empty())
        given = readTextEmbeds(request, m);
      if (request.prompt) {
        // Each branch is encoded once and repeated over the batch, as the
        // pipelines repeat it for num_images_per_prompt.
        for (const PromptEmbeddings &encoded : branches) {
          given.push_back(encoded.text.expand({m.batch, -1, -1}).contiguous());
          givenPooled.push_back(encoded.pooled.defined()
                                    ? encoded.pooled.expand({m.batch, -1}).contiguous()
                                    : at::zeros({m.batch, int64_t(0)}));
        }
        if (leader && !options.saveTextEmbeds.empty()) {
          at::Tensor all = at::stack(given).contiguous();
          staged.stage(options.saveTextEmbeds, encodeNpy(all.sizes().vec(), all.data_ptr<float>()));
        }
        if (leader && !options.savePooled.empty()) {
          at::Tensor all = at::stack(givenPooled).contiguous();
          staged.stage(options.savePooled, encodeNpy(all.sizes().vec(), all.data_ptr<float>()));
        }
      }
      for (int64_t b = 0; b < m.branches; ++b) {
        texts.push_back((given.empty()
                             ? drawNormal(request.seed, "text" + std::to_string(b),
                                          {m.batch, m.textTokens, m.textEmbedDim})
                             : given[b])
                            .to(comm.device()));
        textMasks.push_back((givenMasks.empty() ? at::ones({m.batch, m.textTokens})
                                                : givenMasks[b])
                                .to(comm.device()));
        pooled.push_back((givenPooled.empty()
                              ? drawNormal(request.seed, "pooled" + std::to_string(b),
                                           {m.batch, m.pooledDim})
                              : givenPooled[b])
                             .to(comm.device()));
      }
    }

    // The denoising loop over the schedule (Schedulers.h). A multistep
    // scheduler's history starts empty for every request.
    std::vector<at::Tensor> slots(size_t(schedule.slots));
    double guidance =
        guidanceInput(m.family, request.guidanceScale.value_or(m.guidanceScale));
    for (auto &executor : experts)
      executor->setGuidanceScale(request.guidanceScale);
    Progress progress(steps, rank == 0);
    for (int64_t step = 0; step < steps && !experts.empty(); ++step) {
      Clock::time_point stepStart = Clock::now();
      double stepCpuStart = processCpuMs();
      const ScheduleStep &at = schedule.steps[size_t(step)];
      // Two experts (Wan2.2 A14B): the high-noise one while the scheduler's
      // timestep is at or above boundary_ratio x 1000, as Wan's pipeline.
      Executor &executor =
          experts.size() > 1 && at.timestep < m.boundaryRatio * 1000.0 ? *experts[1]
                                                                       : *experts[0];
      if (m.expertOffload && !executor.parametersResident()) {
        // The switch (or a new request after it): free the other expert
        // first, so the two are never resident together.
        for (auto &other : experts)
          if (other.get() != &executor)
            other->releaseParameters();
        executor.restoreParameters(request.seed);
      }
      executor.setStepRule(&at.rule, &slots);
      std::map<int, StepValue> inputs;
      for (const StepInput &in : executor.program().inputs) {
        at::Tensor value;
        if (in.name == "latents") {
          // Possibly still in flight from the last stage: it resolves
          // when the step first reads it (seed 004's deferred latents).
          inputs[in.value] = latents;
          continue;
        }
        if (in.name == "timestep") // float32 in bfloat16 runs too
          value = at::full({m.batch}, at.timestep, device);
        else if (in.name == "sigma")
          value = at::scalar_tensor(at.sigma, device);
        else if (in.name == "sigma_next")
          value = at::scalar_tensor(at.sigmaNext, device);
        else if (in.name == "text")
          value = texts[in.branch];
        else if (in.name == "pooled_text")
          value = pooled[in.branch];
        else if (in.name == "text_mask")
          value = textMasks[in.branch];
        else // guidance, as the family's pipeline passes it
          value = at::full({m.batch}, guidance, device);
        inputs[in.value] = {value};
      }
      // validateProgram proved the program has exactly one output.
      std::vector<StepValue> outputs = executor.runStep(inputs, step + 1 == steps);
      latents = outputs[0];
      if (latents.pending < 0)
        latents.tensor = latents.tensor.to(at::kFloat);
      comm.rankDevice().synchronize();
      StepTiming timing;
      timing.totalMs =
          std::chrono::duration<double, std::milli>(Clock::now() - stepStart).count();
      timing.cpuMs = processCpuMs() - stepCpuStart;
      for (const auto &[key, time] : comm.takeCommTimes())
        timing.comm[key] = {time.rawSeconds * 1000.0, time.exposedSeconds * 1000.0,
                            time.peerWaitSeconds * 1000.0};
      timings.push_back(timing);
      progress.update(step + 1, timing.totalMs);
    }

    // Assemble the final latents on the replica's leader and write them
    // whole or not at all.
    int64_t blockTokens = m.latentTokens / m.latentBlocks();
    // After the last step nothing is in flight (dit.between_steps passes
    // through), but a pending value is resolved before the gather all the
    // same: no transfer may overlap the output group's.
    if (latents.pending >= 0)
      latents = {comm.finishTransfer(latents.pending).to(at::kFloat)};
    std::vector<at::Tensor> blocks = comm.gatherOutput(
        latents.tensor.defined() ? latents.tensor : at::Tensor(),
        {m.batch, blockTokens, m.latentFeatures});
    bool picture = isPictureOutput(request.output);
    VaeDecodeGroup vae(rank, comm.replicaLeader(), m.vaeDecoders(replica), m.vaeBands(),
                       comm.vaeBandGroup(), comm.vaeTransferGroup(),
                       {m.vaeExchanges, m.path});
    if (!leader && !(picture && vae.decodes()))
      continue;
    at::Tensor out;
    std::vector<int64_t> shape{m.batch, m.latentChannels, m.latentFrames, m.latentHeight,
                               m.latentWidth};
    if (leader) {
      at::Tensor tokens = at::cat(blocks, 1).to(at::kFloat).cpu();
      out = unpatchify(tokens, m);
      shape = out.sizes().vec();
    }
    if (picture) {
      // The leader sends each of the replica's decoding ranks its band of
      // latent rows and gathers the pixel bands back (VaeDecodeGroup.h).
      loaded.pictures->loadParameters(uint64_t(request.seed));
      std::string pixels = options.savePixels.empty()
                               ? std::string()
                               : replicaOutput(options.savePixels, replica, m.axisSize("dp"));
      std::string line = loaded.pictures->stage(staged, out, shape, request.output, pixels, &vae);
      if (leader)
        decoded.push_back(request.output + ": " + line);
      continue;
    }
    staged.stage(request.output, encodeNpy(shape, out.data_ptr<float>()));
    written.emplace_back(request.output, shape);
    seeds.push_back(request.seed);
  }
  // Peak memory for the report: every rank's peak RSS and parameters, so
  // activations and workspace are their difference.
  std::vector<std::vector<int64_t>> memory, read, stepCpu;
  if (!options.report.empty() && loaded.weights)
    read = comm.collectOnRankZero(
        "weights-read", {weightsRead.dataBytes, weightsRead.headerBytes,
                         int64_t(weightsRead.ms * 1000.0),
                         int64_t(weightsRead.cpuMs * 1000.0)});
  if (!options.report.empty()) {
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    int64_t params = 0;
    for (auto &executor : experts)
      params += executor->parameterBytes();
    memory = comm.collectOnRankZero(
        "memory", {int64_t(usage.ru_maxrss) * 1024, params, estimate.total(),
                   residentStart.total, residentReady.total, residentMemory().file,
                   comm.rankDevice().peakBytes().value_or(-1)});
    // Every rank's CPU time per step, in microseconds: with more ranks than
    // cores, the wall time of a step says how long it took, this says how
    // much of the host it took.
    std::vector<int64_t> cpuMicros;
    for (const StepTiming &t : timings)
      cpuMicros.push_back(int64_t(t.cpuMs * 1000.0));
    stepCpu = comm.collectOnRankZero("step-cpu", cpuMicros);
  }
  for (auto &executor : experts)
    printOpProfile(rank, executor->program().id, int64_t(timings.size()),
                   executor->opProfile());
  if (rank == 0 && !options.report.empty()) {
    ReportFacts facts;
    facts.steps = steps;
    facts.requests = loaded.requests.size();
    facts.setupMs = setupMs;
    facts.threads = threads;
    facts.allReduceTransport = comm.hostTransports(true);
    facts.allToAllTransport = comm.hostTransports(false);
    facts.memory = memory;
    facts.stepCpu = stepCpu;
    facts.weightsReadPerRank = read;
    facts.timings = timings;
    facts.weights = loaded.weights ? &weightsRead : nullptr;
    staged.stage(options.report, runReportJson(m, options, schedule, facts));
  }
  // Outputs land only when the whole run has succeeded.
  comm.waitForEveryRank("finish");
  staged.commit();
  for (const std::string &line : decoded)
    std::fprintf(stderr, "dit-run: rank %lld wrote %s\n", (long long)rank, line.c_str());
  if (rank != 0) {
    for (size_t i = 0; i < written.size(); ++i)
      std::printf("dit-run: rank %lld (dp replica %lld) wrote %s: latents %s "
                  "float32, seed %lld\n",
                  (long long)rank, (long long)replica, written[i].first.c_str(),
                  formatShape(written[i].second).c_str(), (long long)seeds[i]);
    std::fflush(stdout);
    return;
  }
  printSummary(m, options, schedule, steps, timings, setupMs,
               experts.empty() ? 0 : experts[0]->parameterBytes(), threads, written,
               loaded.weights ? &weightsRead : nullptr);
}

} // namespace ditc::runtime
