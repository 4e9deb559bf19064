//===- GuidanceRules.cpp - CFG parallelism and the KV cache ---------------===//
#include "Rules.h"

#include <sstream>

namespace ditc::rules {

/// cfg-branches: CFG parallelism splits guidance branches, so it needs
/// branches to split: a model with true CFG, run at a guidance scale above
/// 1 (at most 1 turns guidance off, and the pipeline runs one branch, as
/// diffusers' do_classifier_free_guidance), and a branch count it divides.
void checkCFGBranches(const LegalityContext &ctx, DiagnosticSink &sink) {
  // Only the denoiser runs guidance branches; another component with
  // cfg > 1 would split branches it does not have.
  for (const Placement &placement : ctx.deployment.placements)
    if (placement.component != "transformer" &&
        placement.degrees[Axis::CFG] > 1)
      sink.report("cfg-branches", Severity::Error,
                  placement.component + " has cfg " +
                      std::to_string(placement.degrees[Axis::CFG]) +
                      ", but only the transformer runs guidance branches",
                  placement.component);
  int64_t cfg = ctx.transformer().degrees[Axis::CFG];
  if (cfg < 2)
    return;
  const ModelFacts &m = ctx.model;
  // The importer counts the branches that run; a hand-written module may
  // state the model's with a scale that turns them off.
  if (m.guidanceScale <= 1.0) {
    std::ostringstream scale;
    scale << m.guidanceScale;
    sink.report("cfg-branches", Severity::Error,
                "cfg " + std::to_string(cfg) + " has no second branch to run: guidance scale " +
                    scale.str() +
                    " <= 1 turns classifier-free guidance off, so the pipeline runs one "
                    "branch per step; use cfg 1, or a guidance scale above 1");
    return;
  }
  if (m.branches < 2) {
    sink.report("cfg-branches", Severity::Error,
                "cfg " + std::to_string(cfg) + " needs true CFG, but " +
                    m.className + " (" + m.family +
                    ") is guidance-distilled: 1 branch per step");
    return;
  }
  if (m.branches % cfg != 0)
    sink.report("cfg-branches", Severity::Error,
                "cfg " + std::to_string(cfg) + " does not divide the " +
                    std::to_string(m.branches) + " guidance branches");
}

/// paged-kv-cfg: a paged KV cache counts every instance rank as a head
/// shard, so it cannot sit on a component with cfg > 1.
void checkPagedKVCFG(const LegalityContext &ctx, DiagnosticSink &sink) {
  for (const Placement &placement : ctx.deployment.placements) {
    int64_t cfg = placement.degrees[Axis::CFG];
    if (cfg < 2)
      continue;
    bool paged = placement.pagedKVCache;
    mlir::Operation *anchor = nullptr;
    if (placement.component == "transformer")
      for (const AttentionFacts &attention : ctx.attentions)
        if (attention.pagedKVCache) {
          paged = true;
          anchor = attention.op;
          break;
        }
    if (paged)
      sink.report("paged-kv-cfg", Severity::Error,
                  placement.component + " has a paged KV cache and cfg " +
                      std::to_string(cfg) +
                      "; the cache's rank math counts every instance rank "
                      "as a head shard, so branches with different K/V "
                      "must be separate components on cfg 1",
                  placement.component, anchor);
  }
}

} // namespace ditc::rules
