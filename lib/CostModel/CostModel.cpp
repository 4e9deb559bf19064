//===- CostModel.cpp - price one step of one configuration ----------------===//
#include "ditc/CostModel/CostModel.h"
#include "ditc/Support/RowChunks.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace ditc {

const char *opClassName(OpClass opClass) {
  switch (opClass) {
  case OpClass::Gemm: return "gemm";
  case OpClass::Attention: return "attention";
  case OpClass::Elementwise: return "elementwise";
  }
  return "?";
}

void ComputeWork::add(const ComputeWork &other, double times) {
  for (size_t c = 0; c < kNumOpClasses; ++c) {
    flops[c] += other.flops[c] * times;
    bytes[c] += other.bytes[c] * times;
    weightBytes[c] += other.weightBytes[c] * times;
  }
  for (auto &[keys, f] : other.attentionFlopsByKeys)
    attentionFlopsByKeys[keys] += f * times;
  ringMergeElements += other.ringMergeElements * times;
  launches += other.launches * times;
}


ComputeWork ComputeWork::batched(double batch) const {
  ComputeWork out;
  out.add(*this, batch);
  for (size_t c = 0; c < kNumOpClasses; ++c) {
    out.bytes[c] -= (batch - 1) * weightBytes[c];
    out.weightBytes[c] = weightBytes[c];
  }
  out.launches = launches;
  return out;
}

double StepEstimate::totalCommSeconds() const {
  double sum = 0;
  for (auto &[axis, seconds] : commSeconds)
    sum += seconds;
  return sum;
}

double collectiveSeconds(CollectiveKind kind, double bytes, int64_t n,
                         const LinkClass &link, double efficiency) {
  if (n < 2 && kind != CollectiveKind::SendRecv)
    return 0;
  double alpha = link.latency;
  double beta = 1.0 / (link.bandwidth * efficiency);
  double steps = double(n - 1);
  switch (kind) {
  case CollectiveKind::AllReduce:
    // Ring reduce-scatter then all-gather: 2(n-1) steps of bytes/n each.
    return 2 * steps * alpha + 2 * steps / double(n) * bytes * beta;
  case CollectiveKind::AllGather:
    // Every rank receives the n-1 other contributions.
    return steps * alpha + steps * bytes * beta;
  case CollectiveKind::AllToAll:
    // Every rank keeps 1/n of its buffer and sends the rest.
    return steps * alpha + steps / double(n) * bytes * beta;
  case CollectiveKind::SendRecv:
  case CollectiveKind::RingShift:
    return alpha + bytes * beta;
  }
  return 0;
}

int64_t collectiveMessages(const CollectiveWork &c, int64_t batch) {
  if (c.kind != CollectiveKind::AllReduce || c.rowChunks < 2 || c.rowsPerItem <= 0)
    return 1;
  return std::max<int64_t>(1, tileRowChunkCount(c.rowItems * std::max<int64_t>(1, batch),
                                                 c.rowsPerItem, c.rowChunks));
}

double collectiveBytesSent(CollectiveKind kind, double bytes, int64_t n) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2.0 * double(n - 1) / double(n) * bytes;
  case CollectiveKind::AllGather:
    return double(n - 1) * bytes;
  case CollectiveKind::AllToAll:
    return double(n - 1) / double(n) * bytes;
  case CollectiveKind::SendRecv:
  case CollectiveKind::RingShift:
    return bytes;
  }
  return 0;
}

int64_t threadsPerRank(const HostRates &host, int64_t stageRanksOnHost) {
  return std::max<int64_t>(1, host.cores / std::max<int64_t>(1, stageRanksOnHost));
}

double hostRate(const std::map<int64_t, double> &byThreads, int64_t threads) {
  auto it = byThreads.upper_bound(threads);
  if (it == byThreads.begin())
    return 0;
  --it; // the largest measured count <= threads
  return it->second * double(threads) / double(it->first);
}

