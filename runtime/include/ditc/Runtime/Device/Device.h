//===- Device.h - where a rank's tensors live, behind one API ---*- C++ -*-===//
//
// The device layer: one Device per rank, the host's (CpuDevice) or a GPU's
// (CudaDevice), behind one interface, as IREE's HAL puts its drivers behind
// one device API. The rest of the runtime asks the Device where tensors go,
// how much memory is free, whether ranks on one host can reduce through
// shared memory, and to wait for queued kernels; only this layer and the
// kernels look at a tensor's device type, and only CudaDevice.cpp and
// Comm/Backends/NcclGroup.cpp see CUDA or NCCL.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DEVICE_DEVICE_H
#define DITC_RUNTIME_DEVICE_DEVICE_H

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

/// Memory a device or process may still use, and where the figure comes
/// from ("MemAvailable in /proc/meminfo", "cudaMemGetInfo", ...).
struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;
};

enum class DeviceKind { Cpu, Cuda };

class Device {
public:
  virtual ~Device() = default;
  /// The torch device this rank's parameters and activations live on.
  virtual at::Device torchDevice() const = 0;
  /// True for host memory: a mapped file can serve as a tensor in place,
  /// and ranks on one host can all-reduce through shared memory
  /// (Comm/HostReduce) instead of a socket.
  virtual bool isHost() const = 0;
  /// Free memory for this rank's tensors now; nullopt when it cannot be
  /// read.
  virtual std::optional<MemoryLimit> freeMemory() const = 0;
  /// The most bytes this process's tensors have held on the device so far
  /// (the caching allocator's peak); nullopt on the host, where the
  /// process's peak RSS says it.
  virtual std::optional<int64_t> peakBytes() const = 0;
  /// Waits until every kernel issued so far has run. On a GPU ops only
  /// queue kernels, so a step's wall time means nothing until the queue is
  /// drained; on the host it returns at once.
  virtual void synchronize() const = 0;
  /// "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)".
  virtual std::string describe() const = 0;
};

/// The device of `rank` for `kind`: the host, or cuda:LOCAL_RANK (cuda:rank
/// without LOCAL_RANK) made current. Throws std::runtime_error when that
/// GPU is not there or this build has no CUDA.
std::unique_ptr<Device> openDevice(DeviceKind kind, int64_t rank);

/// What this build can run on and what it sees, for --version.
struct DeviceFacts {
  std::string torchVersion;   // the torch built against
  bool cudaCompiled = false;  // libtorch_cuda linked
  std::string cudaVersion;    // CUDA runtime built against, or ""
  bool ncclCompiled = false;  // c10d's ProcessGroupNCCL linked
  std::string ncclVersion;    // the NCCL library loaded, or ""
  std::vector<std::string> devices; // describe() of each visible device
  std::string gpuNote;        // why no GPU is seen, when none is
};
DeviceFacts deviceFacts();

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DEVICE_DEVICE_H
