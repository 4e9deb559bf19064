//===- Legality.cpp - rule table, context, driver and suggestions ---------===//
#include "Rules.h"

#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"
#include "ditc/Analysis/AxisConversion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <set>
#include <tuple>

using namespace mlir;

namespace ditc {

const char *severityName(Severity severity) {
  switch (severity) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  }
  return "?";
}

static bool anyError(const std::vector<RuleDiagnostic> &diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const RuleDiagnostic &d) {
                       return d.severity == Severity::Error;
                     });
}

bool DiagnosticSink::hasErrors() const { return anyError(diagnostics); }

bool LegalityReport::legal() const { return !anyError(diagnostics); }

const std::vector<LegalityRule> &legalityRules() {
  using namespace rules;
  static const std::vector<LegalityRule> table = {
      {"world-size", "num_gpus = dp x cfg x pp x tp x ulysses x ring x kv_gather "
                     "(+ ranks of a component's own)",
       checkWorldSize, true},
      {"instance-size", "a replica's ranks = its component's non-dp degrees",
       checkInstanceSize, false},
      {"component-ranks", "a rank that runs no transformer serves one replica",
       checkComponentRanks, false},
      {"tp-heads", "tp divides the heads and every width TP splits",
       checkTPHeads, true},
      {"ulysses-heads", "ulysses divides the TP-local heads",
       checkUlyssesHeads, true},
      {"seq-divisibility", "ulysses x ring x kv_gather divides the sequence",
       checkSeqDivisibility, true},
      {"ring-backend", "ring needs a backend with ring rotation",
       checkRingBackend, true},
      {"ring-varlen", "varlen-packed text under ring stays local (note)",
       checkRingVarlen, true},
      {"ring-stacked-qkv", "ring cannot rotate stacked-QKV attention",
       checkRingStackedQKV, true},
      {"ring-kvgather-exclusive", "ring and kv_gather fill one slot",
       checkRingKVGatherExclusive, true},
      {"cfg-branches", "cfg needs true CFG and divides the branches",
       checkCFGBranches, true},
      {"pp-partition", "a pipeline split that covers every block",
       checkPPPartition, true},
      {"paged-kv-cfg", "no paged KV cache with cfg > 1", checkPagedKVCFG, true},
      {"shard-dim", "shard_dim signals only into TP-only instances",
       checkShardDim, true},
      {"rank-order", "a replica's ranks are ascending", checkRankOrder, false},
      {"group-conflict", "a rank has one group per axis per component",
       checkGroupConflict, false},
      {"cross-node", "TP and Ulysses stay on one node (warning)",
       checkCrossNode, false},
      {"vae-rows", "vae_parallel_size divides the latent rows, or row_split "
                   "states the bands",
       checkVaeRows, true},
      {"vae-halo", "every VAE band holds at least the decoder's halo rows",
       checkVaeHalo, true},
      {"vae-ranks", "vae_parallel_size fits the ranks given to the VAE",
       checkVaeRanks, true},
      {"vae-latents", "the VAE decodes on ranks of the replica whose latents "
                      "it takes, or on ranks of its own",
       checkVaeLatents, false},
      {"text-encoder-axes", "the text encoders split over tp only",
       checkTextEncoderAxes, true},
      {"text-encoder-heads", "text_encoder tp divides every encoder's heads and "
                             "split widths",
       checkTextEncoderHeads, true},
      {"text-encoder-ranks", "each replica's prompts are encoded on its own ranks, "
                             "or on ranks of the encoder's own",
       checkTextEncoderRanks, true},
      {"expert-offload", "expert offload needs a model with two experts",
       checkExpertOffload, true},
  };
  return table;
}

std::string resolvedBackend(const Placement &placement) {
  return placement.backend.value_or(kDefaultAttentionBackend);
}

//===----------------------------------------------------------------------===//
// Deployment <-> #dit.deployment
//===----------------------------------------------------------------------===//

static dit::MeshAttr meshAttr(MLIRContext &context, const Degrees &d) {
  return dit::MeshAttr::get(&context, d[Axis::DP], d[Axis::CFG], d[Axis::PP],
                            d[Axis::Ring], d[Axis::KVGather], d[Axis::Ulysses],
                            d[Axis::TP]);
}

