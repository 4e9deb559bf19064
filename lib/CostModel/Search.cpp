//===- Search.cpp - enumerate, judge, price and rank configurations -------===//
#include "ditc/CostModel/Search.h"
#include "ditc/CostModel/WorkExtraction.h"

#include "ditc/Analysis/MeshLayout.h"

#include <algorithm>
#include <limits>
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

/// Runs the rules on `scratch` with the candidate laid out in `order` (only
/// the degree rules, or every rule of checkLegality()); returns the ids of
/// the rules that reported an error.
std::vector<std::string> failingRules(LegalityContext &scratch,
                                      const Degrees &degrees,
                                      const std::vector<Axis> &order,
                                      const SearchOptions &options,
                                      bool degreeRulesOnly) {
  Deployment &deployment = scratch.deployment;
  Placement &transformer = *deployment.find("transformer");
  transformer.degrees = degrees;
  transformer.ppPartition.clear();
  // The degree rules read no rank lists; building them costs a list of
  // every rank per candidate.
  if (degreeRulesOnly)
    transformer.instances.clear();
  else
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
    if (rule.degreeRule || !degreeRulesOnly)
      rule.check(ctx, quiet);
  std::vector<std::string> failed;
  for (const RuleDiagnostic &d : quiet.diagnostics)
    if (d.severity == Severity::Error &&
        std::find(failed.begin(), failed.end(), d.rule) == failed.end())
      failed.push_back(d.rule);
  return failed;
}

/// How far `a` is from `b`: the sum over axes of |log2(a / b)|.
double degreeDistance(const Degrees &a, const Degrees &b) {
  double sum = 0;
  for (Axis axis : kAllAxes)
    sum += std::fabs(std::log2(double(a[axis]) / double(b[axis])));
  return sum;
}

/// Whether the text-encoder rules let the encoders split `tp` ways
/// (text-encoder-heads: tp divides every encoder's heads and the widths it
/// splits). The rule runs on `scratch` with a text_encoder placement of tp,
/// which is removed again so the candidates' own judgement never sees it.
bool textEncoderSplits(LegalityContext &scratch, int64_t tp) {
  std::vector<Placement> &placements = scratch.deployment.placements;
  std::vector<Placement> saved = placements;
  placements.erase(std::remove_if(placements.begin(), placements.end(),
                                  [](const Placement &p) { return p.component == "text_encoder"; }),
                   placements.end());
  Placement encoder;
  encoder.component = "text_encoder";
  encoder.degrees[Axis::TP] = tp;
  placements.push_back(encoder);
  DiagnosticSink quiet(/*detailed=*/false);
  const LegalityContext &ctx = scratch;
  for (const LegalityRule &rule : legalityRules())
    if (std::string(rule.id) == "text-encoder-heads")
      rule.check(ctx, quiet);
  placements = std::move(saved);
  return std::none_of(quiet.diagnostics.begin(), quiet.diagnostics.end(),
                      [](const RuleDiagnostic &d) { return d.severity == Severity::Error; });
}

/// The encoders' work per tp_size, partitioned once each.
class TextEncodePricer {
public:
  TextEncodePricer(mlir::ModuleOp imported, LegalityContext &scratch,
                   const SearchOptions &options)
      : imported(imported), scratch(scratch), options(options) {}

  /// The work at `tp`, or nullptr when the rules refuse it or the module
  /// has no encoder graph to price.
  const TextEncodeWork *work(int64_t tp) {
    auto it = works.find(tp);
    if (it != works.end())
      return it->second ? &*it->second : nullptr;
    std::optional<TextEncodeWork> found;
    if (tp == 1 || textEncoderSplits(scratch, tp)) {
      mlir::FailureOr<std::optional<TextEncodeWork>> extracted =
          partitionAndExtractTextEncoders(imported, tp);
      if (mlir::succeeded(extracted))
        found = std::move(*extracted);
    }
    std::optional<TextEncodeWork> &stored = works.emplace(tp, std::move(found)).first->second;
    return stored ? &*stored : nullptr;
  }

