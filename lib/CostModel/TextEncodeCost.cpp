//===- TextEncodeCost.cpp - the text encoders' time -----------------------===//
#include "ditc/CostModel/TextEncodeCost.h"
#include "ditc/CostModel/CostModel.h"

#include <algorithm>
#include <cmath>

namespace ditc {

double textEncodeSeconds(const TextEncodeWork &work, const HardwareProfile &hw,
                         int64_t calls, int64_t replicaRanks, int64_t ranksOnHost) {
  int64_t busy = std::max<int64_t>(1, std::min(work.tpSize, ranksOnHost));
  double perCall =
      computeSeconds(work.compute, hw, achievedRates(hw, work.bf16, busy, busy));
  if (work.tpSize > 1 && work.allReduces > 0) {
    // The group's ranks lie in one replica, which the search keeps on one
    // node whenever it can; the all-reduces wait on each other (every one
    // completes a linear the next op reads), so none is hidden.
    auto [link, efficiency] = collectiveLink(hw, CollectiveKind::AllReduce, false);
    perCall += double(work.allReduces) *
               collectiveSeconds(CollectiveKind::AllReduce,
                                 work.allReduceBytes / double(work.allReduces),
                                 work.tpSize, link, efficiency);
  }
  double seconds = double(std::max<int64_t>(1, calls)) * perCall;
  if (replicaRanks > 1) {
    auto [link, efficiency] = collectiveLink(hw, CollectiveKind::SendRecv, false);
    double levels = std::ceil(std::log2(double(replicaRanks)));
    seconds += double(std::max<int64_t>(1, calls)) *
               (collectiveSeconds(CollectiveKind::SendRecv, work.outputBytes, 2, link,
                                  efficiency) +
                (levels - 1) * link.latency);
  }
  return seconds;
}

} // namespace ditc