AchievedRates achievedRates(const HardwareProfile &hw, bool bf16,
                            int64_t ranksOnHost, int64_t busyRanksOnHost) {
  AchievedRates out;
  if (!hw.host) {
    double peak = hw.peakFlops(bf16);
    out.flops = {peak * hw.gemmEfficiency, peak * hw.attentionEfficiency,
                 peak * hw.elementwiseEfficiency};
    out.bandwidth = hw.memoryBandwidth * hw.elementwiseEfficiency;
    return out;
  }
  // CPU ranks compute bf16 plans with float32 kernels, so one table serves
  // both; more threads than cores share them.
  const HostRates &host = *hw.host;
  int64_t ranks = std::max<int64_t>(1, ranksOnHost);
  int64_t busy = busyRanksOnHost > 0 ? std::min(busyRanksOnHost, ranks) : ranks;
  int64_t threads = threadsPerRank(host, busy);
  double share = std::min(1.0, double(host.cores) / double(busy * threads));
  double gemm = hostRate(host.gemmFlops, threads) * share;
  // Element-wise ops at their own measured rate where the profile has one:
  // a norm or a tanh GELU costs far more per element than its bytes say.
  double elementwise = host.elementwiseFlops.empty()
                           ? gemm
                           : hostRate(host.elementwiseFlops, threads) * share;
  out.flops = {gemm, hostRate(host.attentionFlops, threads) * share, elementwise};
  out.bandwidth = hostRate(host.elementwiseBandwidth, threads) * share;
  return out;
}

HostRates::Skew skewOfRanks(const HostRates &host, int64_t ranksOnHost) {
  auto it = host.skew.upper_bound(ranksOnHost);
  if (it == host.skew.begin())
    return {};
  return std::prev(it)->second; // the largest measured count <= ranksOnHost
}

double computeSeconds(const ComputeWork &work, const HardwareProfile &hw,
                      const AchievedRates &rates) {
  // Attention FLOPs at the efficiency of the keys their call sees; the
  // rest at the class's.
  size_t attention = size_t(OpClass::Attention);
  double listed = 0, scaled = 0;
  for (auto &[keys, f] : work.attentionFlopsByKeys) {
    listed += f;
    scaled += keys > 0 ? f * (keys + hw.attentionHalfKeys) / keys : f;
  }
  double flops[kNumOpClasses] = {work.flops[0], work.flops[1], work.flops[2]};
  flops[attention] += scaled - listed;
  double bytes[kNumOpClasses] = {work.bytes[0], work.bytes[1], work.bytes[2]};
  bytes[size_t(OpClass::Elementwise)] += work.ringMergeElements * hw.ringMergeBytes;
  double seconds = 0;
  for (size_t c = 0; c < kNumOpClasses; ++c)
    seconds += std::max(flops[c] / rates.flops[c], bytes[c] / rates.bandwidth);
  // Eager launches add to the kernels' time: while the host dispatches the
  // next op the GPU idles (the difference between eager and compiled runs
  // of the same configuration does not shrink with the degree; docs/search.md).
  return seconds + work.launches * hw.kernelLaunch;
}

double computeSeconds(const ComputeWork &work, const HardwareProfile &hw,
                      bool bf16) {
  return computeSeconds(work, hw, achievedRates(hw, bf16, 1));
}

std::pair<LinkClass, double> collectiveLink(const HardwareProfile &hw,
                                            CollectiveKind kind,
                                            bool crossesNodes) {
  auto eff = hw.collectiveEfficiency.find(kind);
  double efficiency = eff == hw.collectiveEfficiency.end() ? 1.0 : eff->second;
  if (crossesNodes)
    return {hw.interNode, efficiency};
  if (hw.host) {
    auto measured = hw.host->collectives.find(kind);
    if (measured != hw.host->collectives.end())
      return {measured->second, 1.0};
  }
  return {hw.intraNode, efficiency};
}

namespace {

/// Row-major strides of `order` over `degrees`.
std::vector<int64_t> stridesOf(const Degrees &degrees,
                               const std::vector<Axis> &order) {
  std::vector<int64_t> strides(order.size(), 1);
  for (size_t i = order.size(); i-- > 1;)
    strides[i - 1] = strides[i] * degrees[order[i]];
  return strides;
}

} // namespace

bool groupsCrossNodes(const Degrees &degrees, const std::vector<Axis> &order,
                      const std::vector<Axis> &axes, int64_t gpusPerNode) {
  int64_t world = degrees.worldSize();
  if (world <= gpusPerNode)
    return false;
  std::vector<int64_t> strides = stridesOf(degrees, order);
  // A group's members span [first, first + extent]; it crosses a node
  // boundary when that interval does. The first members are the ranks whose
  // coordinates on `axes` are 0.
  int64_t extent = 0;
  std::vector<bool> inGroup(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i)
    if (std::find(axes.begin(), axes.end(), order[i]) != axes.end()) {
      inGroup[i] = true;
      extent += (degrees[order[i]] - 1) * strides[i];
    }
  if (extent == 0)
    return false;
  if (extent >= gpusPerNode)
    return true;
  // Whether a rank is a first member repeats every `period` ranks (the
  // block of the group's outermost axis), and nodes every gpusPerNode, so
  // checking one common period of both covers every group.
  int64_t period = 1;
  for (size_t i = 0; i < order.size(); ++i)
    if (inGroup[i]) {
      period = strides[i] * degrees[order[i]];
      break;
    }
  int64_t span = std::min(world, std::lcm(period, gpusPerNode));
  for (int64_t first = 0; first < span; ++first) {
    bool isFirst = true;
    for (size_t i = 0; i < order.size() && isFirst; ++i)
      if (inGroup[i] && first / strides[i] % degrees[order[i]] != 0)
        isFirst = false;
    if (isFirst && first / gpusPerNode != (first + extent) / gpusPerNode)
      return true;
  }
  return false;
}

