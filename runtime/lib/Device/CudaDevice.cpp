//===- CudaDevice.cpp - a GPU as a rank's device ---------------------------===//
#include "ditc/Runtime/Device/CudaDevice.h"

#ifdef DITC_HAVE_NCCL
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

#include <cstdlib>
#include <stdexcept>

namespace ditc::runtime {

#ifdef DITC_HAVE_NCCL

/// The index of this rank's GPU: LOCAL_RANK when set (torchrun, and dit-run
/// --nproc, set it), else the global rank.
static int localDeviceIndex(int64_t rank) {
  const char *local = std::getenv("LOCAL_RANK");
  if (local && *local) {
    char *end = nullptr;
    long value = std::strtol(local, &end, 10);
    if (*end != '\0' || value < 0 || value > 1023)
      throw std::runtime_error("LOCAL_RANK='" + std::string(local) +
                               "' is not a device index (0 to 1023)");
    return int(value);
  }
  return int(rank);
}

static int deviceCount(std::string *whyNone) {
  int devices = 0;
  cudaError_t status = ::cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) {
    if (whyNone)
      *whyNone = ::cudaGetErrorString(status);
    ::cudaGetLastError(); // clear it, so torch's own calls start clean
    return 0;
  }
  if (devices == 0 && whyNone)
    *whyNone = "the CUDA runtime reports no device";
  return devices;
}

std::unique_ptr<CudaDevice> CudaDevice::forRank(int64_t rank) {
  int index = localDeviceIndex(rank);
  std::string why;
  int devices = deviceCount(&why);
  if (index >= devices)
    throw std::runtime_error(
        "rank " + std::to_string(rank) + " needs cuda:" + std::to_string(index) +
        " (LOCAL_RANK or the rank), but this host has " + std::to_string(devices) +
        " GPU" + (devices == 1 ? "" : "s") + (why.empty() ? "" : " (" + why + ")"));
  c10::cuda::set_device(c10::DeviceIndex(index));
  return std::unique_ptr<CudaDevice>(new CudaDevice(index));
}

at::Device CudaDevice::torchDevice() const {
  return at::Device(at::kCUDA, c10::DeviceIndex(index));
}

std::optional<MemoryLimit> CudaDevice::freeMemory() const {
  size_t freeBytes = 0, totalBytes = 0;
  if (::cudaSetDevice(index) != cudaSuccess ||
      ::cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
    ::cudaGetLastError();
    return std::nullopt;
  }
  int64_t available = freeBytes > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(freeBytes);
  return MemoryLimit{available, "cudaMemGetInfo on cuda:" + std::to_string(index) + ", " +
                                    std::to_string(totalBytes >> 20) + " MiB in all"};
}

std::optional<int64_t> CudaDevice::peakBytes() const {
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::DeviceIndex(index));
  return stats.allocated_bytes[size_t(c10::CachingAllocator::StatType::AGGREGATE)].peak;
}

void CudaDevice::synchronize() const { c10::cuda::device_synchronize(); }

static std::string describeIndex(int index) {
  cudaDeviceProp properties{};
  std::string name = ::cudaGetDeviceProperties(&properties, index) == cudaSuccess
                         ? std::string(properties.name)
                         : "unknown";
  return "cuda:" + std::to_string(index) + " (" + name + ", " +
         std::to_string(properties.totalGlobalMem >> 30) + " GiB)";
}

std::string CudaDevice::describe() const { return describeIndex(index); }

std::vector<std::string> CudaDevice::visible(std::string *whyNone) {
  std::vector<std::string> devices;
  for (int i = 0, n = deviceCount(whyNone); i < n; ++i)
    devices.push_back(describeIndex(i));
  return devices;
}

std::string CudaDevice::ncclVersion() {
  int code = 0;
  if (::ncclGetVersion(&code) != ncclSuccess)
    return "";
  // NCCL >= 2.9 encodes MAJOR*10000 + MINOR*100 + PATCH.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

std::string CudaDevice::runtimeVersion() {
  return std::to_string(CUDART_VERSION / 1000) + "." +
         std::to_string(CUDART_VERSION % 1000 / 10);
}

#else // A runtime built against a torch without CUDA (-DDITC_RUNTIME_CUDA=OFF).

std::vector<std::string> CudaDevice::visible(std::string *whyNone) {
  if (whyNone)
    *whyNone = "this dit-run was built without CUDA (-DDITC_RUNTIME_CUDA=OFF)";
  return {};
}

std::unique_ptr<CudaDevice> CudaDevice::forRank(int64_t rank) {
  throw std::runtime_error("rank " + std::to_string(rank) +
                           ": this dit-run was built without CUDA "
                           "(-DDITC_RUNTIME_CUDA=OFF); rebuild against a CUDA torch");
}

at::Device CudaDevice::torchDevice() const {
  return at::Device(at::kCUDA, c10::DeviceIndex(index));
}
std::optional<MemoryLimit> CudaDevice::freeMemory() const { return std::nullopt; }
std::optional<int64_t> CudaDevice::peakBytes() const { return std::nullopt; }
void CudaDevice::synchronize() const {}
std::string CudaDevice::describe() const { return "cuda:" + std::to_string(index); }
std::string CudaDevice::ncclVersion() { return ""; }
std::string CudaDevice::runtimeVersion() { return ""; }

#endif

} // namespace ditc::runtime
