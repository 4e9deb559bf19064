//===- Search.cpp - enumerate, judge, price and rank configurations -------===//
#include "ditc/CostModel/Search.h"
#include "ditc/CostModel/WorkExtraction.h"

#include "ditc/Analysis/MeshLayout.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace ditc {

namespace {

/// The four degrees that change a rank's local shapes.
std::array<int64_t, 4> shapeKey(const Degrees &d) {
  return {d[Axis::TP], d[Axis::Ulysses], d[Axis::Ring], d[Axis::KVGather]};
}

/// Mesh orders worth pricing on a multi-node cluster: the axes above 1
/// permuted into the default order's slots, one order per set of axes whose
/// groups cross nodes (the only thing an order changes in the model).
std::vector<std::vector<Axis>> distinctOrders(const Degrees &d,
                                              int64_t gpusPerNode) {
  std::vector<Axis> base = MeshLayout::defaultOrder();
  if (d.worldSize() <= gpusPerNode)
    return {base};
  std::vector<size_t> slots;
  std::vector<Axis> active;
  for (size_t i = 0; i < base.size(); ++i)
    if (d[base[i]] > 1) {
      slots.push_back(i);
      active.push_back(base[i]);
    }
  std::sort(active.begin(), active.end());
  std::vector<std::vector<Axis>> orders;
  std::set<std::vector<bool>> seen;
  do {
    std::vector<Axis> order = base;
    for (size_t i = 0; i < slots.size(); ++i)
      order[slots[i]] = active[i];
    std::vector<bool> signature;
    for (Axis a : active)
      signature.push_back(groupsCrossNodes(d, order, {a}, gpusPerNode));
    if (seen.insert(signature).second)
      orders.push_back(order);
  } while (std::next_permutation(active.begin(), active.end()));
  // The default order first, so that ties keep it.
  std::stable_sort(orders.begin(), orders.end(),
                   [&](const std::vector<Axis> &a, const std::vector<Axis> &) {
                     return a == base;
                   });
  return orders;
}

/// Runs every rule on `scratch` with the candidate laid out in `order`;
/// returns the ids of the rules that reported an error.
std::vector<std::string> failingRules(LegalityContext &scratch,
                                      const Degrees &degrees,
                                      const std::vector<Axis> &order,
                                      const SearchOptions &options) {
  Deployment &deployment = scratch.deployment;
  Placement &transformer = *deployment.find("transformer");
  transformer.degrees = degrees;
  transformer.ppPartition.clear();
  transformer.instances = defaultInstances(degrees, order);
  transformer.explicitInstances = false;
  deployment.numGpus = options.numGpus;
  deployment.gpusPerNode = options.gpusPerNode;
  deployment.nnodes = options.numGpus / options.gpusPerNode;
  deployment.meshOrder = order == MeshLayout::defaultOrder()
                             ? std::vector<Axis>{}
                             : order;
  DiagnosticSink quiet(/*detailed=*/false);
  const LegalityContext &ctx = scratch;
  for (const LegalityRule &rule : legalityRules())
    rule.check(ctx, quiet);
  std::vector<std::string> failed;
  for (const RuleDiagnostic &d : quiet.diagnostics)
    if (d.severity == Severity::Error &&
        std::find(failed.begin(), failed.end(), d.rule) == failed.end())
      failed.push_back(d.rule);
  return failed;
}

} // namespace

std::string shortDegrees(const Degrees &d) {
  std::string out;
  for (Axis axis : kAllAxes)
    if (d[axis] > 1)
      out += (out.empty() ? "" : " x ") + std::string(axisName(axis)) + " " +
             std::to_string(d[axis]);
  return out.empty() ? "one GPU" : out;
}

bool ranksBefore(const RankedConfiguration &a, const RankedConfiguration &b,
                 Objective objective) {
  if (objective == Objective::Throughput &&
      a.requestsPerSecond != b.requestsPerSecond)
    return a.requestsPerSecond > b.requestsPerSecond;
  if (a.estimate.stepSeconds != b.estimate.stepSeconds)
    return a.estimate.stepSeconds < b.estimate.stepSeconds;
  // Equal time: the fewer bytes per rank, then the smaller degrees in
  // the order dp, cfg, pp, ring, kv_gather, ulysses, tp.
  if (a.estimate.peakMemoryBytes() != b.estimate.peakMemoryBytes())
    return a.estimate.peakMemoryBytes() < b.estimate.peakMemoryBytes();
  return a.config.degrees.sizes < b.config.degrees.sizes;
}

