//===- Device.cpp - opening a rank's device --------------------------------===//
#include "ditc/Runtime/Device/Device.h"
#include "ditc/Runtime/Device/CpuDevice.h"
#include "ditc/Runtime/Device/CudaDevice.h"

#include <torch/version.h>

namespace ditc::runtime {

std::unique_ptr<Device> openDevice(DeviceKind kind, int64_t rank) {
  if (kind == DeviceKind::Cuda)
    return CudaDevice::forRank(rank);
  return std::make_unique<CpuDevice>();
}

DeviceFacts deviceFacts() {
  DeviceFacts facts;
  facts.torchVersion = TORCH_VERSION;
  facts.cudaVersion = CudaDevice::runtimeVersion();
  facts.cudaCompiled = !facts.cudaVersion.empty();
  facts.ncclVersion = CudaDevice::ncclVersion();
  facts.ncclCompiled = facts.cudaCompiled;
  facts.devices.push_back(CpuDevice().describe());
  for (const std::string &gpu : CudaDevice::visible(&facts.gpuNote))
    facts.devices.push_back(gpu);
  return facts;
}

} // namespace ditc::runtime
