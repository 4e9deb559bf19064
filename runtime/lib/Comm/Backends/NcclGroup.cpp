//===- NcclGroup.cpp - process groups over NCCL ----------------------------===//
#include "ditc/Runtime/Comm/Backends/NcclGroup.h"
#include "ditc/Runtime/Comm/Backends/C10dGroup.h"

#ifdef DITC_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <stdexcept>

namespace ditc::runtime {

std::unique_ptr<Group> buildNcclGroup(const c10::intrusive_ptr<c10d::Store> &store,
                                      const std::string &key,
                                      const std::vector<int64_t> &members, int64_t index,
                                      std::chrono::milliseconds timeout) {
#ifdef DITC_HAVE_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(
      store, int(index), int(members.size()), options);
  return std::make_unique<C10dGroup<c10d::ProcessGroupNCCL>>(key, members, index, backend,
                                                             timeout);
#else
  (void)store, (void)key, (void)members, (void)index, (void)timeout;
  throw std::runtime_error("--backend nccl: this dit-run was built without NCCL "
                           "(-DDITC_RUNTIME_CUDA=OFF); rebuild against a CUDA torch");
#endif
}

} // namespace ditc::runtime