static Degrees degreesOf(dit::MeshAttr mesh) {
  Degrees d;
  d[Axis::DP] = mesh.getDp();
  d[Axis::CFG] = mesh.getCfg();
  d[Axis::PP] = mesh.getPp();
  d[Axis::Ring] = mesh.getRing();
  d[Axis::KVGather] = mesh.getKvGather();
  d[Axis::Ulysses] = mesh.getUlysses();
  d[Axis::TP] = mesh.getTp();
  return d;
}

Attribute deploymentToAttribute(MLIRContext &context,
                                const Deployment &deployment) {
  Builder b(&context);
  SmallVector<Attribute> placements, signals;
  for (const Placement &p : deployment.placements) {
    SmallVector<Attribute> instances;
    for (const std::vector<int64_t> &ranks : p.instances)
      instances.push_back(b.getDenseI64ArrayAttr(ranks));
    placements.push_back(dit::PlacementAttr::get(
        &context, p.component, meshAttr(context, p.degrees),
        p.backend ? b.getStringAttr(*p.backend) : StringAttr(),
        p.pagedKVCache
            ? dit::KVCacheAttr::get(&context, dit::KVCache::Paged)
            : dit::KVCacheAttr(),
        p.ppPartition.empty() ? DenseI64ArrayAttr()
                              : b.getDenseI64ArrayAttr(p.ppPartition),
        b.getArrayAttr(instances),
        p.component == "vae" && p.vaeParallelSize != 1
            ? b.getI64IntegerAttr(p.vaeParallelSize)
            : IntegerAttr(),
        p.vaeRowSplit.empty() ? DenseI64ArrayAttr()
                              : b.getDenseI64ArrayAttr(p.vaeRowSplit),
        p.offload ? b.getBoolAttr(true) : BoolAttr()));
  }
  for (const Signal &s : deployment.signals)
    signals.push_back(dit::SignalAttr::get(
        &context, s.from, s.to,
        s.shardDim ? b.getI64IntegerAttr(*s.shardDim) : IntegerAttr()));
  auto optionalInt = [&](const std::optional<int64_t> &value) {
    return value ? b.getI64IntegerAttr(*value) : IntegerAttr();
  };
  SmallVector<dit::MeshAxis> order;
  for (Axis axis : deployment.meshOrder)
    order.push_back(toMeshAxis(axis));
  return dit::DeploymentAttr::get(
      &context, deployment.numGpus, optionalInt(deployment.nnodes),
      optionalInt(deployment.gpusPerNode), b.getArrayAttr(placements),
      b.getArrayAttr(signals), order);
}