int64_t busyRanksPerNode(const Degrees &degrees, const std::vector<Axis> &order,
                         int64_t gpusPerNode) {
  int64_t ranks = std::min(degrees.worldSize(), gpusPerNode);
  if (degrees[Axis::PP] == 1)
    return ranks;
  std::vector<int64_t> strides = stridesOf(degrees, order);
  size_t pp = size_t(std::find(order.begin(), order.end(), Axis::PP) - order.begin());
  if (pp == order.size())
    return ranks;
  // Every node holds the same pattern of stage coordinates (nodes are
  // aligned blocks of consecutive ranks), so node 0 stands for all.
  std::map<int64_t, int64_t> perStage;
  int64_t busiest = 0;
  for (int64_t rank = 0; rank < ranks; ++rank)
    busiest = std::max(busiest, ++perStage[rank / strides[pp] % degrees[Axis::PP]]);
  return busiest;
}

namespace {

class Pricer {
public:
  Pricer(const TransformerWork &work, const Configuration &config,
         const HardwareProfile &hw)
      : work(work), config(config), hw(hw), bf16(work.elementBytes <= 2),
        busyRanks(hw.host ? busyRanksPerNode(config.degrees, config.meshOrder,
                                             config.gpusPerNode)
                          : 0),
        rates(achievedRates(hw, bf16,
                            std::min(config.degrees.worldSize(), config.gpusPerNode),
                            busyRanks)),
        skew(hw.host ? skewOfRanks(*hw.host, std::min(config.degrees.worldSize(),
                                                      config.gpusPerNode))
                     : HostRates::Skew{}) {}

  /// Seconds of one collective of `kind` over the groups of `axes`.
  double collective(CollectiveKind kind, double bytes, int64_t n,
                    const std::vector<Axis> &axes) {
    bool crosses = &linkOf(axes) == &hw.interNode;
    auto [link, eff] = collectiveLink(hw, kind, crosses);
    return collectiveSeconds(kind, bytes, n, link, eff);
  }

  const LinkClass &linkOf(const std::vector<Axis> &axes) {
    auto [known, fresh] = crossesByAxes.try_emplace(axes, false);
    if (fresh)
      known->second = groupsCrossNodes(config.degrees, config.meshOrder, axes,
                                       config.gpusPerNode);
    bool crosses = known->second;
    if (crosses)
      for (Axis a : axes)
        crossing.insert(a);
    return crosses ? hw.interNode : hw.intraNode;
  }

  int64_t groupSize(const std::vector<Axis> &axes) const {
    int64_t n = 1;
    for (Axis a : axes)
      n *= config.degrees[a];
    return n;
  }

  /// Exposed seconds of one collective of `batch` branches' rows at once;
  /// ring shifts hide behind the attention of each hop as far as the
  /// profile's ring_overlap allows.
  double exposed(const CollectiveWork &c, double batch) {
    int64_t n = groupSize(c.axes);
    if (n < 2)
      return 0;
    if (c.kind != CollectiveKind::RingShift) {
      // A collective issued in pieces pays its latency once per piece; the
      // pieces' overlap with the compute between them is not credited.
      double pieces = double(collectiveMessages(c, int64_t(batch)));
      return pieces * collective(c.kind, batch * c.bytes / pieces, n, c.axes);
    }
    double one = collective(c.kind, batch * c.bytes, n, c.axes);
    ComputeWork hop;
    hop.add(OpClass::Attention, batch * c.overlapFlops, 0);
    if (c.overlapKeys > 0)
      hop.attentionFlopsByKeys[c.overlapKeys] = c.overlapFlops;
    double hidden = hw.ringOverlap * computeSeconds(hop, hw, rates);
    return double(c.hops) *
           (std::max(0.0, one - hidden) + hw.ringHopOverhead);
  }

