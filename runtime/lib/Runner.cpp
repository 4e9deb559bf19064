//===- Runner.cpp - one rank's whole run: load, agree, denoise, write -----===//
#include "ditc/Runtime/Runner.h"
#include "ditc/Runtime/Executor.h"
#include "ditc/Runtime/Initializer.h"
#include "ditc/Runtime/MemoryCheck.h"
#include "ditc/Runtime/Npy.h"
#include "ditc/Runtime/Requests.h"
#include "ditc/Runtime/Weights.h"
#include "ditc/Runtime/Schedulers.h"
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

/// The outputs are checked before any work: each request's output and the
/// report must be absent or a regular file in a writable folder (never a
/// device, FIFO, symlink or folder), no two may name one file, and none may
/// lie inside the plan folder, whose files the run reads.
static void checkOutputs(const RunOptions &options, const Manifest &m,
                         const std::vector<Request> &requests) {
  char root[PATH_MAX];
  std::string plan = ::realpath(m.dir.c_str(), root) ? std::string(root) : m.dir;
  std::map<std::string, std::string> claimed; // canonical path -> who
  auto claim = [&](const std::string &flag, const std::string &path) {
    checkOutputPath(path, flag);
    std::string canonical = canonicalOutputPath(path);
    if (canonical.rfind(plan + "/", 0) == 0)
      throw BadInput(flag + " " + escapeInvalidUtf8(path) +
                     ": lies inside the plan folder " + escapeInvalidUtf8(plan) +
                     "; write outputs elsewhere, so a run never changes its plan");
    auto [it, fresh] = claimed.emplace(canonical, flag);
    if (!fresh)
      throw BadInput(flag + " " + escapeInvalidUtf8(path) +
                     ": is the same file as " + it->second +
                     "; give every output its own name");
  };
  for (const Request &request : requests)
    claim(request.fromFile() ? request.origin + ": output" : "--output",
          request.output);
  if (!options.report.empty())
    claim("--report", options.report);
}

/// Reads a request's --text-embeds, [branches, B, T, E], as one tensor per
/// branch; throws BadInput on a shape the plan cannot use.
static std::vector<at::Tensor> readTextEmbeds(const Request &request,
                                              const Manifest &m) {
  NpyArray array = readNpy(request.textEmbeds);
  std::vector<int64_t> expected = {m.branches, m.batch, m.textTokens, m.textEmbedDim};
  if (array.shape != expected)
    throw BadInput(escapeInvalidUtf8(request.textEmbeds) + ": shape is " +
                   describeShape(array.shape) + " but the plan needs " +
                   describeShape(expected) +
                   " = (branches, batch, text_tokens, text_embed_dim)");
  at::Tensor all = at::from_blob(array.data.data(), expected, at::kFloat).clone();
  std::vector<at::Tensor> texts;
  for (int64_t b = 0; b < m.branches; ++b)
    texts.push_back(all[b]);
  return texts;
}

/// Reads a request's --pooled-embeds, [branches, B, pooled_dim], as one
/// tensor per branch; throws BadInput on a shape the plan cannot use.
static std::vector<at::Tensor> readPooledEmbeds(const Request &request,
                                                const Manifest &m) {
  if (m.pooledDim == 0)
    throw BadInput(escapeInvalidUtf8(request.pooledEmbeds) + ": " + m.modelName +
                   " takes no pooled text embeddings (its plan's pooled_dim is 0); "
                   "--pooled-embeds is for FLUX and SD3");
  NpyArray array = readNpy(request.pooledEmbeds);
  std::vector<int64_t> expected = {m.branches, m.batch, m.pooledDim};
  if (array.shape != expected)
    throw BadInput(escapeInvalidUtf8(request.pooledEmbeds) + ": shape is " +
                   describeShape(array.shape) + " but the plan needs " +
                   describeShape(expected) + " = (branches, batch, pooled_dim)");
  at::Tensor all = at::from_blob(array.data.data(), expected, at::kFloat).clone();
  std::vector<at::Tensor> pooled;
  for (int64_t b = 0; b < m.branches; ++b)
    pooled.push_back(all[b]);
  return pooled;
}

