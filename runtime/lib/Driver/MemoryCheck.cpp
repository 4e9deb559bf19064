//===- MemoryCheck.cpp - will the plan fit? asked before loading ----------===//
#include "ditc/Runtime/Driver/MemoryCheck.h"
#include "ditc/Support/BadInput.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/resource.h>

#ifdef DITC_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

namespace ditc::runtime {

// Every figure here may come from a hostile manifest, so sums and products
// saturate instead of wrapping.
static int64_t addSat(int64_t a, int64_t b) {
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}
static int64_t mulSat(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

int64_t RankMemoryNeed::tensorBytes() const {
  int64_t resident = addSat(paramBytes, vaeParamBytes);
  if (!textOffloaded)
    return addSat(addSat(resident, textParamBytes),
                  std::max({activationBytes, decodeBytes, encodeBytes}));
  // The encoders are freed once the prompts are encoded: they and their
  // encode come before the steps and the decode.
  return std::max(addSat(resident, std::max(activationBytes, decodeBytes)),
                  addSat(addSat(resident, textParamBytes), encodeBytes));
}

int64_t RankMemoryNeed::total() const { return addSat(tensorBytes(), fixedBytes); }

/// Elements of the parameter slices `program` holds, each name once (the
/// executor keeps one tensor per name and program).
static int64_t parameterElements(const Program &program, int64_t tpSize) {
  std::set<std::string> seen;
  int64_t total = 0;
  auto visit = [&](const Function &fn) {
    for (const Op &op : fn.ops)
      for (const ParamSpec &spec : op.params) {
        if (!seen.insert(spec.name).second)
          continue;
        int64_t elements = 1;
        for (size_t d = 0; d < spec.shape.size(); ++d) {
          int64_t size = spec.shape[d];
          if (int(d) == spec.splitDim) {
            size = 0;
            for (int64_t width : spec.segments)
              size = addSat(size, width / tpSize);
          }
          elements = mulSat(elements, size);
        }
        total = addSat(total, elements);
      }
  };
  visit(program.step);
  for (const auto &fn : program.functions)
    visit(fn.second);
  return total;
}

RankMemoryNeed estimateRankMemory(const Manifest &manifest,
                                  const std::vector<const Program *> &programs,
                                  int64_t rank, int64_t computeElementBytes) {
  RankMemoryNeed need;
  need.rank = rank;
  need.fixedBytes = kRankFixedBytes;
  int64_t tpSize = std::max<int64_t>(1, manifest.axisSize("tp"));
  for (const Program *program : programs) {
    // Each expert's executor holds its own parameters: they add up, while
    // only one expert's step runs at a time; with expert offload only the
    // running expert's are resident.
    int64_t elements = parameterElements(*program, tpSize);
    int64_t bytes = mulSat(elements, computeElementBytes);
    need.paramBytes = manifest.expertOffload ? std::max(need.paramBytes, bytes)
                                             : addSat(need.paramBytes, bytes);
    const ProgramEntry &entry = manifest.programEntry(program->id);
    if (entry.activationBytes < 0)
      continue;
    // The plan's element type is what its param_bytes count per element:
    // 4 for an f32 plan, 2 for bf16. Anything else (no parameters, or a
    // manifest whose figures disagree with its programs) counts as 4, the
    // reading that gives the smaller estimate.
    int64_t planElementBytes = 4;
    if (elements > 0 && entry.paramBytes >= 0 && entry.paramBytes % elements == 0 &&
        (entry.paramBytes / elements == 2 || entry.paramBytes / elements == 4))
      planElementBytes = entry.paramBytes / elements;
    int64_t activations =
        mulSat(entry.activationBytes / planElementBytes, computeElementBytes);
    need.activationBytes =
        std::max(need.activationBytes, mulSat(activations, kActivationFactor));
  }
  return need;
}

/// The first whitespace-separated number on the line of `file` that starts
/// with `key`, times `scale`; nullopt when absent or unreadable.
static std::optional<int64_t> readKeyed(const std::string &file,
                                        const std::string &key, int64_t scale) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0)
      continue;
    std::istringstream fields(line.substr(key.size()));
    long long value = 0;
    if (!(fields >> value) || value < 0)
      return std::nullopt;
    return mulSat(value, scale);
  }
  return std::nullopt;
}

