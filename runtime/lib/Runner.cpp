//===- Runner.cpp - one rank's whole run: load, agree, denoise, write -----===//
#include "ditc/Runtime/Runner.h"
#include "ditc/Runtime/Executor.h"
#include "ditc/Runtime/Initializer.h"
#include "ditc/Runtime/Npy.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/ReadFile.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <dlfcn.h>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ditc::runtime {

using Clock = std::chrono::steady_clock;

namespace {
struct LoadedRank {
  Manifest manifest;
  std::vector<Program> programs; // program, then program_2
  std::vector<at::Tensor> texts; // per branch, [B, T, E], from --text-embeds
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

/// Rank 0 writes --output and --report. Both are checked before any work:
/// each must be absent or a regular file in a writable folder (never a
/// device, FIFO, symlink or folder), they must differ, and neither may lie
/// inside the plan folder, whose files the run reads.
static void checkOutputs(const RunOptions &options, const Manifest &m) {
  char root[PATH_MAX];
  std::string plan = ::realpath(m.dir.c_str(), root) ? std::string(root) : m.dir;
  std::string output;
  for (const auto &[flag, path] :
       {std::pair<std::string, std::string>{"--output", options.output},
        {"--report", options.report}}) {
    if (path.empty())
      continue;
    checkOutputPath(path, flag);
    std::string canonical = canonicalOutputPath(path);
    if (canonical.rfind(plan + "/", 0) == 0)
      throw BadInput(flag + " " + escapeInvalidUtf8(path) +
                     ": lies inside the plan folder " + escapeInvalidUtf8(plan) +
                     "; write outputs elsewhere, so a run never changes its plan");
    if (flag == "--output")
      output = canonical;
    else if (canonical == output)
      throw BadInput("--report " + escapeInvalidUtf8(path) +
                     ": is the same file as --output; give the report its own "
                     "name");
  }
}

static LoadedRank load(const RunOptions &options) {
  LoadedRank loaded{loadManifest(options.planDir), {}, {}};
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
  std::map<std::string, Program> every;
  if (bundleRank(m.dir) < 0) {
    for (const RankEntry &other : m.ranks)
      for (const auto &id : {other.program, other.program2})
        if (id && !every.count(*id))
          every.emplace(*id, loadProgram(m, *id));
    validateCollectivePairing(m, every);
  }
  const RankEntry &entry = m.ranks[options.rank];
  for (const auto &id : {entry.program, entry.program2})
    if (id)
      loaded.programs.push_back(every.count(*id)
                                    ? every.at(*id)
                                    : loadRankProgram(m, *id, options.rank));
  if (!options.textEmbeds.empty()) {
    NpyArray array = readNpy(options.textEmbeds);
    std::vector<int64_t> expected = {m.branches, m.batch, m.textTokens, m.textEmbedDim};
    if (array.shape != expected) {
      std::string got, want;
      for (int64_t d : array.shape)
        got += (got.empty() ? "" : ", ") + std::to_string(d);
      for (int64_t d : expected)
        want += (want.empty() ? "" : ", ") + std::to_string(d);
      throw BadInput(escapeInvalidUtf8(options.textEmbeds) + ": shape is (" + got +
                     ") but the plan needs (" + want +
                     ") = (branches, batch, text_tokens, text_embed_dim)");
    }
    at::Tensor all = at::from_blob(array.data.data(), expected, at::kFloat).clone();
    for (int64_t b = 0; b < m.branches; ++b)
      loaded.texts.push_back(all[b]);
  }
  if (options.rank == 0)
    checkOutputs(options, m);
  return loaded;
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
  std::map<std::string, double> commMs;
};
} // namespace

static void printSummary(const Manifest &m, const RunOptions &options,
                         int64_t steps, const std::vector<StepTiming> &timings,
                         double setupMs, int64_t paramBytes,
                         const std::vector<int64_t> &outShape) {
  std::set<std::string> keys;
  for (const StepTiming &t : timings)
    for (const auto &c : t.commMs)
      keys.insert(c.first);
  std::printf("dit-run: %s, plan %s, %lld ranks (%s), %lld steps, %s, seed %lld\n",
              m.modelName.c_str(), m.planHash.substr(0, 16).c_str(),
              (long long)m.worldSize(),
              options.rendezvous.backend == Backend::Nccl ? "nccl" : "gloo",
              (long long)steps, options.bfloat16 ? "bfloat16" : "float32",
              (long long)options.seed);
  std::printf("setup %.1f ms (rendezvous, agreement, groups, %.1f MiB of parameters "
              "on rank 0)\n",
              setupMs, paramBytes / 1048576.0);
  std::printf("%6s %10s %10s", "step", "total ms", "compute ms");
  for (const std::string &k : keys)
    std::printf(" %12s", ("comm " + k).c_str());
  std::printf("\n");
  double sumTotal = 0, sumComm = 0;
  std::map<std::string, double> sumPerAxis;
  for (size_t i = 0; i < timings.size(); ++i) {
    double comm = 0;
    for (const auto &c : timings[i].commMs)
      comm += c.second;
    std::printf("%6zu %10.2f %10.2f", i + 1, timings[i].totalMs,
                timings[i].totalMs - comm);
    for (const std::string &k : keys) {
      auto it = timings[i].commMs.find(k);
      double v = it == timings[i].commMs.end() ? 0.0 : it->second;
      sumPerAxis[k] += v;
      std::printf(" %12.2f", v);
    }
    std::printf("\n");
    sumTotal += timings[i].totalMs;
    sumComm += comm;
  }
  double n = double(std::max<size_t>(1, timings.size()));
  std::printf("%6s %10.2f %10.2f", "mean", sumTotal / n, (sumTotal - sumComm) / n);
  for (const std::string &k : keys)
    std::printf(" %12.2f", sumPerAxis[k] / n);
  std::printf("\ncommunication share on rank 0: %.1f%%\n",
              sumTotal > 0 ? 100.0 * sumComm / sumTotal : 0.0);
  std::string shape;
  for (int64_t d : outShape)
    shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  std::printf("wrote %s: latents [%s] float32\n", options.output.c_str(), shape.c_str());
  std::fflush(stdout);
}

void runRank(const RunOptions &options) {
  Clock::time_point start = Clock::now();
  // The default is every core, whatever the placement: OpenBLAS partitions
  // a GEMM by its thread count, so a count that depended on how many ranks
  // share the host would break the bitwise equality of a cfg or pp rank
  // with the one-rank run. --threads trades that for less oversubscription.
  int64_t threads = options.threads;
  if (threads <= 0)
    threads = std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
  at::set_num_threads(int(threads));
  // OpenBLAS keeps its own thread pool (one thread per core) that
  // at::set_num_threads does not reach; N ranks on one host would run N
  // times too many BLAS threads. Set it too, when OpenBLAS is the BLAS.
  if (void *setter = ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))
    reinterpret_cast<void (*)(int)>(setter)(int(threads));

