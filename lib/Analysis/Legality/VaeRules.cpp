//===- VaeRules.cpp - the VAE decode's patch parallelism ------------------===//
//
// The VAE decodes each replica's final latents on vae_parallel_size ranks,
// each holding a band of latent rows. Every 3x3 convolution then needs its
// neighbours' edge rows (a halo), GroupNorm's statistics and the mid-block
// attention need the whole image (an all-reduce and a K/V all-gather), and
// the bands must be rows that exist on ranks that can get the latents.
//
//===----------------------------------------------------------------------===//
#include "Rules.h"

#include <numeric>
#include <optional>

namespace ditc::rules {

namespace {

const Placement *patchParallelVae(const LegalityContext &ctx) {
  const Placement *vae = ctx.deployment.find("vae");
  if (!vae || (vae->vaeParallelSize == 1 && vae->vaeRowSplit.empty() &&
               !vae->explicitInstances))
    return nullptr;
  return vae;
}

/// Latent rows a modeled decoder's convolutions read beyond a band's edge
/// when the module holds no graph for it (hand-written modules): its 3x3
/// convolutions at the latent resolution read one row. nullopt for a class
/// without a patch-parallel decoder. With a graph, ModelFacts::vaeHaloRows
/// is measured from its convolutions instead.
std::optional<int64_t> decoderHaloRows(const std::string &vaeClass) {
  if (vaeClass == "AutoencoderKL" || vaeClass == "AutoencoderKLWan" ||
      vaeClass == "AutoencoderKLQwenImage")
    return 1;
  return std::nullopt;
}

std::string latentRowsText(const ModelFacts &m) {
  return "latent height of " + std::to_string(m.latentHeight) + " rows (" +
         std::to_string(m.height) + " px over the VAE's compression " +
         std::to_string(m.vaeSpatial) + ")";
}

} // namespace

/// vae-rows: the bands cover the latent rows exactly: vae_parallel_size
/// divides them, or row_split states one count per band summing to them.
void checkVaeRows(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement *vae = patchParallelVae(ctx);
  if (!vae)
    return;
  const ModelFacts &m = ctx.model;
  int64_t n = vae->vaeParallelSize;
  const std::vector<int64_t> &split = vae->vaeRowSplit;
  if (!split.empty()) {
    if (int64_t(split.size()) != n) {
      sink.report("vae-rows", Severity::Error,
                  "row_split " + rankList(split) + " states " +
                      std::to_string(split.size()) + " bands but vae_parallel_size is " +
                      std::to_string(n),
                  "vae");
      return;
    }
    int64_t sum = std::accumulate(split.begin(), split.end(), int64_t(0));
    if (sum != m.latentHeight)
      sink.report("vae-rows", Severity::Error,
                  "row_split " + rankList(split) + " covers " + std::to_string(sum) +
                      " latent rows, but the latents have a " + latentRowsText(m),
                  "vae");
    return;
  }
  if (m.latentHeight % n == 0)
    return;
  std::string message = latentRowsText(m) + " is not divisible by vae_parallel_size " +
                        std::to_string(n) + "; state the bands with row_split " +
                        rankList(vaeRowBands(m.latentHeight, n, {}));
  std::string dividing;
  int64_t found = 0;
  for (int64_t k = 2; k <= std::min<int64_t>(m.latentHeight, 64) && found < 4; ++k)
    if (m.latentHeight % k == 0)
      dividing += (found++ ? ", " : "") + std::to_string(k);
  if (found)
    message += " or pick a size that divides it (" + dividing + ")";
  sink.report("vae-rows", Severity::Error, message, "vae");
}

/// vae-halo: every band holds at least the halo its neighbours read from
/// it, so each convolution's exchange reaches only the adjacent ranks.
void checkVaeHalo(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement *vae = patchParallelVae(ctx);
  if (!vae || vae->vaeParallelSize < 2)
    return;
  const ModelFacts &m = ctx.model;
  // The decoder graph's own halo; a hand-written module whose decoder is
  // opaque takes its class's (every modeled decoder reads one latent row).
  std::optional<int64_t> halo = m.vaeHaloRows ? m.vaeHaloRows : decoderHaloRows(m.vaeClass);
  std::string haloSource = m.vaeHaloRows && !m.vaeHaloOp.empty()
                               ? m.vaeClass + "'s " + m.vaeHaloOp + " (the widest reach in latent rows)"
                               : m.vaeClass + "'s 3x3 convolutions";
  if (!halo) {
    sink.report("vae-halo", Severity::Error,
                "vae_parallel_size " + std::to_string(vae->vaeParallelSize) +
                    " splits the decode, but the VAE class '" +
                    (m.vaeClass.empty() ? std::string("(none)") : m.vaeClass) +
                    "' has no patch-parallel decoder, so its halo is unknown "
                    "(AutoencoderKL, AutoencoderKLWan and AutoencoderKLQwenImage have "
                    "one); use vae_parallel_size 1",
                "vae");
    return;
  }
  if (!vae->vaeRowSplit.empty() &&
      int64_t(vae->vaeRowSplit.size()) != vae->vaeParallelSize)
    return; // vae-rows reports it
  std::vector<int64_t> bands =
      vaeRowBands(m.latentHeight, vae->vaeParallelSize, vae->vaeRowSplit);
  for (size_t i = 0; i < bands.size(); ++i)
    if (bands[i] < *halo) {
      sink.report("vae-halo", Severity::Error,
                  "VAE band " + std::to_string(i) + " of " + rankList(bands) + " holds " +
                      std::to_string(bands[i]) + " latent rows, fewer than the " +
                      std::to_string(*halo) + "-row halo read from each neighbour by " +
                      haloSource + "; with a " +
                      latentRowsText(m) + " use at most " +
                      std::to_string(m.latentHeight / *halo) + " bands",
                  "vae");
      return;
    }
}

/// vae-ranks: the decode needs vae_parallel_size ranks, and each replica
/// gives it that many: the first ones of the replica by default, or the
/// listed ones.
void checkVaeRanks(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement *vae = patchParallelVae(ctx);
  if (!vae)
    return;
  int64_t n = vae->vaeParallelSize;
  const Placement &transformer = ctx.transformer();
  if (vae->explicitInstances) {
    for (size_t i = 0; i < vae->instances.size(); ++i) {
      int64_t given = int64_t(vae->instances[i].size());
      if (given == n)
        continue;
      sink.report("vae-ranks", Severity::Error,
                  "vae instance " + std::to_string(i) + " " + rankList(vae->instances[i]) +
                      " gives the VAE " + std::to_string(given) + " rank" +
                      (given == 1 ? "" : "s") + ", but vae_parallel_size " +
                      std::to_string(n) + " decodes on exactly " + std::to_string(n),
                  "vae");
      return;
    }
    return;
  }
  for (size_t i = 0; i < transformer.instances.size(); ++i) {
    int64_t ranks = int64_t(transformer.instances[i].size());
    if (n <= ranks)
      continue;
    sink.report("vae-ranks", Severity::Error,
                "vae_parallel_size " + std::to_string(n) + " exceeds the " +
                    std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
                    " of transformer replica " + std::to_string(i) + " " +
                    rankList(transformer.instances[i]) +
                    "; the VAE decodes on ranks of the replica whose latents it takes, "
                    "so use at most " + std::to_string(ranks),
                "vae");
    return;
  }
}

/// vae-latents: a replica's final latents are gathered on its leader and
/// scattered by rows to its decoding ranks: its own ranks, or an instance
/// wholly on ranks that run no transformer; one VAE instance per replica.
void checkVaeLatents(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Placement *vae = patchParallelVae(ctx);
  if (!vae || !vae->explicitInstances)
    return;
  const Placement &transformer = ctx.transformer();
  if (vae->instances.size() != transformer.instances.size()) {
    sink.report("vae-latents", Severity::Error,
                "vae lists " + std::to_string(vae->instances.size()) +
                    " instances but the transformer has " +
                    std::to_string(transformer.instances.size()) +
                    " replicas; each replica's latents are decoded by the vae instance "
                    "of the same index",
                "vae");
    return;
  }
  TransformerRanks placed(ctx.deployment);
  for (size_t i = 0; i < vae->instances.size(); ++i) {
    const std::vector<int64_t> &replica = transformer.instances[i];
    // On ranks of its own (a disaggregated VAE), the leader sends the
    // latents to the instance over the replica's transfer group.
    if (placed.onRanksOfItsOwn(vae->instances[i]))
      continue;
    for (int64_t rank : vae->instances[i]) {
      if (std::count(replica.begin(), replica.end(), rank))
        continue;
      sink.report("vae-latents", Severity::Error,
                  "vae instance " + std::to_string(i) + " " + rankList(vae->instances[i]) +
                      " names rank " + std::to_string(rank) +
                      ", which is not a rank of transformer replica " + std::to_string(i) +
                      " " + rankList(replica) +
                      ": the replica's final latents are gathered on its lowest rank and "
                      "sent to its own ranks, or to an instance wholly on ranks of its own",
                  "vae");
      return;
    }
  }
}

} // namespace ditc::rules