  /// The fastest encode for a replica of `replicaRanks` ranks whose
  /// transformer holds `transformerParams` per rank and peaks at
  /// `transformerPeak` in a step: nullopt when nothing fits; not priced
  /// when there is nothing to price.
  std::optional<TextEncodeChoice> choose(int64_t replicaRanks, double transformerParams,
                                         double transformerPeak) {
    TextEncodeChoice unpriced;
    if (!options.priceTextEncoders || !work(1))
      return unpriced;
    std::optional<TextEncodeChoice> best;
    double memory = options.hardware.memoryBytes;
    for (int64_t tp = 1; tp <= replicaRanks; ++tp) {
      const TextEncodeWork *w = work(tp);
      if (!w)
        continue;
      double seconds = textEncodeSeconds(*w, options.hardware, options.branchCalls, replicaRanks,
                                         std::min(tp, std::max<int64_t>(1, options.gpusPerNode)));
      for (bool offload : {false, true}) {
        TextEncodeChoice choice;
        choice.priced = true;
        choice.tpSize = tp;
        choice.offload = offload;
        choice.seconds = seconds;
        choice.paramBytes = w->paramBytes;
        // The encode runs beside the transformer's parameters (dit-run
        // loads both before the first request); the steps keep the
        // encoders only when they are not offloaded.
        choice.peakMemoryBytes = encodePeakBytes(*w, transformerParams);
        if (choice.peakMemoryBytes > memory || transformerPeak + choice.residentBytes() > memory)
          continue;
        // Equal times: resident before offloaded, the smaller tp first.
        if (!best || choice.seconds < best->seconds)
          best = choice;
        break;
      }
    }
    return best;
  }

private:
  mlir::ModuleOp imported;
  LegalityContext &scratch;
  const SearchOptions &options;
  std::map<int64_t, std::optional<TextEncodeWork>> works;
};

} // namespace

std::string shortDegrees(const Degrees &d) {
  std::string out;
  for (Axis axis : kAllAxes)
    if (d[axis] > 1)
      out += (out.empty() ? "" : " x ") + std::string(axisName(axis)) + " " +
             std::to_string(d[axis]);
  return out.empty() ? "one GPU" : out;
}

std::optional<VaeDecodeChoice> chooseVaeDecode(const SearchOptions &options,
                                               int64_t replicaRanks, double residentBytes) {
  VaeDecodeChoice unpriced;
  if (options.vaeConfig.empty() || !vaeDecodeWork(options.vaeConfig, options.vaeShape, 1))
    return unpriced;
  std::optional<VaeDecodeChoice> best;
  int64_t rows = options.vaeShape.latentRows;
  for (int64_t bands = 1; bands <= std::min(replicaRanks, rows); ++bands) {
    // vae-rows without a stated split, and (at least one row a band)
    // vae-halo: the choices a plain --vae-parallel-size compiles.
    if (rows % bands != 0)
      continue;
    std::optional<VaeDecodeWork> work = vaeDecodeWork(options.vaeConfig, options.vaeShape, bands);
    if (!work)
      continue;
    VaeDecodeChoice choice;
    choice.priced = true;
    choice.parallelSize = bands;
    choice.peakMemoryBytes = decodePeakBytes(*work, residentBytes);
    if (choice.peakMemoryBytes > options.hardware.memoryBytes)
      continue;
    choice.seconds = vaeDecodeSeconds(*work, options.hardware,
                                      std::min(bands, std::max<int64_t>(1, options.gpusPerNode)));
    if (!best || choice.seconds < best->seconds)
      best = choice;
  }
  return best;
}