  LoadedRank loaded = load(options); // BadInput stops here, before rendezvous
  const Manifest &m = loaded.manifest;
  int64_t rank = options.rank;
  Vote vote{m.planHash, ""};
  for (const Program &p : loaded.programs)
    vote.programs += (vote.programs.empty() ? "" : ",") + p.id + ":" + p.sha256;
  if (vote.programs.empty())
    vote.programs = "-";

  Communicator comm(m, rank, vote, axisTuples(m, loaded.programs),
                    options.rendezvous);
  at::ScalarType computeType = options.bfloat16 ? at::kBFloat16 : at::kFloat;
  std::vector<std::unique_ptr<Executor>> experts;
  for (const Program &p : loaded.programs) {
    experts.push_back(std::make_unique<Executor>(m, rank, p, &comm, computeType,
                                                 options.seed));
    experts.back()->materializeParameters();
  }
  int64_t steps = options.steps > 0 ? options.steps : m.steps;
  auto device = at::TensorOptions(at::kFloat).device(comm.device());

  // Step inputs: this rank's noise block, and the text of every branch.
  at::Tensor latents;
  std::vector<at::Tensor> texts, pooled;
  if (!experts.empty()) {
    latents = drawNoiseBlock(options.seed, m, m.latentBlock(rank)).to(comm.device());
    for (int64_t b = 0; b < m.branches; ++b) {
      texts.push_back(loaded.texts.empty()
                          ? drawNormal(options.seed, "text" + std::to_string(b),
                                       {m.batch, m.textTokens, m.textEmbedDim})
                                .to(comm.device())
                          : loaded.texts[b].to(comm.device()));
      pooled.push_back(drawNormal(options.seed, "pooled" + std::to_string(b),
                                  {m.batch, m.pooledDim})
                           .to(comm.device()));
    }
  }
  comm.takeCommSeconds();
  double setupMs =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();