ResidentMemory residentMemory() {
  return {readKeyed("/proc/self/status", "VmRSS:", 1024).value_or(0),
          readKeyed("/proc/self/status", "RssFile:", 1024).value_or(0)};
}

/// A cgroup file holding one number ("max" means no limit: nullopt).
static std::optional<int64_t> readCgroupNumber(const std::string &file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max" || text.empty() ||
      text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 18)
    return std::nullopt;
  return std::stoll(text);
}

/// For the cgroup at `path` under `mount` and each one above it: limit
/// minus usage, keeping the least. v1's "no limit" is a number near 2^63.
static void cgroupLimits(const std::string &mount, std::string path,
                         const std::string &limitFile, const std::string &usageFile,
                         const std::string &label, std::optional<MemoryLimit> &best) {
  while (true) {
    std::string dir = mount + (path == "/" ? "" : path);
    std::optional<int64_t> limit = readCgroupNumber(dir + "/" + limitFile);
    std::optional<int64_t> usage = readCgroupNumber(dir + "/" + usageFile);
    if (limit && usage && *limit < (int64_t(1) << 60)) {
      int64_t left = std::max<int64_t>(0, *limit - *usage);
      if (!best || left < best->bytes)
        best = MemoryLimit{left, label + " " + dir + "/" + limitFile + " (" +
                                     std::to_string(*limit >> 20) + " MiB) - " +
                                     usageFile + " (" +
                                     std::to_string(*usage >> 20) + " MiB)"};
    }
    if (path.empty() || path == "/")
      return;
    size_t slash = path.find_last_of('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
}

std::optional<MemoryLimit> hostMemoryAvailable() {
  std::optional<MemoryLimit> best;
  if (std::optional<int64_t> kb = readKeyed("/proc/meminfo", "MemAvailable:", 1024))
    best = MemoryLimit{*kb, "MemAvailable in /proc/meminfo"};
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    // v2: "0::/path"; v1: "N:memory:/path" (controllers comma-separated).
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (path.empty() || path[0] != '/')
      continue;
    if (controllers.empty()) {
      cgroupLimits("/sys/fs/cgroup", path, "memory.max", "memory.current",
                   "cgroup v2", best);
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      // In a container the path may be the host's; the container's own
      // cgroup is then the mount's root, which the walk reaches last.
      cgroupLimits("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes",
                   "memory.usage_in_bytes", "cgroup v1", best);
    }
  }
  return best;
}

std::optional<MemoryLimit> addressSpaceAvailable() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::nullopt;
  std::optional<int64_t> used = readKeyed("/proc/self/status", "VmSize:", 1024);
  int64_t cap = limit.rlim_cur > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(limit.rlim_cur);
  return MemoryLimit{std::max<int64_t>(0, cap - used.value_or(0)),
                     "RLIMIT_AS (ulimit -v, " + std::to_string(cap >> 20) +
                         " MiB) - VmSize of this process (" +
                         std::to_string(used.value_or(0) >> 20) + " MiB)"};
}

static std::string mib(int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / 1048576.0);
  return text;
}

/// "(parameters P + activations A + runtime R)": a rank's need, by part.
static std::string breakdown(const RankMemoryNeed &need, bool onDevice) {
  std::string vae;
  if (need.vaeParamBytes > 0 || need.decodeBytes > 0)
    vae = " + VAE parameters " + mib(need.vaeParamBytes) + "; its decode's peak " +
          mib(need.decodeBytes) + " comes after the steps'";
  std::string text;
  if (need.textParamBytes > 0)
    text = " + text encoder parameters " + mib(need.textParamBytes) +
           (need.textOffloaded ? " (freed before the steps)" : "") + "; their encode's peak " +
           mib(need.encodeBytes) + " comes before the steps'";
  return std::string("(parameters ") + mib(need.paramBytes) + " + activations " +
         mib(need.activationBytes) + (onDevice ? " on its GPU" : "") + vae + text +
         " + runtime " + mib(need.fixedBytes) + ")";
}

