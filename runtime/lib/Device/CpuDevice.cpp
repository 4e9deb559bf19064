//===- CpuDevice.cpp - the host as a rank's device -------------------------===//
#include "ditc/Runtime/Device/CpuDevice.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <dlfcn.h>
#include <sched.h>
#include <thread>
#include <climits>
#include <fstream>
#include <sstream>
#include <sys/resource.h>

namespace ditc::runtime {

std::optional<MemoryLimit> CpuDevice::freeMemory() const {
  return hostMemoryAvailable();
}

std::string CpuDevice::describe() const { return "cpu"; }

int64_t CpuDevice::usableCores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
}

void CpuDevice::placeThreads(int64_t threads) {
  at::set_num_threads(int(threads));
  try {
    at::set_num_interop_threads(1);
  } catch (const std::exception &) {
    // Already fixed by an earlier call in this process; it is unused.
  }
  if (void *setter = ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))
    reinterpret_cast<void (*)(int)>(setter)(1);
}

// The files below may hold anything, so a product saturates instead of
// wrapping.
static int64_t scaleSaturating(int64_t value, int64_t scale) {
  if (value == 0 || scale == 0)
    return 0;
  return value > INT64_MAX / scale ? INT64_MAX : value * scale;
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
    return scaleSaturating(value, scale);
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

} // namespace ditc::runtime
