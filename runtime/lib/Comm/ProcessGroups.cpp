//===- ProcessGroups.cpp - a rank's groups, over its backend --------------===//
#include "ditc/Runtime/Comm/ProcessGroups.h"
#include "ditc/Runtime/Comm/Rendezvous.h"

#include "ditc/Runtime/Comm/Backends/GlooGroup.h"
#include "ditc/Runtime/Comm/Backends/NcclGroup.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <algorithm>

namespace ditc::runtime {

std::unique_ptr<Group> buildGroup(const c10::intrusive_ptr<c10d::Store> &tcp,
                                  const std::string &key,
                                  const std::vector<int64_t> &members, int64_t rank,
                                  const RendezvousOptions &options) {
  auto prefix = "rank " + std::to_string(rank) + ": ";
  int64_t index = std::find(members.begin(), members.end(), rank) - members.begin();
  auto groupStore = c10::make_intrusive<c10d::PrefixStore>(
      "pg/" + key + "/" + std::to_string(members.front()), tcp);
  try {
    if (options.backend == Backend::Nccl)
      return buildNcclGroup(groupStore, key, members, index, options.timeout);
    return buildGlooGroup(groupStore, key, members, index, options.masterAddr,
                          options.timeout);
  } catch (const std::exception &error) {
    throw RunFailure(prefix + "building the process group over " + key +
                     " with ranks " + rankList(members) + " failed: " +
                     firstLine(error));
  }
}

} // namespace ditc::runtime