Deployment deploymentFromModule(ModuleOp module) {
  Deployment deployment;
  if (auto attr = module->getAttrOfType<dit::DeploymentAttr>(
          dit::DitDialect::kDeploymentAttrName)) {
    deployment.numGpus = attr.getNumGpus();
    if (auto n = attr.getNnodes())
      deployment.nnodes = n.getInt();
    if (auto g = attr.getGpusPerNode())
      deployment.gpusPerNode = g.getInt();
    // The attribute's verifier checked a permutation of the seven axes.
    for (dit::MeshAxis axis : attr.getMeshOrder())
      deployment.meshOrder.push_back(toAxis(axis));
    for (Attribute a : attr.getPlacements()) {
      auto p = cast<dit::PlacementAttr>(a);
      Placement placement;
      placement.component = p.getComponent().str();
      placement.degrees = degreesOf(p.getMesh());
      if (auto backend = p.getBackend())
        placement.backend = backend.str();
      placement.pagedKVCache =
          p.getKvCache() && p.getKvCache().getValue() == dit::KVCache::Paged;
      if (auto partition = p.getPpPartition())
        placement.ppPartition.assign(partition.asArrayRef().begin(),
                                     partition.asArrayRef().end());
      if (auto instances = p.getInstances(); instances && !instances.empty()) {
        for (Attribute ranks : instances) {
          auto list = cast<DenseI64ArrayAttr>(ranks).asArrayRef();
          placement.instances.emplace_back(list.begin(), list.end());
        }
        placement.explicitInstances = true;
      } else if (placement.component != "vae" &&
                 placement.component != "text_encoder") {
        // The vae's and the text encoders' default ranks come from the
        // transformer's replicas (vaeDecodeGroups, textEncoderGroups), not
        // from a mesh of their own.
        placement.instances =
            defaultInstances(placement.degrees, deployment.meshOrder);
      }
      placement.offload = p.getOffload() && p.getOffload().getValue();
      if (auto size = p.getVaeParallelSize())
        placement.vaeParallelSize = size.getInt();
      if (auto split = p.getRowSplit())
        placement.vaeRowSplit.assign(split.asArrayRef().begin(),
                                     split.asArrayRef().end());
      deployment.placements.push_back(std::move(placement));
    }
    if (auto signals = attr.getSignals())
      for (Attribute a : signals) {
        auto s = cast<dit::SignalAttr>(a);
        Signal signal{s.getFrom().str(), s.getTo().str(), std::nullopt};
        if (auto dim = s.getShardDim())
          signal.shardDim = dim.getInt();
        deployment.signals.push_back(signal);
      }
  }
  if (!deployment.find("transformer")) {
    bool declared = bool(module->getAttr(dit::DitDialect::kDeploymentAttrName));
    Placement transformer;
    transformer.component = "transformer";
    if (auto mesh = module->getAttrOfType<dit::MeshAttr>(
            dit::DitDialect::kMeshAttrName))
      transformer.degrees = degreesOf(mesh);
    transformer.instances =
        defaultInstances(transformer.degrees, deployment.meshOrder);
    // A declared deployment keeps its world size (world-size then reports
    // the unplaced transformer); a bare mesh defines it.
    if (!declared)
      deployment.numGpus = transformer.degrees.worldSize();
    deployment.placements.push_back(std::move(transformer));
  }
  return deployment;
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

FailureOr<LegalityContext> buildLegalityContext(ModuleOp module,
                                                Deployment deployment) {
  auto model = module->getAttrOfType<dit::ModelAttr>(
      dit::DitDialect::kModelAttrName);
  auto workload = module->getAttrOfType<dit::WorkloadAttr>(
      dit::DitDialect::kWorkloadAttrName);
  if (!model || !workload)
    return module.emitError()
           << "legality needs the module's 'dit.model' and 'dit.workload' "
              "attributes (ditc import sets both)";
  LegalityContext ctx;
  ctx.module = module;
  ctx.deployment = std::move(deployment);
  ModelFacts &m = ctx.model;
  m.family = model.getFamily().str();
  m.className = model.getClassName().str();
  m.blocks = model.getNumBlocks();
  m.numHeads = model.getNumHeads();
  m.headDim = model.getHeadDim();
  m.hiddenSize = model.getHiddenSize();
  m.ffnSize = model.getFfnSize();
  m.textHiddenSize = model.getTextHiddenSize();
  m.dualStream = model.getDoubleBlocks() > 0;
  m.seqAlign = model.getSeqAlign();
  m.experts = model.getExperts();
  m.vaeSpatial = model.getVaeSpatial();
  auto patch = model.getPatch().asArrayRef();
  m.patch = {patch[0], patch[1], patch[2]};
  m.imageTokens = workload.getImageTokens();
  m.textTokens = workload.getTextTokens();
  m.branches = workload.getBranches();
  m.guidanceScale = workload.getGuidanceScale().getValueAsDouble();
  m.height = workload.getHeight();
  m.width = workload.getWidth();
  m.frames = workload.getFrames();
  m.latentFrames = workload.getLatentFrames();
  m.latentHeight = workload.getLatentHeight();
  module.walk([&](dit::ComponentOp op) {
    if (op.getKind() != dit::ComponentKind::VaeDecoder)
      return;
    m.vaeClass = op.getClassName().str();
    if (op.getBody().empty() || op.getInputs().empty())
      return;
    // The halo from the graph: a convolution of reach k/2 on rows
    // upsampled s times reads ceil(k/2 / s) latent rows of a neighbour.
    auto latents = cast<RankedTensorType>(op.getInputs()[0].getType());
    int64_t latentRows = latents.getDimSize(latents.getRank() - 2);
    int64_t halo = 0;
    op.getBody().walk([&](dit::ConvOp conv) {
      int64_t scale =
          std::max<int64_t>(1, dit::rowsPerLatentRow(conv.getInput().getType(), latentRows));
      int64_t rows = (conv.getHaloRows() + scale - 1) / scale;
      if (rows > halo) {
        halo = rows;
        m.vaeHaloOp = conv.getWeight().str();
      }
    });
    m.vaeHaloRows = halo;
  });
  module.walk([&](dit::ComponentOp op) {
    if (op.getKind() != dit::ComponentKind::TextEncoder)
      return;
    ModelFacts::TextEncoderFacts facts;
    facts.className = op.getClassName().str();
    facts.hasGraph = !op.getBody().empty();
    op.getBody().walk([&](dit::AttentionOp attention) {
      facts.heads = attention.getNumHeads();
      return WalkResult::interrupt();
    });
    op.getBody().walk([&](dit::LinearOp linear) {
      if (dit::textEncoderTPRole(linear) == "column")
        facts.splitWidths.push_back(
            {linear.getWeight().str(), dit::lastDim(linear.getResult())});
    });
    m.textEncoders.push_back(std::move(facts));
  });

  // Attention ops of the denoiser; a hand-written module without component
  // functions contributes all of its attention ops.
  auto isDenoiser = [](func::FuncOp fn) {
    return !dit::getComponent(fn) || dit::isTransformerFunction(fn);
  };
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!isDenoiser(fn))
      continue;
    fn.walk([&](dit::AttentionOp op) {
      AttentionFacts facts;
      facts.op = op;
      facts.numHeads = op.getNumHeads();
      facts.shardOverSp = op.getShardOverSp();
      facts.varlen = op.getVarlen();
      facts.stackedQKV = op.getQkvLayout() == dit::QKVLayout::Stacked;
      facts.pagedKVCache = op.getKvCache() == dit::KVCache::Paged;
      if (auto backend = op.getBackend())
        facts.backend = backend->str();
      ctx.attentions.push_back(facts);
    });
  }
  return ctx;
}

