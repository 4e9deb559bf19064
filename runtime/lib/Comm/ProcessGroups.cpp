//===- ProcessGroups.cpp - c10d process groups over gloo or NCCL ----------===//
#include "ditc/Runtime/Comm/ProcessGroups.h"
#include "ditc/Runtime/Comm/Rendezvous.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
// Debian's libtorch ships gloo's headers (libgloo-dev); a pip wheel may not,
// and then this build has NCCL only.
#if __has_include(<gloo/algorithm.h>)
#define DITC_HAVE_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef DITC_HAVE_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <cstdlib>

namespace ditc::runtime {

namespace {
template <typename PG> class C10dGroup : public Group {
public:
  C10dGroup(std::string key, std::vector<int64_t> members, int64_t index,
            c10::intrusive_ptr<PG> pg, std::chrono::milliseconds timeout)
      : Group(std::move(key), std::move(members), index), pg(std::move(pg)),
        timeout(timeout) {}
  Wait allreduce(at::Tensor &x) override {
    std::vector<at::Tensor> tensors{x};
    return waiter(pg->allreduce(tensors), tensors);
  }
  void allgather(std::vector<at::Tensor> &out, at::Tensor &in) override {
    std::vector<std::vector<at::Tensor>> outputs{out};
    std::vector<at::Tensor> inputs{in};
    pg->allgather(outputs, inputs)->wait(timeout);
    out = outputs[0];
  }
  Wait alltoall(at::Tensor &out, at::Tensor &in) override {
    std::vector<int64_t> equalSplits;
    return waiter(pg->alltoall_base(out, in, equalSplits, equalSplits), {out, in});
  }
  Wait send(at::Tensor &x, int64_t peer, int tag) override {
    std::vector<at::Tensor> tensors{x};
    return waiter(pg->send(tensors, int(peer), tag), tensors);
  }
  Wait recv(at::Tensor &x, int64_t peer, int tag) override {
    std::vector<at::Tensor> tensors{x};
    return waiter(pg->recv(tensors, int(peer), tag), tensors);
  }
  void broadcast(at::Tensor &x, int64_t rootIndex) override {
    std::vector<at::Tensor> tensors{x};
    c10d::BroadcastOptions options;
    options.rootRank = int(rootIndex);
    pg->broadcast(tensors, options)->wait(timeout);
  }

private:
  /// Waits for `work`, keeping its tensors alive until then.
  template <typename Work>
  Wait waiter(Work work, std::vector<at::Tensor> tensors) {
    auto limit = timeout;
    return [work, limit, tensors]() { work->wait(limit); };
  }

  c10::intrusive_ptr<PG> pg;
  std::chrono::milliseconds timeout;
};
} // namespace

#ifdef DITC_HAVE_GLOO
static std::shared_ptr<::gloo::transport::Device>
glooDevice(const std::string &masterAddr) {
  if (const char *ifname = std::getenv("GLOO_SOCKET_IFNAME"))
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  // One host: loopback. Several: the address this host resolves to.
  if (masterAddr.rfind("127.", 0) == 0 || masterAddr == "localhost")
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}
#endif

at::Device rankDevice(int64_t rank, Backend backend) {
#ifdef DITC_HAVE_NCCL
  if (backend == Backend::Nccl) {
    const char *local = std::getenv("LOCAL_RANK");
    int device = local ? std::atoi(local) : int(rank);
    c10::cuda::set_device(c10::DeviceIndex(device));
    return at::Device(at::kCUDA, c10::DeviceIndex(device));
  }
#else
  if (backend == Backend::Nccl)
    throw RunFailure("rank " + std::to_string(rank) +
                     ": --backend nccl: this dit-run was built without "
                     "NCCL (configure with -DDITC_ENABLE_NCCL=ON)");
#endif
  return at::Device(at::kCPU);
}

std::unique_ptr<Group> buildGroup(const c10::intrusive_ptr<c10d::Store> &tcp,
                                  const std::string &key,
                                  const std::vector<int64_t> &members, int64_t rank,
                                  const RendezvousOptions &options) {
  auto prefix = "rank " + std::to_string(rank) + ": ";
  int64_t index = std::find(members.begin(), members.end(), rank) - members.begin();
  auto groupStore = c10::make_intrusive<c10d::PrefixStore>(
      "pg/" + key + "/" + std::to_string(members.front()), tcp);
  try {
#ifdef DITC_HAVE_NCCL
    if (options.backend == Backend::Nccl) {
      auto ncclOptions = c10d::ProcessGroupNCCL::Options::create();
      ncclOptions->timeout = options.timeout;
      auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(
          groupStore, int(index), int(members.size()), ncclOptions);
      return std::make_unique<C10dGroup<c10d::ProcessGroupNCCL>>(
          key, members, index, pg, options.timeout);
    }
#endif
#ifdef DITC_HAVE_GLOO
    auto glooOptions = c10d::ProcessGroupGloo::Options::create(options.timeout);
    glooOptions->devices.push_back(glooDevice(options.masterAddr));
    glooOptions->threads = 1;
    auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(
        groupStore, int(index), int(members.size()), glooOptions);
    return std::make_unique<C10dGroup<c10d::ProcessGroupGloo>>(
        key, members, index, pg, options.timeout);
#else
    throw RunFailure(prefix + "--backend gloo: this dit-run was built without "
                              "gloo's headers; use --backend nccl");
#endif
  } catch (const std::exception &error) {
    throw RunFailure(prefix + "building the process group over " + key +
                     " with ranks " + rankList(members) + " failed: " +
                     firstLine(error));
  }
}

} // namespace ditc::runtime
