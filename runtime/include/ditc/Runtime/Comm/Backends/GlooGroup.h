//===- GlooGroup.h - process groups over gloo -------------------*- C++ -*-===//
//
// c10d's gloo backend: the CPU path between hosts, and between the ranks of
// one host where they do not reduce through shared memory (HostReduce.h).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_COMM_BACKENDS_GLOOGROUP_H
#define DITC_RUNTIME_COMM_BACKENDS_GLOOGROUP_H

#include "ditc/Runtime/Comm/ProcessGroups.h"

namespace ditc::runtime {

/// A gloo group of `size` members in which this process is `index`,
/// connected through `store`: over loopback when `masterAddr` is a loopback
/// address, over GLOO_SOCKET_IFNAME when set, else over the interface this
/// host's name resolves to. One worker thread, so the group's operations
/// run in issue order. Throws what c10d throws.
std::unique_ptr<Group> buildGlooGroup(const c10::intrusive_ptr<c10d::Store> &store,
                                      const std::string &key,
                                      const std::vector<int64_t> &members, int64_t index,
                                      const std::string &masterAddr,
                                      std::chrono::milliseconds timeout);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_COMM_BACKENDS_GLOOGROUP_H