  // The denoising loop: sigmas fall linearly from 1 to 0 (numpy.linspace).
  Progress progress(steps, rank == 0);
  std::vector<StepTiming> timings;
  for (int64_t step = 0; step < steps && !experts.empty(); ++step) {
    Clock::time_point stepStart = Clock::now();
    double delta = -1.0 / double(steps);
    double sigma = 1.0 + double(step) * delta;
    double sigmaNext = step + 1 == steps ? 0.0 : 1.0 + double(step + 1) * delta;
    double timestep = sigma * 1000.0;
    // Two experts (Wan2.2 A14B): the high-noise one above the boundary.
    Executor &executor =
        experts.size() > 1 && timestep < m.boundaryRatio * 1000.0 ? *experts[1]
                                                                  : *experts[0];
    std::map<int, at::Tensor> inputs;
    for (const StepInput &in : executor.program().inputs) {
      at::Tensor value;
      if (in.name == "latents")
        value = latents;
      else if (in.name == "timestep")
        value = at::full({m.batch}, timestep, device);
      else if (in.name == "sigma")
        value = at::scalar_tensor(sigma, device);
      else if (in.name == "sigma_next")
        value = at::scalar_tensor(sigmaNext, device);
      else if (in.name == "text")
        value = texts[in.branch];
      else if (in.name == "pooled_text")
        value = pooled[in.branch];
      else
        value = at::full({m.batch}, 3.5, device); // guidance
      inputs[in.value] = value;
    }
    // validateProgram proved the program has exactly one output.
    std::vector<at::Tensor> outputs = executor.runStep(inputs, step + 1 == steps);
    latents = outputs[0].to(at::kFloat);
    StepTiming timing;
    timing.totalMs =
        std::chrono::duration<double, std::milli>(Clock::now() - stepStart).count();
    for (const auto &c : comm.takeCommSeconds())
      timing.commMs[c.first] = c.second * 1000.0;
    timings.push_back(timing);
    progress.update(step + 1, timing.totalMs);
  }

  // Assemble the final latents on rank 0 and write them whole or not at all.
  int64_t blockTokens = m.latentTokens / m.latentBlocks();
  std::vector<at::Tensor> blocks = comm.gatherOutput(
      latents.defined() ? latents : at::Tensor(),
      {m.batch, blockTokens, m.latentFeatures});
  if (rank != 0)
    return;
  at::Tensor tokens = at::cat(blocks, 1).to(at::kFloat).cpu();
  at::Tensor out = unpatchify(tokens, m);
  std::vector<int64_t> shape = out.sizes().vec();
  writeFileAtomically(options.output, encodeNpy(shape, out.data_ptr<float>()));
  if (!options.report.empty()) {
    nlohmann::json report = {{"plan_hash", m.planHash},
                             {"model", m.modelName},
                             {"ranks", m.worldSize()},
                             {"steps", steps},
                             {"dtype", options.bfloat16 ? "bfloat16" : "float32"},
                             {"setup_ms", setupMs}};
    for (const StepTiming &t : timings) {
      report["step_ms"].push_back(t.totalMs);
      report["comm_ms"].push_back(t.commMs);
    }
    writeFileAtomically(options.report, report.dump(1) + "\n");
  }
  printSummary(m, options, steps, timings, setupMs,
               experts.empty() ? 0 : experts[0]->parameterBytes(), shape);
}

} // namespace ditc::runtime