//===----------------------------------------------------------------------===//
// Driver and suggestions
//===----------------------------------------------------------------------===//

namespace {

/// The most steps the walk over the factorizations takes. The bounds below
/// keep the bundled models far under it; the cap stops made-up models whose
/// heads, blocks and tokens bound little (thousands of each), so that no
/// input makes a search walk for more than a fraction of a second.
constexpr int64_t kMaxWalkSteps = 20000000;

/// Which values each axis can take in a legal configuration of `n` ranks:
/// divisors of `n` that pass the conditions the degree rules put on that
/// axis alone. Every bound here is one a rule enforces with an error, so
/// pruning by it never drops a candidate the rules would accept:
///   tp-heads            tp divides the heads (tp <= heads);
///   cfg-branches        cfg divides a true-CFG model's branches;
///   pp-partition        pp <= blocks;
///   seq-divisibility    ulysses x ring x kv_gather divides the image
///                       tokens (so each of them does);
///   ring-kvgather-exclusive, ulysses-heads: checked as the walk goes.
/// dp is whatever remains.
struct AxisBounds {
  std::vector<int64_t> tp, cfg, pp, seq;
};

AxisBounds axisBounds(const LegalityContext &ctx,
                      const std::vector<int64_t> &divisors) {
  const ModelFacts &m = ctx.model;
  AxisBounds bounds;
  for (int64_t f : divisors) {
    if (f < 2 || m.numHeads % f == 0)
      bounds.tp.push_back(f);
    // As cfg-branches judges: branches that run (a scale of at most 1 runs
    // one), which f divides.
    if (f < 2 || (m.branches >= 2 && m.guidanceScale > 1.0 && m.branches % f == 0))
      bounds.cfg.push_back(f);
    if (f <= m.blocks)
      bounds.pp.push_back(f);
    if (f < 2 || m.imageTokens % f == 0)
      bounds.seq.push_back(f);
  }
  return bounds;
}

/// ulysses-heads' condition for one (tp, ulysses) pair, as the rule reads
/// it: every attention that splits its heads over SP (and that tp divides)
/// keeps a TP-local head count ulysses divides.
bool ulyssesFitsHeads(const LegalityContext &ctx, int64_t tp, int64_t ulysses) {
  if (ulysses < 2)
    return true;
  auto fits = [&](int64_t heads, bool shardOverSp) {
    return !shardOverSp || heads % tp != 0 || (heads / tp) % ulysses == 0;
  };
  if (ctx.attentions.empty())
    return fits(ctx.model.numHeads, true);
  for (const AttentionFacts &attention : ctx.attentions)
    if (!fits(attention.numHeads, attention.shardOverSp))
      return false;
  return true;
}

/// Every way to write `n` as a product of the seven degrees within
/// `bounds`, ring and kv_gather never both above 1, until `visit` returns
/// false or the step budget runs out.
class DegreeWalk {
public:
  DegreeWalk(const LegalityContext &ctx, const AxisBounds &bounds,
             std::function<bool(const Degrees &)> visit)
      : ctx(ctx), bounds(bounds), visit(std::move(visit)) {}

