//===- Search.h - the fastest legal configuration -----------------*- C++ -*-===//
//
// Enumerates every configuration of a model on N GPUs that checkLegality()
// accepts (the seven degrees, and for multi-node clusters the mesh orders
// that change which axes cross nodes), prices each with the cost model, drops
// those that do not fit in memory, and ranks the rest. `ditc search` prints
// the ranking; `ditc check` takes its suggestions from it.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_SEARCH_H
#define DITC_COSTMODEL_SEARCH_H

#include "ditc/Analysis/Legality.h"
#include "ditc/CostModel/CostModel.h"
#include "ditc/CostModel/TextEncodeCost.h"
#include "ditc/CostModel/VaeDecodeCost.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc {

/// What the ranking minimises or maximises.
/// - EndToEnd: one request's whole pipeline call (encode + denoising loop +
///   decode), what a user waits for.
/// - Latency: the denoising loop alone (steps x (step + the host work
///   between steps)), what per-step benchmarks measure and what the
///   transformer's axes change.
/// - Throughput: requests per second of the cluster, DP replicas included.
enum class Objective { EndToEnd, Latency, Throughput };

struct SearchOptions {
  int64_t numGpus = 1;
  int64_t gpusPerNode = 8;
  HardwareProfile hardware;
  Objective objective = Objective::EndToEnd;
  /// Denoising steps per request (for requests per second).
  int64_t steps = 1;
  /// Transformer calls per step before cfg splits them.
  int64_t branchCalls = 1;
  /// The most (tp, ulysses, ring, kv_gather) shapes the search partitions.
  /// Each costs one run of the partition passes over the whole model, so
  /// the bound keeps a search over a huge cluster or a made-up model with
  /// thousands of blocks short. When more shapes are legal, the ones whose
  /// candidates lie nearest `anchor` (or come first in the walk) are priced
  /// and the result is marked not exhaustive.
  size_t maxShapes = 1024;
  std::optional<Degrees> anchor;
  /// Try the mesh orders that change which axes cross nodes (else only the
  /// default order).
  bool exploreMeshOrders = true;
  /// How many of the best configurations to confirm with every rule of
  /// checkLegality() on their rank lists (default: all up to 4096 GPUs,
  /// else the best 64).
  std::optional<size_t> confirmTop;
  /// The snapshot's vae/config.json and the latents one request decodes:
  /// each configuration's decode is priced with the best legal
  /// vae_parallel_size, and the end-to-end objective counts it. Empty: the decode is not priced.
  std::string vaeConfig;
  VaeDecodeShape vaeShape;
  /// Price the prompt encode from the module's @text_encoder graphs (none
  /// in a bare transformer config): each configuration gets the fastest
  /// text_encoder tp_size that the text-encoder rules allow inside a
  /// replica, its encoders resident when they fit beside the transformer
  /// and offloaded (--text-encoder-offload) when only that fits; the
  /// end-to-end objective counts it.
  bool priceTextEncoders = true;
};

/// The prompt encode a configuration gets: its text_encoder tp_size and
/// offload, the seconds of one request's encode (every guidance branch's
/// prompt, and the broadcast to the replica), and per rank of the encoding
/// group the encoders' parameters and the peak while they run.
struct TextEncodeChoice {
  bool priced = false;
  int64_t tpSize = 1;
  bool offload = false;
  double seconds = 0, paramBytes = 0, peakMemoryBytes = 0;
  /// What the encoders hold through the steps and the decode.
  double residentBytes() const { return offload ? 0 : paramBytes; }
};

/// The decode a configuration gets: its vae_parallel_size (the fastest that
/// the vae rules allow and that fits in memory beside the transformer's
/// parameters), its time and the per-rank memory while it runs.
struct VaeDecodeChoice {
  bool priced = false;
  int64_t parallelSize = 1;
  double seconds = 0, peakMemoryBytes = 0;
};

struct RankedConfiguration {
  Configuration config;
  StepEstimate estimate;
  double requestsPerSecond = 0;
  /// Against one GPU: the ratio of the objective's time (end to end, or
  /// the denoising loop) or of the request rate (throughput), and that
  /// divided by the GPUs used.
  double speedup = 0, parallelEfficiency = 0;
  TextEncodeChoice encode;
  VaeDecodeChoice decode;
  /// With --expert-offload (config.expertOffload): one request's two expert
  /// swaps over the host link.
  double expertSwapSeconds = 0;
  /// steps x (step + the profile's host work between steps) + the swaps.
  double loopSeconds = 0;
  /// The encode + the loop + the decode.
  double endToEndSeconds = 0;
};