  StepEstimate run() {
    const Degrees &d = config.degrees;
    int64_t stages = d[Axis::PP];
    std::vector<int64_t> partition = config.ppPartition;
    if (partition.empty())
      partition = defaultPipelinePartition(int64_t(work.blocks.size()), stages);
    double calls = double(config.branchCalls) / double(d[Axis::CFG]);
    // dit-batch-branches: one call on the branches' batch, so each
    // collective runs once on `batch` times the bytes (and pays its latency
    // once); the FLOPs and activation bytes are the same, and the weights
    // are read once instead of `calls` times.
    double batch = stages == 1 && config.batchBranches && calls > 1 ? calls : 1;
    double callsPerStep = calls / batch;

    struct Stage {
      double compute = 0, launch = 0, params = 0, buffers = 0, flops = 0;
      /// The compute of the blocks with a blocking collective, whose skew
      /// those collectives wait out (HostRates::skew).
      double syncedCompute = 0;
      std::map<Axis, double> comm, bytesSent;
    };
    std::vector<Stage> perStage(stages);
    size_t block = 0;
    for (int64_t s = 0; s < stages; ++s) {
      Stage &stage = perStage[s];
      ComputeWork compute, synced;
      std::map<Axis, double> syncsPerCall;
      auto add = [&](const BlockWork &b) {
        compute.add(b.compute);
        stage.params += b.paramBytes;
        bool syncs = false;
        for (const CollectiveWork &c : b.collectives) {
          int64_t n = groupSize(c.axes);
          if (n > 1) {
            stage.bytesSent[c.axes.front()] +=
                calls * double(c.hops) * collectiveBytesSent(c.kind, c.bytes, n);
            // Each ring hop waits for its block; any other collective once
            // per piece the runtime issues it in.
            syncsPerCall[c.axes.front()] +=
                c.kind == CollectiveKind::RingShift
                    ? double(c.hops)
                    : double(collectiveMessages(c, int64_t(batch)));
            syncs = true;
          }
          double seconds = exposed(c, batch) * callsPerStep;
          if (seconds > 0)
            stage.comm[c.axes.front()] += seconds;
          stage.buffers = std::max(stage.buffers, 2 * batch * c.bytes);
        }
        if (syncs)
          synced.add(b.compute);
      };
      if (s == 0)
        add(work.prologue);
      for (int64_t i = 0; i < partition[s] && block < work.blocks.size(); ++i)
        add(work.blocks[block++]);
      if (batch > 1) {
        compute = compute.batched(batch);
        synced = synced.batched(batch);
      }
      stage.compute = computeSeconds(compute, hw, rates) * callsPerStep;
      stage.launch = compute.launches * hw.kernelLaunch * callsPerStep;
      stage.flops = compute.totalFlops() * callsPerStep;
      // The skew the blocks' collectives wait out: a wait per collective,
      // and the fraction of the compute they follow, shared among the axes
      // by their collectives.
      stage.syncedCompute = computeSeconds(synced, hw, rates) * callsPerStep;
      double syncs = 0;
      for (auto &[axis, count] : syncsPerCall)
        syncs += count;
      if (skew.perSync > 0 || skew.fraction > 0)
        for (auto &[axis, count] : syncsPerCall)
          stage.comm[axis] += count * callsPerStep * skew.perSync +
                              skew.fraction * stage.syncedCompute * count / syncs;
    }

    StepEstimate out;
    // Pipeline sends: each cut's activations once per call, and the new
    // latents from the last stage back to the first once per step.
    double sends = 0;
    if (stages > 1) {
      size_t end = 0;
      for (int64_t s = 0; s + 1 < stages; ++s) {
        end += size_t(partition[s]);
        double cut = end > 0 && end <= work.blocks.size()
                         ? work.blocks[end - 1].cutBytes
                         : 0;
        sends += calls * collective(CollectiveKind::SendRecv, cut, 2, {Axis::PP});
        // The next stage waits out this one's skew over what its blocks'
        // own collectives have not already.
        sends += calls * skew.perSync +
                 skew.fraction * (perStage[s].compute - perStage[s].syncedCompute);
        perStage[s].bytesSent[Axis::PP] += calls * cut;
        perStage[s].buffers = std::max(perStage[s].buffers, cut);
      }
      sends += collective(CollectiveKind::SendRecv, work.latentBytes, 2,
                          {Axis::PP});
      perStage.back().bytesSent[Axis::PP] += work.latentBytes;
    }
    // CFG: one all-gather of every branch's prediction per step.
    double cfgGather = 0;
    if (d[Axis::CFG] > 1)
      for (Stage &stage : perStage)
        stage.bytesSent[Axis::CFG] +=
            collectiveBytesSent(CollectiveKind::AllGather,
                                calls * work.latentBytes, d[Axis::CFG]);
    if (d[Axis::CFG] > 1) {
      cfgGather = collective(CollectiveKind::AllGather, calls * work.latentBytes,
                             d[Axis::CFG], {Axis::CFG});
      // The gather waits out the branches' skew over the step's compute
      // that no earlier collective has.
      double unsynced = 0;
      for (const Stage &stage : perStage)
        unsynced = std::max(unsynced, stage.compute - stage.syncedCompute);
      cfgGather += skew.perSync + skew.fraction * unsynced;
    }

    // A step's branch calls are micro-batches through the stages: dit-run
    // starts each stage's sends asynchronously and a stage takes its next
    // call while the next stage works on the last one (seed 004). With M
    // calls over stages of per-call times t_s, a step takes
    // sum(t_s) + (M - 1) max(t_s), GPipe's schedule; one stage or one call
    // is the plain sum.
    double microBatches = std::max(1.0, std::round(calls));
    double sumPerCall = 0, maxPerCall = 0, computeOnly = 0;
    size_t busiest = 0;
    for (size_t s = 0; s < perStage.size(); ++s) {
      double own = perStage[s].compute;
      for (auto &[axis, seconds] : perStage[s].comm)
        own += seconds;
      sumPerCall += own / microBatches;
      maxPerCall = std::max(maxPerCall, own / microBatches);
      computeOnly += perStage[s].compute;
      if (perStage[s].compute > perStage[busiest].compute)
        busiest = s;
    }
    double chain = sumPerCall + (microBatches - 1) * maxPerCall;
    // On a CPU host the overlapping stages share its cores: the step is at
    // least every stage's work at full speed (thread-seconds) over the cores.
    if (hw.host && stages > 1)
      chain = std::max(chain, hostBound(computeOnly));
    const Stage &critical = perStage[busiest];
    out.computeSeconds = critical.compute;
    out.launchSeconds = critical.launch;
    out.commSeconds = critical.comm;
    out.bytesSent = critical.bytesSent;
    if (sends > 0)
      out.commSeconds[Axis::PP] += sends;
    if (cfgGather > 0)
      out.commSeconds[Axis::CFG] += cfgGather;
    out.stepSeconds = chain + sends + cfgGather;
    out.bubbleSeconds =
        std::max(0.0, out.stepSeconds - out.computeSeconds - out.totalCommSeconds());
    out.flopsPerRank = critical.flops;
    for (const Stage &stage : perStage) {
      out.paramBytes = std::max(out.paramBytes, stage.params);
      out.bufferBytes = std::max(out.bufferBytes, stage.buffers);
    }
    // A second expert's blocks sit on the same stages as the first's.
    double firstExpert = work.prologue.paramBytes;
    for (const BlockWork &b : work.blocks)
      firstExpert += b.paramBytes;
    if (work.otherExpertParamBytes > 0 && firstExpert > 0)
      out.paramBytes *= config.expertOffload
                            ? std::max(1.0, work.otherExpertParamBytes / firstExpert)
                            : 1 + work.otherExpertParamBytes / firstExpert;
    out.activationBytes = batch * work.peakActivationBytes;
    // Every axis whose groups span nodes, whether or not it communicates
    // (dp replicas across nodes cost nothing, and say so).
    for (Axis axis : kAllAxes)
      if (d[axis] > 1)
        linkOf({axis});
    out.crossNodeAxes.assign(crossing.begin(), crossing.end());
    return out;
  }

  /// Seconds the host's cores need for `stageCompute` (the stages' compute
  /// seconds summed, each priced with one stage's ranks busy): the
  /// thread-seconds they are at full speed, over the cores.
  double hostBound(double stageCompute) const {
    const HostRates &host = *hw.host;
    int64_t busy = std::max<int64_t>(1, busyRanks);
    int64_t threads = threadsPerRank(host, busy);
    double share = std::min(1.0, double(host.cores) / double(busy * threads));
    return stageCompute * share * double(busy * threads) / double(host.cores);
  }

private:
  const TransformerWork &work;
  const Configuration &config;
  const HardwareProfile &hw;
  bool bf16;
  /// The ranks of a node that compute at once (a CPU host's profile only).
  int64_t busyRanks;
  AchievedRates rates;
  /// The wait of a blocking collective for its last member (a CPU host's
  /// profile only; zero elsewhere).
  HostRates::Skew skew;
  std::set<Axis> crossing;
  std::map<std::vector<Axis>, bool> crossesByAxes;
};

} // namespace

StepEstimate estimateStep(const TransformerWork &work,
                          const Configuration &config,
                          const HardwareProfile &hw) {
  return Pricer(work, config, hw).run();
}

} // namespace ditc