bool ranksBefore(const RankedConfiguration &a, const RankedConfiguration &b,
                 Objective objective) {
  if (objective == Objective::Throughput &&
      a.requestsPerSecond != b.requestsPerSecond)
    return a.requestsPerSecond > b.requestsPerSecond;
  if (objective == Objective::EndToEnd && a.endToEndSeconds != b.endToEndSeconds)
    return a.endToEndSeconds < b.endToEndSeconds;
  if (objective == Objective::Latency && a.loopSeconds != b.loopSeconds)
    return a.loopSeconds < b.loopSeconds;
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
  // The terms that matter: not negligible against the gap, and at least a
  // tenth of the largest difference.
  double largest = std::fabs(terms.front().delta);
  bool first = true;
  for (const Term &t : terms) {
    double size = std::fabs(t.delta);
    if (size < 1e-3 * std::max(gap, 1e-12) || size < 0.1 * largest)
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
  TextEncodePricer encoders(imported, scratch, options);
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
  // A request takes its encode, its steps and its decode (priced once the
  // configuration is known to fit, below). Between steps the pipeline's
  // host work runs on every rank alike, so no axis shortens it.
  auto loop = [&](const StepEstimate &step) {
    return (step.stepSeconds + options.hardware.stepHostOverhead) * double(options.steps);
  };
  auto endToEnd = [&](const RankedConfiguration &c) {
    return c.encode.seconds + c.loopSeconds + c.decode.seconds;
  };
  auto requestsPerSecond = [&](const RankedConfiguration &c) {
    return double(c.config.degrees[Axis::DP]) / endToEnd(c);
  };

  // A configuration priced whole: its step, its encode and decode choices
  // (which do not depend on the mesh order: their groups are the first
  // ranks of a replica), its loop with a two-expert model's swaps under
  // --expert-offload, and its end-to-end time.
  double memory = options.hardware.memoryBytes;
  auto price = [&](const TransformerWork &work, const Configuration &config) {
    RankedConfiguration c;
    c.config = config;
    c.estimate = estimateStep(work, config, options.hardware);
    int64_t replica = config.degrees.instanceSize();
    if (std::optional<TextEncodeChoice> encode =
            encoders.choose(replica, c.estimate.paramBytes, c.estimate.peakMemoryBytes()))
      c.encode = *encode;
    else
      c.encode.peakMemoryBytes = std::numeric_limits<double>::infinity();
    if (std::optional<VaeDecodeChoice> decode =
            chooseVaeDecode(options, replica, c.estimate.paramBytes + c.encode.residentBytes()))
      c.decode = *decode;
    else
      c.decode.peakMemoryBytes = std::numeric_limits<double>::infinity();
    if (config.expertOffload && options.hardware.hostToDeviceBandwidth > 0)
      // Each request brings the second expert in at the switch and the
      // first back at the next request's start: two experts' bytes over
      // the host link, which nothing overlaps.
      c.expertSwapSeconds = 2 * c.estimate.paramBytes / options.hardware.hostToDeviceBandwidth;
    c.loopSeconds = loop(c.estimate) + c.expertSwapSeconds;
    c.endToEndSeconds = endToEnd(c);
    c.requestsPerSecond = requestsPerSecond(c);
    return c;
  };
  auto fits = [&](const RankedConfiguration &c) {
    return c.estimate.peakMemoryBytes() + c.encode.residentBytes() <= memory &&
           c.encode.peakMemoryBytes <= memory && c.decode.peakMemoryBytes <= memory;
  };
  // Both experts resident, as diffusers keeps them; offloaded only when
  // that alone fits and the profile says how fast the host link is.
  auto priceFitting = [&](const TransformerWork &work, Configuration config) {
    RankedConfiguration resident = price(work, config);
    if (fits(resident) || work.otherExpertParamBytes <= 0 ||
        options.hardware.hostToDeviceBandwidth <= 0)
      return resident;
    config.expertOffload = true;
    RankedConfiguration offloaded = price(work, config);
    return fits(offloaded) ? offloaded : resident;
  };

  // One GPU, for speedups (priced even when it would not fit).
  const TransformerWork *single = workFor(Degrees());
  if (!single)
    return mlir::failure();
  Configuration one = configurationOf(Degrees(), MeshLayout::defaultOrder());
  one.gpusPerNode = 1;
  RankedConfiguration oneGpu = priceFitting(*single, one);
  result.singleGpu = oneGpu.estimate;
  result.singleGpuFits = fits(oneGpu);
  result.singleGpuEncode = oneGpu.encode;
  result.singleGpuDecode = oneGpu.decode;
  result.singleGpuExpertOffload = oneGpu.config.expertOffload;
  result.singleGpuLoopSeconds = oneGpu.loopSeconds;
  result.singleGpuEndToEndSeconds = oneGpu.endToEndSeconds;

  // Judge every candidate first: pricing needs a partition per shape, and
  // the shapes worth partitioning are known only once the legal ones are.
  struct Legal {
    Degrees degrees;
    std::vector<std::vector<Axis>> orders;
    double distance = 0;
  };
  std::vector<Legal> legal;
  result.exhaustive = forEachDegreeCandidate(
      scratch, options.numGpus, [&](const Degrees &degrees) {
        // A degree no flag can express would print flags that do not
        // compile.
        for (Axis axis : kAllAxes)
          if (degrees[axis] > kMaxParallelDegree)
            return true;
        ++result.candidates;
        std::vector<std::vector<Axis>> orders =
            options.exploreMeshOrders
                ? distinctOrders(degrees, options.gpusPerNode)
                : std::vector<std::vector<Axis>>{MeshLayout::defaultOrder()};
        std::vector<std::string> failed =
            failingRules(scratch, degrees, orders.front(), options,
                         /*degreeRulesOnly=*/true);
        for (const std::string &rule : failed)
          ++result.rejectedByRule[rule];
        if (failed.empty())
          legal.push_back({degrees, std::move(orders),
                           options.anchor ? degreeDistance(degrees, *options.anchor) : 0});
        return true;
      });
  result.legal = int64_t(legal.size());
  // The shapes to partition: all of them, or the nearest maxShapes.
  std::map<std::array<int64_t, 4>, double> shapeDistance;
  for (const Legal &c : legal) {
    auto [it, fresh] = shapeDistance.emplace(shapeKey(c.degrees), c.distance);
    if (!fresh)
      it->second = std::min(it->second, c.distance);
  }
  std::set<std::array<int64_t, 4>> priced;
  if (shapeDistance.size() <= options.maxShapes) {
    for (auto &[key, distance] : shapeDistance)
      priced.insert(key);
  } else {
    result.exhaustive = false;
    std::vector<std::pair<double, std::array<int64_t, 4>>> nearest;
    for (auto &[key, distance] : shapeDistance)
      nearest.push_back({distance, key});
    std::stable_sort(nearest.begin(), nearest.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    for (size_t i = 0; i < options.maxShapes; ++i)
      priced.insert(nearest[i].second);
  }
  result.shapes = int64_t(shapeDistance.size());
  result.shapesPriced = int64_t(priced.size());
  for (const Legal &c : legal) {
    if (!priced.count(shapeKey(c.degrees)))
      continue;
    const TransformerWork *work = workFor(c.degrees);
    if (!work)
      return mlir::failure();
    std::optional<RankedConfiguration> best;
    for (size_t i = 0; i < c.orders.size(); ++i) {
      if (i > 0 && !failingRules(scratch, c.degrees, c.orders[i], options,
                                 /*degreeRulesOnly=*/true)
                         .empty())
        continue;
      RankedConfiguration candidate =
          priceFitting(*work, configurationOf(c.degrees, c.orders[i]));
      if (!best || ranksBefore(candidate, *best, options.objective))
        best = candidate;
    }
    if (!best)
      continue;
    if (!fits(*best)) {
      ++result.tooLarge;
      continue;
    }
    result.ranked.push_back(*best);
  }
  // The walk judged candidates by the degree rules; the rules on rank lists
  // and nodes cannot refuse the layouts the search generates, and this
  // proves it for the configurations a user will see, with every rule of
  // checkLegality() on the chosen layout. (Building every rank list of every
  // candidate of a huge cluster would cost more than all the rest.)
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [&](const RankedConfiguration &a, const RankedConfiguration &b) {
                     return ranksBefore(a, b, options.objective);
                   });
  size_t confirm = options.confirmTop
                       ? *options.confirmTop
                       : (options.numGpus <= 4096 ? result.ranked.size() : 64);
  for (size_t i = 0; i < std::min(confirm, result.ranked.size());) {
    const RankedConfiguration &c = result.ranked[i];
    std::vector<std::string> failed =
        failingRules(scratch, c.config.degrees, c.config.meshOrder, options,
                     /*degreeRulesOnly=*/false);
    if (failed.empty()) {
      ++i;
      continue;
    }
    for (const std::string &rule : failed)
      ++result.rejectedByRule[rule];
    --result.legal;
    result.ranked.erase(result.ranked.begin() + i);
  }
  double singleRate = 1.0 / result.singleGpuEndToEndSeconds;
  for (RankedConfiguration &c : result.ranked) {
    c.speedup = options.objective == Objective::Throughput
                    ? c.requestsPerSecond / singleRate
                : options.objective == Objective::Latency
                    ? result.singleGpuLoopSeconds / c.loopSeconds
                    : result.singleGpuEndToEndSeconds / c.endToEndSeconds;
    c.parallelEfficiency = c.speedup / double(c.config.degrees.worldSize());
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [&](const RankedConfiguration &a, const RankedConfiguration &b) {
                     return ranksBefore(a, b, options.objective);
                   });
  return result;
}

} // namespace ditc

