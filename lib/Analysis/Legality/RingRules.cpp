//===- RingRules.cpp - what ring attention can and cannot rotate ----------===//
#include "Rules.h"

namespace ditc::rules {

/// ring-backend: the per-hop online-softmax merge needs the kernel's softmax
/// LSE; only backends that declare ring rotation (fa, sage_attn) have it.
/// Without a backend, ring attention runs on fa and says so; without ring
/// the backend makes no difference to legality, so nothing is said.
void checkRingBackend(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement &transformer = ctx.transformer();
  if (transformer.degrees[Axis::Ring] < 2)
    return;
  if (!transformer.backend)
    sink.report("ring-backend", Severity::Note,
                std::string("no attention backend given; choosing ") +
                    kDefaultAttentionBackend);
  std::string capable;
  for (const AttentionBackend &backend : knownAttentionBackends())
    if (backend.supportsRingRotation)
      capable += std::string(capable.empty() ? "" : ", ") + backend.name;
  auto refuse = [&](const std::string &backend, mlir::Operation *anchor) {
    sink.report("ring-backend", Severity::Error,
                "ring degree " +
                    std::to_string(transformer.degrees[Axis::Ring]) +
                    " needs an attention backend with ring rotation (" +
                    capable + "); '" + backend + "' has none",
                "transformer", anchor);
  };
  std::string chosen = resolvedBackend(transformer);
  const AttentionBackend *backend = findAttentionBackend(chosen);
  if (!backend || !backend->supportsRingRotation) {
    refuse(chosen, nullptr);
    return;
  }
  // An attention op may pin its own kernel.
  for (const AttentionFacts &attention : ctx.attentions) {
    if (!attention.backend)
      continue;
    const AttentionBackend *own = findAttentionBackend(*attention.backend);
    if (!own || !own->supportsRingRotation) {
      refuse(*attention.backend, attention.op);
      return;
    }
  }
}

namespace {
/// The attentions `matches` accepts: how many, and the first (the anchor of
/// the diagnostic).
struct MatchingAttentions {
  int64_t count = 0;
  mlir::Operation *first = nullptr;
};
template <typename Pred>
MatchingAttentions findAttentions(const LegalityContext &ctx, Pred matches) {
  MatchingAttentions found;
  for (const AttentionFacts &attention : ctx.attentions)
    if (matches(attention)) {
      found.first = found.first ? found.first : attention.op;
      ++found.count;
    }
  return found;
}

/// Reports the first attention matching `matches` when ring > 1.
template <typename Pred>
void refuseUnderRing(const LegalityContext &ctx, DiagnosticSink &sink,
                     const char *rule, Pred matches, const std::string &why) {
  int64_t ring = ctx.transformer().degrees[Axis::Ring];
  if (ring < 2)
    return;
  MatchingAttentions found = findAttentions(ctx, matches);
  if (found.count)
    sink.report(rule, Severity::Error,
                "ring degree " + std::to_string(ring) + " cannot rotate " +
                    why + " (" + std::to_string(found.count) + " such attention" +
                    (found.count == 1 ? "" : "s") +
                    "); use ulysses or kv_gather for the row split",
                "transformer", found.first);
}
} // namespace

/// ring-varlen: SGLang Diffusion's generic varlen path (several packed
/// segments per row, HunyuanVideo's text) has no ring-aware rotation and
/// raises under ring. ditc never row-splits the text: ring rotates only the
/// image K/V, and each rank attends the replicated text (all its packed
/// segments, under its key mask) locally, once, merged into the same online
/// softmax. So
/// the configuration is legal here, and the note says what another engine
/// would do with it.
void checkRingVarlen(const LegalityContext &ctx, DiagnosticSink &sink) {
  int64_t ring = ctx.transformer().degrees[Axis::Ring];
  if (ring < 2)
    return;
  MatchingAttentions varlen =
      findAttentions(ctx, [](const AttentionFacts &a) { return a.varlen; });
  if (varlen.count)
    sink.report("ring-varlen", Severity::Note,
                "ring degree " + std::to_string(ring) + " over " +
                    std::to_string(varlen.count) + " varlen-packed attention" +
                    (varlen.count == 1 ? "" : "s") +
                    ": ditc rotates only the image K/V and attends the "
                    "replicated text locally on every rank; SGLang Diffusion "
                    "raises NotImplementedError for this path",
                "transformer", varlen.first);
}

/// ring-stacked-qkv: the legacy stacked-QKV layer has no softmax LSE to
/// merge.
void checkRingStackedQKV(const LegalityContext &ctx, DiagnosticSink &sink) {
  refuseUnderRing(
      ctx, sink, "ring-stacked-qkv",
      [](const AttentionFacts &a) { return a.stackedQKV; },
      "a stacked-QKV attention, which has no softmax LSE to merge");
}

/// ring-kvgather-exclusive: ring and K/V-gather both decide how a rank's
/// query rows see remote K/V; they are alternatives for one slot.
void checkRingKVGatherExclusive(const LegalityContext &ctx,
                                DiagnosticSink &sink) {
  const Degrees &d = ctx.transformer().degrees;
  if (d[Axis::Ring] > 1 && d[Axis::KVGather] > 1)
    sink.report("ring-kvgather-exclusive", Severity::Error,
                "ring degree " + std::to_string(d[Axis::Ring]) +
                    " and kv_gather degree " +
                    std::to_string(d[Axis::KVGather]) +
                    " both fill the row-splitting slot; use one of them");
}

} // namespace ditc::rules
