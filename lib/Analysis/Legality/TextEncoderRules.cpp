//===- TextEncoderRules.cpp - where and how the text encoders run ---------===//
//
// The text_encoder component: its tensor parallelism (heads and the
// feed-forward's inner width split over tp_size ranks) and the ranks of
// each transformer replica that encode its prompts, then broadcast the
// embeddings to the replica's other ranks.
//
//===----------------------------------------------------------------------===//
#include "Rules.h"

#include <algorithm>
#include <optional>

namespace ditc::rules {

namespace {
const Placement *textEncoderPlacement(const LegalityContext &ctx) {
  return ctx.deployment.find("text_encoder");
}
} // namespace

/// text-encoder-axes: a text encoder runs once per prompt, so it has no
/// image sequence and no denoising stages to split: only tp_size (and
/// replicas) apply to it. Guidance branches are cfg-branches' to refuse.
void checkTextEncoderAxes(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement *encoder = textEncoderPlacement(ctx);
  if (!encoder)
    return;
  for (Axis axis : {Axis::PP, Axis::Ring, Axis::KVGather, Axis::Ulysses}) {
    int64_t degree = encoder->degrees[axis];
    if (degree < 2)
      continue;
    sink.report("text-encoder-axes", Severity::Error,
                "text_encoder " + std::string(axisName(axis)) + " " +
                    std::to_string(degree) +
                    " does not apply: the text encoders run once per prompt, with no "
                    "image sequence or denoising stages to split; "
                    "they split over tp_size only",
                "text_encoder");
    return;
  }
}

/// text-encoder-heads: tensor parallelism gives each rank heads / tp of
/// every encoder's attention and width / tp of each width it splits (the
/// q, k, v projections and the feed-forward's inner width), so tp divides
/// each; an encoder without a graph (its config not in the snapshot, or a
/// class ditc does not model) cannot be split. A hand-written module with
/// no text_encoder component describes no encoder to check.
void checkTextEncoderHeads(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement *encoder = textEncoderPlacement(ctx);
  if (!encoder)
    return;
  int64_t tp = encoder->degrees[Axis::TP];
  if (tp < 2)
    return;
  if (ctx.model.textEncoders.empty())
    return;
  if (std::none_of(ctx.model.textEncoders.begin(), ctx.model.textEncoders.end(),
                   [](const ModelFacts::TextEncoderFacts &e) { return e.hasGraph; })) {
    sink.report("text-encoder-heads", Severity::Error,
                "text_encoder tp_size " + std::to_string(tp) +
                    " splits the text encoders, but the model holds no graph of them "
                    "(ditc builds one for FLUX, SD3 and Wan pipelines whose snapshot "
                    "holds text_encoder*/config.json); use tp_size 1",
                "text_encoder");
    return;
  }
  for (const ModelFacts::TextEncoderFacts &e : ctx.model.textEncoders) {
    if (!e.hasGraph)
      continue;
    if (e.heads % tp != 0) {
      sink.report("text-encoder-heads", Severity::Error,
                  "text_encoder tp_size " + std::to_string(tp) + " does not divide the " +
                      std::to_string(e.heads) + " attention heads of " + e.className,
                  "text_encoder");
      return;
    }
    for (const auto &[linear, width] : e.splitWidths)
      if (width % tp != 0) {
        sink.report("text-encoder-heads", Severity::Error,
                    "text_encoder tp_size " + std::to_string(tp) +
                        " does not divide the width " + std::to_string(width) + " of " +
                        e.className + "'s " + linear + ", which tensor parallelism splits",
                    "text_encoder");
        return;
      }
  }
}

/// text-encoder-ranks: each transformer replica's prompts are encoded by
/// tp_size ranks, which broadcast the embeddings to the rest of the
/// replica: one text_encoder instance per replica, inside it or on ranks
/// of its own.
void checkTextEncoderRanks(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement *encoder = textEncoderPlacement(ctx);
  if (!encoder)
    return;
  const Placement &transformer = ctx.transformer();
  int64_t tp = encoder->degrees[Axis::TP];
  if (!encoder->explicitInstances) {
    for (size_t i = 0; i < transformer.instances.size(); ++i) {
      int64_t ranks = int64_t(transformer.instances[i].size());
      if (tp <= ranks)
        continue;
      sink.report("text-encoder-ranks", Severity::Error,
                  "text_encoder tp_size " + std::to_string(tp) + " exceeds the " +
                      std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
                      " of transformer replica " + std::to_string(i) + " " +
                      rankList(transformer.instances[i]) +
                      "; a replica's prompts are encoded on its own ranks, so use at most " +
                      std::to_string(ranks),
                  "text_encoder");
      return;
    }
    return;
  }
  // Explicit instances: each lies inside one transformer replica (the one
  // holding its first rank), or on ranks of its own, where instance i
  // serves replica i and broadcasts to it (a disaggregated encoder). Every
  // replica holds at least one, so each replica's embeddings come from one
  // place. A second instance for one replica (an encoder on every rank)
  // would only repeat the first's work: it is warned about, and holds no
  // encoder.
  const Deployment &d = ctx.deployment;
  TransformerRanks placed(d);
  std::vector<bool> served(transformer.instances.size(), false);
  std::vector<size_t> ownRanks; // instances on ranks of their own
  bool outsideWorld = false;
  auto secondInstance = [&](size_t i, size_t replica) {
    sink.report("text-encoder-ranks", Severity::Warning,
                "text_encoder instance " + std::to_string(i) + " " +
                    rankList(encoder->instances[i]) +
                    " is a second instance in transformer replica " +
                    std::to_string(replica) + " " +
                    rankList(transformer.instances[replica]) +
                    "; the replica's first listed instance encodes its prompts and "
                    "broadcasts them, so this one holds no encoder",
                "text_encoder");
  };
  for (size_t i = 0; i < encoder->instances.size(); ++i) {
    const std::vector<int64_t> &ranks = encoder->instances[i];
    if (ranks.empty())
      continue;
    // A rank outside the world is world-size's to report.
    if (std::any_of(ranks.begin(), ranks.end(),
                    [&](int64_t r) { return r < 0 || r >= d.numGpus; })) {
      outsideWorld = true;
      continue;
    }
    if (placed.onRanksOfItsOwn(ranks)) {
      ownRanks.push_back(i);
      continue;
    }
    // Inside a replica: the one holding its first rank, and only that one.
    // A first rank of its own with a later rank inside is named by the
    // first rank that runs the transformer.
    std::optional<size_t> home = placed.replicaOf(ranks.front());
    for (int64_t rank : ranks) {
      std::optional<size_t> replica = placed.replicaOf(rank);
      if (home ? replica == home : !replica)
        continue;
      std::string message =
          home ? "names rank " + std::to_string(rank) + ", which is not in transformer replica " +
                     std::to_string(*home) + " " + rankList(transformer.instances[*home]) +
                     ", which holds its first rank"
               : "names rank " + std::to_string(rank) + " of transformer replica " +
                     std::to_string(*replica) + " " +
                     rankList(transformer.instances[*replica]) + " and rank " +
                     std::to_string(ranks.front()) + ", which runs no transformer";
      sink.report("text-encoder-ranks", Severity::Error,
                  "text_encoder instance " + std::to_string(i) + " " + rankList(ranks) + " " +
                      message +
                      ": an instance encodes one replica's prompts and lies inside that "
                      "replica, or on ranks of its own",
                  "text_encoder");
      return;
    }
    if (served[*home])
      secondInstance(i, *home);
    served[*home] = true;
  }
  for (size_t i : ownRanks) {
    if (i >= served.size()) {
      sink.report("text-encoder-ranks", Severity::Error,
                  "text_encoder instance " + std::to_string(i) + " " +
                      rankList(encoder->instances[i]) +
                      " runs on ranks of its own, so it serves transformer replica " +
                      std::to_string(i) + " (its index), but the transformer has " +
                      std::to_string(served.size()) + " replica" +
                      (served.size() == 1 ? "" : "s"),
                  "text_encoder");
      return;
    }
    if (served[i])
      secondInstance(i, i);
    served[i] = true;
  }
  // An instance that names a rank outside the world was meant for some
  // replica; which one is unknowable, so coverage is not judged.
  if (outsideWorld)
    return;
  for (size_t r = 0; r < served.size(); ++r) {
    if (served[r])
      continue;
    sink.report("text-encoder-ranks", Severity::Error,
                "transformer replica " + std::to_string(r) + " " +
                    rankList(transformer.instances[r]) +
                    " holds no text_encoder instance, so nothing encodes its prompts; "
                    "list an instance of tp_size " + std::to_string(tp) +
                    " of its ranks, or leave text_encoder's instances out to use each "
                    "replica's first ranks",
                "text_encoder");
    return;
  }
}

} // namespace ditc::rules
