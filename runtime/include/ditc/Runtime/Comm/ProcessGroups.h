//===- ProcessGroups.h - c10d process groups over gloo or NCCL --*- C++ -*-===//
//
// One communication group of a rank: c10d's gloo or NCCL process group
// behind one interface, built over the rendezvous store, and the device a
// rank's tensors live on for its backend.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_COMM_PROCESSGROUPS_H
#define DITC_RUNTIME_COMM_PROCESSGROUPS_H

#include "ditc/Runtime/Comm/HostReduce.h"
#include "ditc/Runtime/Comm/Rendezvous.h"

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ditc::runtime {

/// Waits for one operation in flight; throws when it failed or outlived the
/// timeout.
using Wait = std::function<void()>;

/// A process group, whatever its backend (Comm/Backends: GlooGroup,
/// NcclGroup, one file each as in c10d).
/// Operations of one group start in program order and the backend runs them
/// in that order (gloo's single worker thread, NCCL's stream), so an
/// asynchronous collective keeps the group's issue order.
class Group {
public:
  Group(std::string key, std::vector<int64_t> members, int64_t index)
      : key(std::move(key)), members(std::move(members)), index(index) {}
  virtual ~Group() = default;
  virtual Wait allreduce(at::Tensor &x) = 0;
  virtual void allgather(std::vector<at::Tensor> &out, at::Tensor &in) = 0;
  virtual Wait alltoall(at::Tensor &out, at::Tensor &in) = 0;
  virtual Wait send(at::Tensor &x, int64_t peer, int tag) = 0;
  virtual Wait recv(at::Tensor &x, int64_t peer, int tag) = 0;
  /// The member at `rootIndex` sends `x`; every other member receives into
  /// its `x`, of the same shape. Blocks until done.
  virtual void broadcast(at::Tensor &x, int64_t rootIndex) = 0;
  /// Returns once every member has reached it.
  virtual void barrier() = 0;

  std::string key;
  std::vector<int64_t> members;
  int64_t index;
  /// The shared-memory all-reduce of members on one host, set up at the
  /// group's first all-reduce that it can take (HostReduce.h).
  std::unique_ptr<HostReduce> hostReduce;
  bool hostReduceDecided = false;
  std::string hostReduceRefusal; // why not, when decided against
  bool allReduced = false, exchanged = false; // for --report's transports
};

/// The process group over `members` (global ranks, in group order; `rank`
/// among them) for the axis key `key`, connected through `store`. Every
/// member must build it, in the same order relative to its other groups.
/// Throws RunFailure naming the key and the ranks.
std::unique_ptr<Group> buildGroup(const c10::intrusive_ptr<c10d::Store> &store,
                                  const std::string &key,
                                  const std::vector<int64_t> &members, int64_t rank,
                                  const RendezvousOptions &options);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_COMM_PROCESSGROUPS_H