/// A guidance scale needs something to act on: the CFG combine of a plan
/// with two or more branches, or the guidance input of a distilled model.
static void checkGuidanceScale(const Request &request, const Manifest &m,
                               const std::vector<Program> &programs) {
  if (!request.guidanceScale || m.branches > 1)
    return;
  for (const Program &p : programs)
    for (const StepInput &in : p.inputs)
      if (in.name == "guidance")
        return;
  throw BadInput(std::string(request.fromFile() ? "guidance_scale" : "--guidance-scale") +
                 " is given, but the plan runs one branch per step and " + m.modelName +
                 " embeds no guidance; compile with --guidance-scale G > 1 for "
                 "classifier-free guidance");
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

/// Reads a request's --latents, the initial noise in the layout --output
/// writes, [B, C, F, H, W].
static at::Tensor readLatents(const Request &request, const Manifest &m) {
  NpyArray array = readNpy(request.latents);
  std::vector<int64_t> expected = {m.batch, m.latentChannels, m.latentFrames,
                                   m.latentHeight, m.latentWidth};
  if (array.shape != expected)
    throw BadInput(escapeInvalidUtf8(request.latents) + ": shape is " +
                   describeShape(array.shape) + " but the plan's latents are " +
                   describeShape(expected) + " = (batch, channels, frames, height, "
                                             "width), as --output writes them");
  return at::from_blob(array.data.data(), expected, at::kFloat).clone();
}

static LoadedRank load(const RunOptions &options) {
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
  RequestDefaults defaults{options.seed,   options.textEmbeds,   options.latents,
                           options.output, options.requestsFile, options.pooledEmbeds,
                           options.guidanceScale};
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
      checkGuidanceScale(request, m, loaded.programs);
    } catch (const BadInput &error) {
      if (!request.fromFile())
        throw;
      throw BadInput(request.origin + ": " + error.what());
    }
  }
  checkOutputs(options, m, requests);
  loaded.schedule = planSchedule(options, m);
  // Round-robin: replica d serves requests d, d + D, d + 2D, ...
  int64_t replica = m.ranks[options.rank].coords.at("dp");
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
    needs.push_back(need);
  }
  bool onDevice = options.rendezvous.backend == Backend::Nccl;
  checkHostMemory(m, needs, dtype, onDevice);
}

/// A launcher's count from the environment variable `name`, or -1 when it
/// is unset; a value that is not a number in [min, 2^20] is bad input.
static int64_t launcherEnv(const char *name, const char *what, int64_t min) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  return parseIntegerFlag("environment variable " + std::string(name) + " (" + what + ")",
                          text, min, 1 << 20);
}

static int64_t localRankEnv() {
  return launcherEnv("LOCAL_RANK", "this rank's index on its host", 0);
}

static int64_t localWorldSizeEnv() {
  return launcherEnv("LOCAL_WORLD_SIZE", "ranks on this host", 1);
}

/// The ranks that share this rank's host: torchrun numbers a node's ranks
/// contiguously, LOCAL_RANK from the first, LOCAL_WORLD_SIZE of them (as
/// --nproc does). Without those variables, or with values that do not fit
/// the plan, the rank alone; a value that is not a number is bad input.
static std::vector<int64_t> ranksOnThisHost(int64_t rank, int64_t worldSize) {
  int64_t localRank = localRankEnv(), localSize = localWorldSizeEnv();
  if (localRank < 0 || localSize < 1 || localRank >= localSize ||
      localRank > rank || rank - localRank + localSize > worldSize)
    return {rank};
  std::vector<int64_t> ranks;
  for (int64_t r = rank - localRank; r < rank - localRank + localSize; ++r)
    ranks.push_back(r);
  return ranks;
}

int64_t planDefaultThreads(const Manifest &m, int64_t rank) {
  std::vector<int64_t> host = ranksOnThisHost(rank, m.worldSize());
  // The ranks of this rank's pipeline stage: those that differ from it on
  // any axis but pp. Without a pp axis, every rank.
  std::vector<std::string> notPP;
  for (const Axis &axis : m.axes)
    if (axis.name != "pp")
      notPP.push_back(axis.name);
  std::vector<int64_t> stage = m.groupOf(rank, notPP);
  int64_t busy = 0;
  for (int64_t r : host)
    busy += std::count(stage.begin(), stage.end(), r) ? 1 : 0;
  return std::max<int64_t>(1, usableCores() / std::max<int64_t>(1, busy));
}

void validateBeforeRendezvous(const RunOptions &options) {
  // load() checks every program of a full plan folder; --nproc on a bundle
  // is refused here, naming the first rank whose program it lacks.
  LoadedRank loaded = load(options);
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
/// Rank 0's progress bar on stderr: redrawn in place on a terminal, and a
/// line per step (at most ~20 lines) otherwise, always including step 1.
class Progress {
public:
  Progress(int64_t steps, bool enabled)
      : steps(steps), enabled(enabled), tty(::isatty(2)) {}
  void update(int64_t done, double lastMs) {
    if (!enabled)
      return;
    if (tty) {
      int width = 30, filled = int(width * done / steps);
      std::fprintf(stderr, "\r[%s%s] step %lld/%lld  %.1f ms/step",
                   std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), (long long)done,
                   (long long)steps, lastMs);
      if (done == steps)
        std::fputc('\n', stderr);
    } else {
      int64_t every = std::max<int64_t>(1, steps / 20);
      if (done == 1 || done == steps || done % every == 0)
        std::fprintf(stderr, "dit-run: step %lld/%lld done (%.1f ms)\n",
                     (long long)done, (long long)steps, lastMs);
    }
    std::fflush(stderr);
  }

private:
  int64_t steps;
  bool enabled, tty;
};

