//===- GlooGroup.cpp - process groups over gloo ----------------------------===//
#include "ditc/Runtime/Comm/Backends/GlooGroup.h"
#include "ditc/Runtime/Comm/Backends/C10dGroup.h"

// torch's wheel compiles gloo into libtorch_cpu without its headers; the
// build takes gloo's declarations from Debian's libgloo-dev (no libgloo is
// linked: only shared_ptrs to its device type cross this file).
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>

namespace ditc::runtime {

static std::shared_ptr<::gloo::transport::Device>
glooDevice(const std::string &masterAddr) {
  if (const char *ifname = std::getenv("GLOO_SOCKET_IFNAME"))
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  // One host: loopback. Several: the address this host resolves to.
  if (masterAddr.rfind("127.", 0) == 0 || masterAddr == "localhost")
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

std::unique_ptr<Group> buildGlooGroup(const c10::intrusive_ptr<c10d::Store> &store,
                                      const std::string &key,
                                      const std::vector<int64_t> &members, int64_t index,
                                      const std::string &masterAddr,
                                      std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices.push_back(glooDevice(masterAddr));
  options->threads = 1;
  auto backend = c10::make_intrusive<c10d::ProcessGroupGloo>(
      store, int(index), int(members.size()), options);
  return std::make_unique<C10dGroup<c10d::ProcessGroupGloo>>(key, members, index, backend,
                                                             timeout);
}

} // namespace ditc::runtime
