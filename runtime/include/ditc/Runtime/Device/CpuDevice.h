//===- CpuDevice.h - the host as a rank's device ----------------*- C++ -*-===//
//
// The host: tensors in host memory, the memory figures of this process and
// of the cgroups it sits in, read from /proc and /sys.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DEVICE_CPUDEVICE_H
#define DITC_RUNTIME_DEVICE_CPUDEVICE_H

#include "ditc/Runtime/Device/Device.h"

namespace ditc::runtime {

class CpuDevice final : public Device {
public:
  at::Device torchDevice() const override { return at::Device(at::kCPU); }
  bool isHost() const override { return true; }
  /// hostMemoryAvailable().
  std::optional<MemoryLimit> freeMemory() const override;
  std::optional<int64_t> peakBytes() const override { return std::nullopt; }
  void synchronize() const override {}
  std::string describe() const override;

  /// The CPUs this process may run on (its affinity mask, which taskset,
  /// cgroups and Slurm narrow), or every core the host has.
  static int64_t usableCores();
  /// Thread placement: `threads` intra-op threads (ATen's pool, which runs
  /// every op and the GEMM tiles), one inter-op thread (no op uses them),
  /// and one thread for a BLAS pool of its own (an OpenBLAS torch links),
  /// so no second pool spins against ATen's on the same cores.
  static void placeThreads(int64_t threads);
};

/// The least of: MemAvailable from /proc/meminfo, and for the cgroup this
/// process is in and each one above it, its limit minus its usage (cgroup
/// v2 memory.max - memory.current; v1 memory.limit_in_bytes -
/// memory.usage_in_bytes). nullopt when none of them can be read.
std::optional<MemoryLimit> hostMemoryAvailable();

/// Address space this process may still map: RLIMIT_AS minus VmSize from
/// /proc/self/status; nullopt when unlimited. A per-process limit, so it
/// bounds each rank alone (ranks inherit it from --nproc).
std::optional<MemoryLimit> addressSpaceAvailable();

/// This process's resident bytes now (VmRSS) and the file-backed part of
/// them (RssFile: mapped code and files, which a step's tensors never are),
/// from /proc/self/status; zeros where it cannot be read.
struct ResidentMemory {
  int64_t total = 0, file = 0;
};
ResidentMemory residentMemory();

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DEVICE_CPUDEVICE_H