struct StepTiming {
  double totalMs;
  /// The whole process's CPU time over the step (every thread: ATen's,
  /// gloo's, the transfer waiters): on a shared host, how much of the
  /// cores the step took, which the wall time alone does not say.
  double cpuMs = 0;
  std::map<std::string, CommTime> comm; // milliseconds, raw and exposed
};

/// What --weights cost a rank: tensor bytes it read, header bytes, the
/// tensor bytes of the components the plan runs, and the time.
struct WeightsRead {
  int64_t dataBytes = 0, headerBytes = 0, totalBytes = 0;
  double ms = 0;
  double cpuMs = 0; // this thread's CPU time: on a shared host, ms - cpuMs waited
};

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

static void printSummary(const Manifest &m, const RunOptions &options,
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

int64_t usableCores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
}

int64_t defaultThreads() {
  return std::max<int64_t>(1, usableCores() / std::max<int64_t>(1, localWorldSizeEnv()));
}

bool setPassiveWait() {
  return !std::getenv("OMP_WAIT_POLICY") &&
         ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0;
}

void restartForPassiveWait(char **argv) {
  if (setPassiveWait())
    ::execv("/proc/self/exe", argv);
}

int64_t configureThreads(int64_t requested) {
  int64_t threads = requested > 0 ? requested : defaultThreads();
  // One pool per rank: ATen's intra-op threads run everything, the GEMM
  // tiles included (Kernels.h), so OpenBLAS gets one thread and its own
  // pool never spins against ATen's. No op here uses inter-op parallelism.
  at::set_num_threads(int(threads));
  try {
    at::set_num_interop_threads(1);
  } catch (const std::exception &) {
    // Already fixed by an earlier call in this process; it is unused.
  }
  if (void *setter = ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))
    reinterpret_cast<void (*)(int)>(setter)(1);
  return threads;
}

