//===- Advice.cpp - seed 002's advice as notes, priced --------------------===//
#include "ditc/CostModel/Advice.h"
#include "ditc/CostModel/Search.h"
#include "ditc/CostModel/WorkExtraction.h"

#include <algorithm>
#include <cstdio>

namespace ditc {

namespace {

struct Advice {
  const char *rule;
  std::string text;
};

std::string milliseconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", seconds * 1e3);
  return buffer;
}

} // namespace

std::vector<RuleDiagnostic>
adviseConfiguration(mlir::ModuleOp imported, const LegalityContext &context,
                    const std::function<HardwareProfile()> &profile, int64_t steps,
                    int64_t branchCalls) {
  Configuration mine = requestedConfiguration(context, branchCalls);
  const Degrees &d = mine.degrees;
  const ModelFacts &m = context.model;
  std::optional<int64_t> perNode = context.deployment.ranksPerNode();
  std::vector<Advice> advice;
  if (d[Axis::TP] > 2 && m.frames <= 1)
    advice.push_back({"advice-tp", "tp " + std::to_string(d[Axis::TP]) +
                                       " on an image DiT: TP beyond 2 rarely helps image "
                                       "DiTs (an all-reduce per block grows while each "
                                       "rank's GEMMs shrink)"});
  if (d[Axis::PP] > 1 && d[Axis::CFG] < 2 && branchCalls >= 2)
    advice.push_back({"advice-cfg-before-pp",
                      "pp " + std::to_string(d[Axis::PP]) + " on a true-CFG model whose " +
                          std::to_string(branchCalls) +
                          " guidance branches no cfg ranks split: prefer CFG parallel "
                          "before PP (one combine per step, no pipeline bubble)"});
  if (perNode && *perNode >= 1 && d[Axis::KVGather] > 1 &&
      groupsCrossNodes(d, mine.meshOrder, {Axis::KVGather}, *perNode))
    advice.push_back({"advice-kv-gather-node",
                      "kv_gather " + std::to_string(d[Axis::KVGather]) +
                          " groups span nodes of " + std::to_string(*perNode) +
                          " GPUs: K/V-gather all-gathers K and V every attention and "
                          "should stay within a node"});
  if (advice.empty())
    return {};
  HardwareProfile hardware = profile();

  // This configuration's step, and the fastest legal one with its GPUs.
  mlir::FailureOr<TransformerWork> work = partitionAndExtract(imported, d);
  if (mlir::failed(work))
    return {};
  StepEstimate estimate = estimateStep(*work, mine, hardware);
  SearchOptions options =
      nearbySearchOptions(context, hardware, steps, branchCalls, mine.gpusPerNode);
  options.confirmTop = 1;
  // Step against step: the notes compare the transformer's placement.
  options.priceTextEncoders = false;
  mlir::FailureOr<SearchResult> found = searchConfigurations(imported, context, options);
  if (mlir::failed(found) || found->ranked.empty())
    return {};
  std::vector<RankedConfiguration> ranked = found->ranked;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedConfiguration &a, const RankedConfiguration &b) {
                     return a.estimate.stepSeconds < b.estimate.stepSeconds;
                   });
  const RankedConfiguration &best = ranked.front();
  if (best.config.degrees == d || best.estimate.stepSeconds >= estimate.stepSeconds * 0.999)
    return {};
  std::vector<RuleDiagnostic> notes;
  for (const Advice &a : advice)
    notes.push_back({a.rule, Severity::Note,
                     a.text + "; the cost model (" + hardware.name + ") prices this at " +
                         milliseconds(estimate.stepSeconds) + " ms per step and " +
                         shortDegrees(best.config.degrees) + " at " +
                         milliseconds(best.estimate.stepSeconds) + " ms (ditc search ranks it " +
                         "higher)",
                     "transformer", nullptr});
  return notes;
}

} // namespace ditc
