//===- CostModel.h - predicted step time and memory of a configuration -*- C++ -*-===//
//
// step time = compute (a roofline per op class) + exposed communication
//             (alpha-beta per collective algorithm, on the link class the
//             rank layout gives each group) + the pipeline bubble.
// peak memory per rank = parameters + activations + collective buffers.
//
// The work comes from partitioned IR (StepWork.h); this file only prices
// it. docs/search.md explains each term. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_COSTMODEL_H
#define DITC_COSTMODEL_COSTMODEL_H

#include "ditc/Analysis/Deployment.h"
#include "ditc/CostModel/HardwareProfile.h"
#include "ditc/CostModel/StepWork.h"

#include <map>
#include <vector>

namespace ditc {

/// One configuration as the model sees it.
struct Configuration {
  Degrees degrees;
  std::vector<Axis> meshOrder;       // outermost first, all seven axes
  std::vector<int64_t> ppPartition;  // blocks per stage
  int64_t gpusPerNode = 8;
  /// Transformer calls per step across all branches (1 for distilled
  /// models, 2 for true CFG), before cfg splits them.
  int64_t branchCalls = 1;
  /// Whether a rank that holds several branches runs them as one batched
  /// call, as `ditc compile` does unless --no-batch-branches
  /// (dit-batch-branches); never with pp > 1, where the calls are the
  /// pipeline's micro-batches.
  bool batchBranches = true;
  /// A two-expert model's --expert-offload: only the running expert's
  /// parameters are resident (the larger of the two), not both.
  bool expertOffload = false;
};

struct StepEstimate {
  double stepSeconds = 0;
  /// The busiest rank's own compute, its eager launches included.
  double computeSeconds = 0;
  /// The part of computeSeconds that is eager launches (ops launched x the
  /// profile's kernel_launch).
  double launchSeconds = 0;
  /// Exposed communication on the critical path, per mesh axis.
  std::map<Axis, double> commSeconds;
  /// Time the busiest rank waits on other pipeline stages.
  double bubbleSeconds = 0;
  double paramBytes = 0, activationBytes = 0, bufferBytes = 0;
  double peakMemoryBytes() const { return paramBytes + activationBytes + bufferBytes; }
  /// FLOPs one rank of the busiest stage runs per step.
  double flopsPerRank = 0;
  /// Bytes the busiest rank sends per step, per axis, counted as the plan's
  /// manifest counts them (docs/plan-format.md, per_step.bytes_sent).
  std::map<Axis, double> bytesSent;
  /// Axes whose groups span more than one node.
  std::vector<Axis> crossNodeAxes;
  double totalCommSeconds() const;
};

/// Bytes one rank sends for one collective of a group of `groupSize`, as
/// the plan's manifest counts them.
double collectiveBytesSent(CollectiveKind kind, double bytes, int64_t groupSize);

/// How many collectives the runtime issues for one call of `c` on a batch
/// of `batch` branch calls (dit-batch-branches stacks them along the first
/// dimension), each on its share of the bytes and each a barrier on a
/// host: the row chunks tileRowChunks cuts for a chunked all-reduce, else 1.
int64_t collectiveMessages(const CollectiveWork &c, int64_t batch = 1);

/// Seconds one collective takes on `link` for a group of `groupSize`.
double collectiveSeconds(CollectiveKind kind, double bytes, int64_t groupSize,
                         const LinkClass &link, double efficiency);

/// What one rank achieves: FLOP/s per op class, and the memory bandwidth
/// its bytes move at (bytes/s).
struct AchievedRates {
  std::array<double, kNumOpClasses> flops{};
  double bandwidth = 0;
};

/// Intra-op threads dit-run gives a rank by default when the host holds
/// `stageRanksOnHost` ranks of its pipeline stage (all its ranks without
/// pp): max(1, cores / stageRanksOnHost). Stages take turns, so a stage's
/// ranks may use the cores the others wait on (planDefaultThreads).
int64_t threadsPerRank(const HostRates &host, int64_t stageRanksOnHost);

/// A host rate (by thread count) at `threads`: the measured one, or past
/// the largest measured count, that one scaled by threads / count.
double hostRate(const std::map<int64_t, double> &byThreads, int64_t threads);

/// The skew a blocking collective waits out on a host of `ranksOnHost`
/// ranks: the profile's figure for the largest measured count at or below
/// it, none below the smallest (a lone rank waits for nobody).
HostRates::Skew skewOfRanks(const HostRates &host, int64_t ranksOnHost);

/// Without a host section: each class's peak times its efficiency, and the
/// memory bandwidth times the elementwise efficiency. With one, the rates
/// measured at threadsPerRank of the ranks that compute at once
/// (`busyRanksOnHost`, all `ranksOnHost` unless pipeline stages take
/// turns), times the share of a core each thread gets when those threads
/// outnumber the cores: they time-share them.
AchievedRates achievedRates(const HardwareProfile &hw, bool bf16,
                            int64_t ranksOnHost, int64_t busyRanksOnHost = 0);

/// The most ranks of one node of `gpusPerNode` that compute at once: those
/// of one pipeline stage (a step's stages run in turn, seed 004).
int64_t busyRanksPerNode(const Degrees &degrees, const std::vector<Axis> &order,
                         int64_t gpusPerNode);

/// Seconds of `work` on one rank: per op class the larger of its FLOPs at
/// the class's achieved rate and its bytes at the achieved memory bandwidth.
double computeSeconds(const ComputeWork &work, const HardwareProfile &hw,
                      const AchievedRates &rates);
/// The same for a rank alone on its host.
double computeSeconds(const ComputeWork &work, const HardwareProfile &hw,
                      bool bf16);

/// The link and efficiency a collective of `kind` pays: the NIC when its
/// group crosses nodes; otherwise the host's measured link for that kind
/// (at efficiency 1) when the profile has one, else the intra-node link.
std::pair<LinkClass, double> collectiveLink(const HardwareProfile &hw,
                                            CollectiveKind kind,
                                            bool crossesNodes);

/// Whether the groups of `axes` (ranks that differ only in those axes'
/// coordinates) span more than one node of `gpusPerNode` ranks.
bool groupsCrossNodes(const Degrees &degrees, const std::vector<Axis> &order,
                      const std::vector<Axis> &axes, int64_t gpusPerNode);

/// Prices one step of `config` from the work of its (tp, ulysses, ring,
/// kv_gather) shape.
StepEstimate estimateStep(const TransformerWork &work,
                          const Configuration &config,
                          const HardwareProfile &hw);

} // namespace ditc

#endif // DITC_COSTMODEL_COSTMODEL_H
