//===- HeadRules.cpp - TP and Ulysses head divisibility -------------------===//
#include "Rules.h"
#include "ditc/Importer/ModelSpec.h"

namespace ditc::rules {

namespace {
mlir::Operation *firstAttention(const LegalityContext &ctx) {
  return ctx.attentions.empty() ? nullptr : ctx.attentions.front().op;
}
} // namespace

/// tp-heads: TP splits heads at the projections, so heads % tp == 0, and
/// every width it splits divides too: hidden, FFN, the joint text stream,
/// and the text stream's own FFN where it differs (Mochi).
void checkTPHeads(const LegalityContext &ctx, DiagnosticSink &sink) {
  int64_t tp = ctx.transformer().degrees[Axis::TP];
  if (tp < 2)
    return;
  const ModelFacts &m = ctx.model;
  if (m.numHeads % tp != 0)
    sink.report("tp-heads", Severity::Error,
                "tp " + std::to_string(tp) + " does not divide the " +
                    std::to_string(m.numHeads) + " attention heads",
                "transformer", firstAttention(ctx));
  struct Width {
    const char *what;
    int64_t value;
  };
  std::vector<Width> widths = {{"hidden width", m.hiddenSize},
                               {"FFN width", m.ffnSize}};
  if (m.dualStream) {
    widths.push_back({"joint text stream width", m.textHiddenSize});
    int64_t textFfn = textStreamFfnSize(m.family, m.textHiddenSize, m.ffnSize);
    if (textFfn != m.ffnSize)
      widths.push_back({"text stream FFN width", textFfn});
  }
  for (const Width &width : widths)
    if (width.value % tp != 0)
      sink.report("tp-heads", Severity::Error,
                  "tp " + std::to_string(tp) + " does not divide the " +
                      width.what + " " + std::to_string(width.value));
}

/// ulysses-heads: Ulysses splits the TP-local heads, so
/// (heads / tp) % ulysses == 0. H % U alone is not enough: 56 heads pass
/// tp 2 x ulysses 4 and fail tp 4 x ulysses 4. An attention declared
/// shard_over_sp = false splits heads over TP only and is exempt.
void checkUlyssesHeads(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Degrees &d = ctx.transformer().degrees;
  int64_t tp = d[Axis::TP], ulysses = d[Axis::Ulysses];
  if (ulysses < 2)
    return;
  std::vector<AttentionFacts> attentions = ctx.attentions;
  if (attentions.empty()) {
    AttentionFacts model;
    model.numHeads = ctx.model.numHeads;
    attentions.push_back(model);
  }
  std::vector<int64_t> reportedHeads;
  for (const AttentionFacts &attention : attentions) {
    if (!attention.shardOverSp || attention.numHeads % tp != 0)
      continue; // exempt, or tp-heads already refuses it
    int64_t local = attention.numHeads / tp;
    if (local % ulysses == 0 ||
        std::count(reportedHeads.begin(), reportedHeads.end(),
                   attention.numHeads))
      continue;
    reportedHeads.push_back(attention.numHeads);
    sink.report("ulysses-heads", Severity::Error,
                "ulysses degree " + std::to_string(ulysses) +
                    " does not divide the " + std::to_string(local) +
                    " TP-local heads (" + std::to_string(attention.numHeads) +
                    " heads / tp " + std::to_string(tp) + ")",
                "transformer", attention.op);
  }
}

} // namespace ditc::rules