static const char *kAdvice =
    "; spread the model over more ranks (--tp-size, --pp-size, and the VAE "
    "decode with ditc compile --vae-parallel-size) or hosts, "
    "run in bfloat16 (--dtype bfloat16), or pass --skip-memory-check if "
    "the estimate is wrong for this host (docs/runtime.md, \"Memory check\")";

void checkHostMemory(const Manifest &manifest,
                     const std::vector<RankMemoryNeed> &needs,
                     const std::string &dtypeName, bool onDevice) {
  if (needs.empty())
    return;
  int64_t sum = 0;
  for (const RankMemoryNeed &need : needs)
    sum = addSat(sum, onDevice ? need.fixedBytes : need.total());
  auto largest = std::max_element(
      needs.begin(), needs.end(), [](const RankMemoryNeed &a, const RankMemoryNeed &b) {
        return a.total() < b.total();
      });
  std::string who =
      needs.size() == 1
          ? "rank " + std::to_string(needs[0].rank) + " " + breakdown(needs[0], onDevice)
          : std::to_string(needs.size()) + " ranks on this host, the largest rank " +
                std::to_string(largest->rank) + " with " + mib(largest->total()) +
                " " + breakdown(*largest, onDevice);
  if (std::optional<MemoryLimit> host = hostMemoryAvailable();
      host && sum > host->bytes)
    throw BadInput(manifest.dir + ": plan for " + manifest.modelName + " in " +
                   dtypeName + " needs about " + mib(sum) + " for " + who +
                   ", but this host has " + mib(host->bytes) + " available (" +
                   host->source + "): short by " + mib(sum - host->bytes) + kAdvice);
  if (std::optional<MemoryLimit> space = addressSpaceAvailable()) {
    // The fixed footprint is already mapped in this process (VmSize).
    int64_t perRank = onDevice ? 0 : largest->tensorBytes();
    if (perRank > space->bytes)
      throw BadInput(manifest.dir + ": plan for " + manifest.modelName + " in " +
                     dtypeName + " needs about " + mib(perRank) +
                     " of parameters and activations in rank " +
                     std::to_string(largest->rank) + " " + breakdown(*largest, onDevice) +
                     ", but each rank may map only " + mib(space->bytes) +
                     " more (" + space->source + "): short by " +
                     mib(perRank - space->bytes) + kAdvice);
  }
}

void checkDeviceMemory(const Manifest &manifest, const RankMemoryNeed &need,
                       int64_t device, const std::string &dtypeName) {
#ifdef DITC_HAVE_NCCL
  size_t freeBytes = 0, totalBytes = 0;
  if (::cudaSetDevice(int(device)) != cudaSuccess ||
      ::cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess)
    return; // no device to ask: the Communicator reports it
  int64_t onDevice = need.tensorBytes();
  int64_t available =
      freeBytes > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(freeBytes);
  if (onDevice > available)
    throw BadInput(manifest.dir + ": plan for " + manifest.modelName + " in " +
                   dtypeName + " needs about " + mib(onDevice) + " on cuda:" +
                   std::to_string(device) + " for rank " + std::to_string(need.rank) +
                   ", but the device has " + mib(available) + " free of " +
                   mib(int64_t(totalBytes)) + " (cudaMemGetInfo), short by " +
                   mib(onDevice - available) + " " + breakdown(need, /*onDevice=*/true) +
                   kAdvice);
#else
  (void)manifest, (void)need, (void)device, (void)dtypeName;
#endif
}

} // namespace ditc::runtime