struct SearchResult {
  StepEstimate singleGpu;
  bool singleGpuFits = true;
  TextEncodeChoice singleGpuEncode;
  VaeDecodeChoice singleGpuDecode;
  double singleGpuLoopSeconds = 0, singleGpuEndToEndSeconds = 0;
  bool singleGpuExpertOffload = false;
  /// Legal configurations that fit, best first.
  std::vector<RankedConfiguration> ranked;
  int64_t candidates = 0, legal = 0, tooLarge = 0;
  /// Candidates each rule rejected (a candidate counts once per rule).
  std::map<std::string, int64_t> rejectedByRule;
  /// False when the walk's step cap or maxShapes left candidates unpriced.
  bool exhaustive = true;
  /// Distinct (tp, ulysses, ring, kv_gather) shapes among the legal
  /// candidates, and how many of them were partitioned and priced.
  int64_t shapes = 0, shapesPriced = 0;
};

/// Searches `imported` (an unpartitioned module of the model and workload)
/// whose legality context is `context` (its deployment's transformer
/// placement gives the attention backend).
mlir::FailureOr<SearchResult> searchConfigurations(mlir::ModuleOp imported,
                                                   const LegalityContext &context,
                                                   const SearchOptions &options);

/// Up to three legal configurations with the deployment's GPU count,
/// fastest first by the cost model on `hardware`, for `ditc check` to
/// suggest when a configuration is illegal. A true-CFG model is offered CFG
/// parallelism when it is what pays. The search partitions at most a few
/// sharding shapes (those nearest the requested degrees, at most 2048 /
/// blocks and 32), keeps the default mesh order and confirms only the three
/// it returns against every rule, so a check stays well under a second for
/// any world size and any model. With `vaeConfig`, the decode of
/// `vaeShape` is priced as `ditc search` prices it; the encode is priced
/// from the module's encoder graphs. Each suggestion comes with the
/// search's text encoder and VAE choices.
std::vector<std::pair<Degrees, SuggestedComponents>>
suggestConfigurations(mlir::ModuleOp imported, const LegalityContext &context,
                      const HardwareProfile &hardware, int64_t steps, int64_t branchCalls,
                      const std::string &vaeConfig = "", const VaeDecodeShape &vaeShape = {});

/// The fastest decode for a replica of `replicaRanks` ranks whose
/// transformer holds `residentBytes` per rank, on `options.hardware`:
/// nullopt when no vae_parallel_size fits in memory; not priced when the
/// options carry no VAE or ditc cannot decode its class.
std::optional<VaeDecodeChoice> chooseVaeDecode(const SearchOptions &options,
                                               int64_t replicaRanks, double residentBytes);

/// Whether `a` ranks before `b` under `objective`.
bool ranksBefore(const RankedConfiguration &a, const RankedConfiguration &b,
                 Objective objective);

/// The configuration `context`'s deployment asks for, as check prices it:
/// the transformer's degrees, the deployment's mesh order (the default
/// when it gives none), its ranks per node (the whole world when it does
/// not say), and `branchCalls` calls per step.
Configuration requestedConfiguration(const LegalityContext &context, int64_t branchCalls);

/// The options of a search near `context`'s transformer degrees with its
/// GPU count, as check's suggestions and advice notes run it: anchored at
/// those degrees, partitioning at most 2048 / blocks shapes (1 to 32), on
/// `gpusPerNode` ranks per node (the whole world when that does not divide
/// it).
SearchOptions nearbySearchOptions(const LegalityContext &context,
                                  const HardwareProfile &hardware, int64_t steps,
                                  int64_t branchCalls, int64_t gpusPerNode);

/// The component placements `c` was priced with.
SuggestedComponents suggestedComponents(const RankedConfiguration &c);

/// "ulysses 4 x tp 2": the axes above 1, or "one GPU".
std::string shortDegrees(const Degrees &degrees);

/// One line on why `winner` beats `runnerUp`: the terms that differ most.
std::string explainWin(const RankedConfiguration &winner,
                       const RankedConfiguration &runnerUp);

} // namespace ditc

#endif // DITC_COSTMODEL_SEARCH_H