std::string explainWin(const RankedConfiguration &winner,
                       const RankedConfiguration &runnerUp) {
  const StepEstimate &w = winner.estimate, &r = runnerUp.estimate;
  struct Term {
    std::string name;
    double delta; // runner-up minus winner, seconds
  };
  std::vector<Term> terms = {{"compute", r.computeSeconds - w.computeSeconds},
                             {"pipeline bubble", r.bubbleSeconds - w.bubbleSeconds}};
  for (Axis axis : kAllAxes) {
    auto get = [&](const StepEstimate &e) {
      auto it = e.commSeconds.find(axis);
      return it == e.commSeconds.end() ? 0.0 : it->second;
    };
    double delta = get(r) - get(w);
    if (delta != 0)
      terms.push_back({std::string(axisName(axis)) + " communication", delta});
  }
  std::sort(terms.begin(), terms.end(), [](const Term &a, const Term &b) {
    return std::fabs(a.delta) > std::fabs(b.delta);
  });
  std::ostringstream os;
  os.precision(3);
  os << shortDegrees(winner.config.degrees) << " ";
  double gap = r.stepSeconds - w.stepSeconds;
  os << "is " << gap * 1e3 << " ms per step faster than "
     << shortDegrees(runnerUp.config.degrees) << ": ";
  bool first = true;
  for (const Term &t : terms) {
    if (std::fabs(t.delta) < 1e-3 * std::max(gap, 1e-12) || !first && std::fabs(t.delta) < 0.1 * std::fabs(terms.front().delta))
      continue;
    os << (first ? "" : ", ") << std::fabs(t.delta) * 1e3 << " ms "
       << (t.delta > 0 ? "less " : "more ") << t.name;
    first = false;
  }
  if (first)
    os << "the same terms, ties broken by memory and degrees";
  return os.str();
}

mlir::FailureOr<SearchResult>
searchConfigurations(mlir::ModuleOp imported, const LegalityContext &context,
                     const SearchOptions &options) {
  SearchResult result;
  LegalityContext scratch = compactLegalityContext(context);
  std::map<std::array<int64_t, 4>, TransformerWork> works;
  auto workFor = [&](const Degrees &d) -> const TransformerWork * {
    auto key = shapeKey(d);
    auto it = works.find(key);
    if (it != works.end())
      return &it->second;
    mlir::FailureOr<TransformerWork> work = partitionAndExtract(imported, d);
    if (mlir::failed(work))
      return nullptr;
    return &works.emplace(key, std::move(*work)).first->second;
  };
  auto configurationOf = [&](const Degrees &d, std::vector<Axis> order) {
    Configuration config;
    config.degrees = d;
    config.meshOrder = std::move(order);
    config.gpusPerNode = std::min(options.gpusPerNode, options.numGpus);
    config.branchCalls = options.branchCalls;
    return config;
  };
  auto requestsPerSecond = [&](const RankedConfiguration &c) {
    return double(c.config.degrees[Axis::DP]) /
           (c.estimate.stepSeconds * double(options.steps));
  };

  // One GPU, for speedups (priced even when it would not fit).
  const TransformerWork *single = workFor(Degrees());
  if (!single)
    return mlir::failure();
  Configuration one = configurationOf(Degrees(), MeshLayout::defaultOrder());
  one.gpusPerNode = 1;
  result.singleGpu = estimateStep(*single, one, options.hardware);
  result.singleGpuFits =
      result.singleGpu.peakMemoryBytes() <= options.hardware.memoryBytes;

  bool failedPartition = false;
  result.exhaustive = forEachDegreeCandidate(
      scratch, options.numGpus, [&](const Degrees &degrees) {
        ++result.candidates;
        std::vector<std::vector<Axis>> orders =
            distinctOrders(degrees, options.gpusPerNode);
        std::vector<std::string> failed =
            failingRules(scratch, degrees, orders.front(), options);
        if (!failed.empty()) {
          for (const std::string &rule : failed)
            ++result.rejectedByRule[rule];
          return true;
        }
        ++result.legal;
        const TransformerWork *work = workFor(degrees);
        if (!work) {
          failedPartition = true;
          return false;
        }
        std::optional<RankedConfiguration> best;
        for (size_t i = 0; i < orders.size(); ++i) {
          if (i > 0 && !failingRules(scratch, degrees, orders[i], options).empty())
            continue;
          RankedConfiguration candidate;
          candidate.config = configurationOf(degrees, orders[i]);
          candidate.estimate =
              estimateStep(*work, candidate.config, options.hardware);
          candidate.requestsPerSecond = requestsPerSecond(candidate);
          if (!best || ranksBefore(candidate, *best, options.objective))
            best = candidate;
        }
        if (best->estimate.peakMemoryBytes() > options.hardware.memoryBytes) {
          ++result.tooLarge;
          return true;
        }
        result.ranked.push_back(*best);
        return true;
      });
  if (failedPartition)
    return mlir::failure();
  double singleRate = 1.0 / (result.singleGpu.stepSeconds * double(options.steps));
  for (RankedConfiguration &c : result.ranked) {
    c.speedup = options.objective == Objective::Throughput
                    ? c.requestsPerSecond / singleRate
                    : result.singleGpu.stepSeconds / c.estimate.stepSeconds;
    c.parallelEfficiency = c.speedup / double(c.config.degrees.worldSize());
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [&](const RankedConfiguration &a, const RankedConfiguration &b) {
                     return ranksBefore(a, b, options.objective);
                   });
  return result;
}

} // namespace ditc
