//===- PipelineRules.cpp - pipeline stage partition -----------------------===//
#include "Rules.h"

namespace ditc::rules {

/// pp-partition: pp <= blocks; an explicit partition has pp entries, each
/// >= 1, summing to the block count; the default split is reported.
void checkPPPartition(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement &transformer = ctx.transformer();
  int64_t pp = transformer.degrees[Axis::PP];
  int64_t blocks = ctx.model.blocks;
  const std::vector<int64_t> &partition = transformer.ppPartition;
  if (pp > blocks) {
    sink.report("pp-partition", Severity::Error,
                "pp " + std::to_string(pp) + " exceeds the " +
                    std::to_string(blocks) + " transformer blocks");
    return;
  }
  if (partition.empty()) {
    // A note never makes a candidate illegal; the suggestion search skips it.
    if (pp > 1 && sink.wantsDetails())
      sink.report("pp-partition", Severity::Note,
                  "default pipeline split of " + std::to_string(blocks) +
                      " blocks over " + std::to_string(pp) + " stages: " +
                      rankList(defaultPipelinePartition(blocks, pp)));
    return;
  }
  std::string given = rankList(partition);
  if (int64_t(partition.size()) != pp) {
    sink.report("pp-partition", Severity::Error,
                "partition " + given + " has " +
                    std::to_string(partition.size()) + " entries, but pp is " +
                    std::to_string(pp));
    return;
  }
  int64_t sum = 0;
  for (size_t stage = 0; stage < partition.size(); ++stage) {
    if (partition[stage] < 1)
      sink.report("pp-partition", Severity::Error,
                  "partition " + given + " gives stage " +
                      std::to_string(stage) + " " +
                      std::to_string(partition[stage]) +
                      " blocks; every stage needs at least 1");
    sum += partition[stage];
  }
  if (sum != blocks)
    sink.report("pp-partition", Severity::Error,
                "partition " + given + " sums to " + std::to_string(sum) +
                    ", but the model has " + std::to_string(blocks) +
                    " blocks");
}

} // namespace ditc::rules

namespace ditc::rules {

/// expert-offload: offloading keeps the expert that runs and loads the
/// other at the switch (Wan 2.2 A14B's high- and low-noise experts); a
/// one-expert model has nothing to swap, so the flag would change nothing
/// the user asked for.
void checkExpertOffload(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement &transformer = ctx.transformer();
  if (!transformer.offload || ctx.model.experts >= 2)
    return;
  sink.report("expert-offload", Severity::Error,
              "expert offload keeps one of two experts resident, but " + ctx.model.className +
                  " (" + ctx.model.family + ") has " + std::to_string(ctx.model.experts) +
                  " expert; drop --expert-offload (\"offload\" on the transformer)",
              "transformer");
}

} // namespace ditc::rules
