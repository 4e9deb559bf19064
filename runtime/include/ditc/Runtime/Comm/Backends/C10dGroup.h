//===- C10dGroup.h - a c10d backend behind the Group interface --*- C++ -*-===//
//
// c10d's ProcessGroupGloo and ProcessGroupNCCL share their collective
// signatures, so one template adapts either to Group. Included only by the
// backend files (GlooGroup.cpp, NcclGroup.cpp), each with its own backend.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_COMM_BACKENDS_C10DGROUP_H
#define DITC_RUNTIME_COMM_BACKENDS_C10DGROUP_H

#include "ditc/Runtime/Comm/ProcessGroups.h"

#include <torch/csrc/distributed/c10d/Types.hpp>

namespace ditc::runtime {

template <typename Backend> class C10dGroup final : public Group {
public:
  C10dGroup(std::string key, std::vector<int64_t> members, int64_t index,
            c10::intrusive_ptr<Backend> backend, std::chrono::milliseconds timeout)
      : Group(std::move(key), std::move(members), index), backend(std::move(backend)),
        timeout(timeout) {}
  // The work handles are asynchronous: NCCL queues the collective on its
  // own stream and the step goes on until the Wait is called.
  Wait allreduce(at::Tensor &x) override {
    std::vector<at::Tensor> tensors{x};
    return waiter(backend->allreduce(tensors), tensors);
  }
  void allgather(std::vector<at::Tensor> &out, at::Tensor &in) override {
    std::vector<std::vector<at::Tensor>> outputs{out};
    std::vector<at::Tensor> inputs{in};
    backend->allgather(outputs, inputs)->wait(timeout);
    out = outputs[0];
  }
  Wait alltoall(at::Tensor &out, at::Tensor &in) override {
    std::vector<int64_t> equalSplits;
    return waiter(backend->alltoall_base(out, in, equalSplits, equalSplits), {out, in});
  }
  Wait send(at::Tensor &x, int64_t peer, int tag) override {
    std::vector<at::Tensor> tensors{x};
    return waiter(backend->send(tensors, int(peer), tag), tensors);
  }
  Wait recv(at::Tensor &x, int64_t peer, int tag) override {
    std::vector<at::Tensor> tensors{x};
    return waiter(backend->recv(tensors, int(peer), tag), tensors);
  }
  void broadcast(at::Tensor &x, int64_t rootIndex) override {
    std::vector<at::Tensor> tensors{x};
    c10d::BroadcastOptions options;
    options.rootRank = int(rootIndex);
    backend->broadcast(tensors, options)->wait(timeout);
  }
  void barrier() override { backend->barrier()->wait(timeout); }

private:
  /// Waits for `work`, keeping its tensors alive until then.
  template <typename Work> Wait waiter(Work work, std::vector<at::Tensor> tensors) {
    auto limit = timeout;
    return [work, limit, tensors]() { work->wait(limit); };
  }

  c10::intrusive_ptr<Backend> backend;
  std::chrono::milliseconds timeout;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_COMM_BACKENDS_C10DGROUP_H