/// DITC_PROFILE_OPS=1: each rank's time per op kind on stderr, costliest
/// first, per step and as a share of the time in ops.
static void printOpProfile(int64_t rank, const std::string &program, int64_t steps,
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
  if (options.memoryCheck && options.rendezvous.backend == Backend::Nccl &&
      !loaded.programs.empty()) {
    const char *localRank = std::getenv("LOCAL_RANK");
    checkDeviceMemory(m, estimate, localRank && *localRank ? std::atoll(localRank) : 0,
                      options.bfloat16 ? "bfloat16" : "float32");
  }
  loaded.every.clear(); // only the rank's own programs run
  Vote vote{m.planHash, ""};
  for (const Program &p : loaded.programs)
    vote.programs += (vote.programs.empty() ? "" : ",") + p.id + ":" + p.sha256;
  if (vote.programs.empty())
    vote.programs = "-";

  Communicator comm(m, rank, vote, axisTuples(m, loaded.programs),
                    options.rendezvous);
  at::ScalarType computeType = options.bfloat16 ? at::kBFloat16 : at::kFloat;
  std::vector<std::unique_ptr<Executor>> experts;
  for (const Program &p : loaded.programs)
    experts.push_back(std::make_unique<Executor>(m, rank, p, &comm, computeType));
  // --weights: each rank reads its own slices, once, whatever the seed.
  WeightsRead weightsRead;
  if (loaded.weights) {
    Clock::time_point loadStart = Clock::now();
    double cpuStart = threadCpuMs();
    std::set<std::string> components;
    for (auto &executor : experts) {
      const std::string &expert = executor->program().expert;
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
  for (const Request &request : loaded.requests) {
    // Synthetic parameters are a function of the seed, as in a one-replica
    // run of the same request (loaded ones stay as they are).
    for (auto &executor : experts)
      executor->materializeParameters(request.seed);
    if (!residentReady.total)
      residentReady = residentMemory();
    // Step inputs: this rank's noise block, and the text of every branch.
    StepValue latents;
    std::vector<at::Tensor> texts, pooled, givenPooled;
    if (!request.pooledEmbeds.empty())
      givenPooled = readPooledEmbeds(request, m);
    if (!experts.empty()) {
      latents.tensor =
          request.latents.empty()
              ? drawNoiseBlock(request.seed, m, m.latentBlock(rank))
              : patchifyBlock(readLatents(request, m), m, m.latentBlock(rank));
      latents.tensor = latents.tensor.to(comm.device());
      std::vector<at::Tensor> given;
      if (!request.textEmbeds.empty())
        given = readTextEmbeds(request, m);
      for (int64_t b = 0; b < m.branches; ++b) {
        texts.push_back((given.empty()
                             ? drawNormal(request.seed, "text" + std::to_string(b),
                                          {m.batch, m.textTokens, m.textEmbedDim})
                             : given[b])
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
        else // guidance, as the family's pipeline passes it
          value = at::full({m.batch}, guidance, device);
        inputs[in.value] = {value};
      }
      // validateProgram proved the program has exactly one output.
      std::vector<StepValue> outputs = executor.runStep(inputs, step + 1 == steps);
      latents = outputs[0];
      if (latents.pending < 0)
        latents.tensor = latents.tensor.to(at::kFloat);
      comm.synchronizeDevice();
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
    if (!leader)
      continue;
    at::Tensor tokens = at::cat(blocks, 1).to(at::kFloat).cpu();
    at::Tensor out = unpatchify(tokens, m);
    std::vector<int64_t> shape = out.sizes().vec();
    writeFileAtomically(request.output, encodeNpy(shape, out.data_ptr<float>()));
    written.emplace_back(request.output, shape);
    if (rank != 0)
      std::printf("dit-run: rank %lld (dp replica %lld) wrote %s: latents %s "
                  "float32, seed %lld\n",
                  (long long)rank, (long long)replica, request.output.c_str(),
                  formatShape(shape).c_str(), (long long)request.seed);
  }
  std::fflush(stdout);
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
                   residentStart.total, residentReady.total, residentMemory().file});
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
  if (rank != 0)
    return;
  if (!options.report.empty()) {
    nlohmann::json report = {{"plan_hash", m.planHash},
                             {"model", m.modelName},
                             {"ranks", m.worldSize()},
                             {"steps", steps},
                             {"requests", loaded.requests.size()},
                             {"dtype", options.bfloat16 ? "bfloat16" : "float32"},
                             {"setup_ms", setupMs},
                             {"threads", threads},
                             // How rank 0's groups all-reduce: in shared
                             // memory or through gloo, and why (HostReduce.h).
                             {"all_reduce_transport", comm.hostTransports(true)},
                             {"all_to_all_transport", comm.hostTransports(false)}};
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
    for (const std::vector<int64_t> &m : memory) {
      report["peak_rss_mib"].push_back(double(m[0]) / 1048576.0);
      report["param_mib"].push_back(double(m[1]) / 1048576.0);
      report["estimated_peak_mib"].push_back(double(m[2]) / 1048576.0);
      report["rss_start_mib"].push_back(double(m[3]) / 1048576.0);
      report["rss_ready_mib"].push_back(double(m[4]) / 1048576.0);
      report["rss_file_mib"].push_back(double(m[5]) / 1048576.0);
    }
    // step_cpu_ms[rank][step]: the process's CPU time over each step, all
    // its threads.
    report["step_cpu_ms"] = nlohmann::json::array();
    for (const std::vector<int64_t> &perStep : stepCpu) {
      nlohmann::json row = nlohmann::json::array();
      for (int64_t micros : perStep)
        row.push_back(double(micros) / 1000.0);
      report["step_cpu_ms"].push_back(std::move(row));
    }
    if (loaded.weights) {
      nlohmann::json w = {{"snapshot", escapeInvalidUtf8(options.weights)},
                          {"checkpoint_bytes", weightsRead.totalBytes}};
      for (const std::vector<int64_t> &r : read) {
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
    size_t firstTimed = timings.size() > 1 ? 1 : 0;
    std::map<std::string, CommTime> sums;
    for (size_t i = 0; i < timings.size(); ++i) {
      const StepTiming &t = timings[i];
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
    double timed = double(std::max<size_t>(1, timings.size() - firstTimed));
    for (const auto &[key, time] : sums)
      commAxes[key] = {{"raw_ms", time.rawSeconds / timed},
                       {"exposed_ms", time.exposedSeconds / timed},
                       {"peer_wait_ms", time.peerWaitSeconds / timed}};
    report["comm_axes"] = commAxes;
    writeFileAtomically(options.report, report.dump(1) + "\n");
  }
  printSummary(m, options, schedule, steps, timings, setupMs,
               experts.empty() ? 0 : experts[0]->parameterBytes(), threads, written,
               loaded.weights ? &weightsRead : nullptr);
}

} // namespace ditc::runtime