namespace ditc {

SuggestedComponents suggestedComponents(const RankedConfiguration &c) {
  SuggestedComponents out;
  out.vaeParallelSize = c.decode.parallelSize;
  out.textEncoderTpSize = c.encode.tpSize;
  out.textEncoderOffload = c.encode.offload;
  out.expertOffload = c.config.expertOffload;
  return out;
}

Configuration requestedConfiguration(const LegalityContext &context, int64_t branchCalls) {
  Configuration config;
  config.degrees = context.transformer().degrees;
  config.meshOrder = context.deployment.meshOrder.empty() ? MeshLayout::defaultOrder()
                                                          : context.deployment.meshOrder;
  std::optional<int64_t> perNode = context.deployment.ranksPerNode();
  int64_t world = config.degrees.worldSize();
  config.gpusPerNode = perNode ? std::min(*perNode, world) : world;
  config.branchCalls = branchCalls;
  return config;
}

SearchOptions nearbySearchOptions(const LegalityContext &context,
                                  const HardwareProfile &hardware, int64_t steps,
                                  int64_t branchCalls, int64_t gpusPerNode) {
  SearchOptions options;
  options.numGpus = context.deployment.numGpus;
  options.hardware = hardware;
  options.gpusPerNode = gpusPerNode;
  if (options.gpusPerNode < 1 || options.numGpus % options.gpusPerNode != 0)
    options.gpusPerNode = options.numGpus;
  options.steps = steps;
  options.branchCalls = branchCalls;
  options.anchor = context.transformer().degrees;
  int64_t blocks = std::max<int64_t>(1, context.model.blocks);
  options.maxShapes = size_t(std::clamp<int64_t>(2048 / blocks, 1, 32));
  return options;
}

std::vector<std::pair<Degrees, SuggestedComponents>>
suggestConfigurations(mlir::ModuleOp imported, const LegalityContext &context,
                      const HardwareProfile &hardware, int64_t steps, int64_t branchCalls,
                      const std::string &vaeConfig, const VaeDecodeShape &vaeShape) {
  std::optional<int64_t> perNode = context.deployment.ranksPerNode();
  SearchOptions options = nearbySearchOptions(
      context, hardware, steps, branchCalls,
      perNode ? *perNode : std::min(hardware.gpusPerNode, context.deployment.numGpus));
  options.vaeConfig = vaeConfig;
  options.vaeShape = vaeShape;
  options.exploreMeshOrders = false;
  options.confirmTop = 3;
  mlir::FailureOr<SearchResult> found =
      searchConfigurations(imported, context, options);
  std::vector<std::pair<Degrees, SuggestedComponents>> out;
  if (mlir::failed(found))
    return out;
  for (const RankedConfiguration &c : found->ranked) {
    if (out.size() == 3)
      break;
    out.emplace_back(c.config.degrees, suggestedComponents(c));
  }
  return out;
}

} // namespace ditc