  void run(int64_t n) { walk(n, 0, Degrees()); }
  bool cappedByStepBudget() const { return steps > kMaxWalkSteps; }

private:
  // Axes in the order the walk fixes them: the most constrained first, dp
  // (the remainder) last.
  static constexpr Axis kOrder[] = {Axis::TP,   Axis::Ulysses,
                                    Axis::Ring, Axis::KVGather,
                                    Axis::CFG,  Axis::PP};

  const std::vector<int64_t> &valuesOf(Axis axis) const {
    switch (axis) {
    case Axis::TP: return bounds.tp;
    case Axis::CFG: return bounds.cfg;
    case Axis::PP: return bounds.pp;
    default: return bounds.seq;
    }
  }

  bool admissible(const Degrees &d, Axis axis) const {
    switch (axis) {
    case Axis::Ulysses:
      return ulyssesFitsHeads(ctx, d[Axis::TP], d[Axis::Ulysses]);
    case Axis::Ring:
    case Axis::KVGather:
      return !(d[Axis::Ring] > 1 && d[Axis::KVGather] > 1) &&
             (d.sequenceShards() < 2 ||
              ctx.model.imageTokens % d.sequenceShards() == 0);
    default:
      return true;
    }
  }

  void walk(int64_t n, size_t level, Degrees current) {
    if (stopped)
      return;
    if (level == std::size(kOrder)) {
      current[Axis::DP] = n;
      if (!visit(current))
        stopped = true;
      return;
    }
    Axis axis = kOrder[level];
    for (int64_t f : valuesOf(axis)) {
      if (++steps > kMaxWalkSteps) {
        stopped = true;
        return;
      }
      if (f > n)
        break;
      if (n % f)
        continue;
      current[axis] = f;
      if (!admissible(current, axis))
        continue;
      walk(n / f, level + 1, current);
      if (stopped)
        return;
    }
  }

  const LegalityContext &ctx;
  const AxisBounds &bounds;
  std::function<bool(const Degrees &)> visit;
  int64_t steps = 0;
  bool stopped = false;
};

} // namespace

LegalityContext compactLegalityContext(const LegalityContext &ctx) {
  LegalityContext scratch = ctx;
  for (Placement &placement : scratch.deployment.placements)
    placement.instances.clear();
  scratch.deployment.find("transformer")->ppPartition.clear();
  std::set<std::tuple<int64_t, bool, bool, bool, bool,
                      std::optional<std::string>>>
      attentionKinds;
  llvm::erase_if(scratch.attentions, [&](const AttentionFacts &a) {
    return !attentionKinds
                .emplace(a.numHeads, a.shardOverSp, a.varlen, a.stackedQKV,
                         a.pagedKVCache, a.backend)
                .second;
  });
  std::set<std::tuple<std::string, std::string, bool>> signalKinds;
  llvm::erase_if(scratch.deployment.signals, [&](const Signal &s) {
    return !signalKinds.emplace(s.from, s.to, s.shardDim.has_value()).second;
  });
  return scratch;
}

bool forEachDegreeCandidate(const LegalityContext &ctx, int64_t n,
                            const std::function<bool(const Degrees &)> &visit) {
  std::vector<int64_t> divisors;
  for (int64_t f = 1; f * f <= n; ++f)
    if (n % f == 0) {
      divisors.push_back(f);
      if (f != n / f)
        divisors.push_back(n / f);
    }
  std::sort(divisors.begin(), divisors.end());
  AxisBounds bounds = axisBounds(ctx, divisors);
  DegreeWalk walk(ctx, bounds, visit);
  walk.run(n);
  return !walk.cappedByStepBudget();
}

LegalityReport checkLegality(const LegalityContext &ctx) {
  DiagnosticSink sink;
  for (const LegalityRule &rule : legalityRules())
    rule.check(ctx, sink);
  LegalityReport report;
  report.diagnostics = std::move(sink.diagnostics);
  const Placement &transformer = ctx.transformer();
  ResolvedConfig &config = report.config;
  config.numGpus = ctx.deployment.numGpus;
  config.degrees = transformer.degrees;
  config.ppPartition =
      transformer.ppPartition.empty()
          ? defaultPipelinePartition(ctx.model.blocks,
                                     transformer.degrees[Axis::PP])
          : transformer.ppPartition;
  config.attentionBackend = resolvedBackend(transformer);
  config.sequenceLength = ctx.model.imageTokens;
  config.textLength = ctx.model.textTokens;
  return report;
}

} // namespace ditc
