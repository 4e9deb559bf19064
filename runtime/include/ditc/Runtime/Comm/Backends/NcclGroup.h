//===- NcclGroup.h - process groups over NCCL -------------------*- C++ -*-===//
//
// c10d's NCCL backend: the GPU path. Its collectives run on NCCL's own
// stream and return at once; a Wait makes the compute stream wait for them.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_COMM_BACKENDS_NCCLGROUP_H
#define DITC_RUNTIME_COMM_BACKENDS_NCCLGROUP_H

#include "ditc/Runtime/Comm/ProcessGroups.h"

namespace ditc::runtime {

/// An NCCL group of `members.size()` ranks in which this process is
/// `index`, connected through `store`, on the current CUDA device (the
/// rank's CudaDevice made it current). Throws what c10d throws, and
/// std::runtime_error in a build without NCCL.
std::unique_ptr<Group> buildNcclGroup(const c10::intrusive_ptr<c10d::Store> &store,
                                      const std::string &key,
                                      const std::vector<int64_t> &members, int64_t index,
                                      std::chrono::milliseconds timeout);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_COMM_BACKENDS_NCCLGROUP_H
