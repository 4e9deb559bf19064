//===- CudaDevice.h - a GPU as a rank's device ------------------*- C++ -*-===//
//
// One CUDA device: the rank's GPU (LOCAL_RANK, as torchrun and dit-run
// --nproc set it), its free memory from cudaMemGetInfo, and a device-wide
// synchronize. The only file besides Comm/Backends/NcclGroup.cpp that sees
// CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DEVICE_CUDADEVICE_H
#define DITC_RUNTIME_DEVICE_CUDADEVICE_H

#include "ditc/Runtime/Device/Device.h"

namespace ditc::runtime {

class CudaDevice final : public Device {
public:
  /// cuda:LOCAL_RANK, or cuda:`rank` without LOCAL_RANK, made the current
  /// device of this process. Throws std::runtime_error naming the index
  /// and what the CUDA runtime said when the GPU is not there, or when
  /// this build has no CUDA.
  static std::unique_ptr<CudaDevice> forRank(int64_t rank);

  at::Device torchDevice() const override;
  bool isHost() const override { return false; }
  /// cudaMemGetInfo's free bytes.
  std::optional<MemoryLimit> freeMemory() const override;
  /// CUDACachingAllocator's peak of allocated bytes on this device.
  std::optional<int64_t> peakBytes() const override;
  void synchronize() const override;
  std::string describe() const override;

  /// The GPUs this process sees, described (none without a driver), and
  /// why none when there are none.
  static std::vector<std::string> visible(std::string *whyNone = nullptr);
  /// The NCCL library version loaded ("2.28.9"), or "" in a build without.
  static std::string ncclVersion();
  /// The CUDA runtime version built against ("13.0"), or "".
  static std::string runtimeVersion();

private:
  explicit CudaDevice(int index) : index(index) {}
  int index;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DEVICE_CUDADEVICE_H
