//===- SearchTest.cpp - the search and the check's suggestions ------------===//
//
// The search judges candidates with the legality rules and ranks them by the
// cost model; the check's suggestions are its three best. These tests run
// both on bundled models imported in-process: the suggestions are legal,
// fastest first, bounded in number, and offer CFG parallelism to a
// true-CFG model; the search's work for a shape matches the plan's
// accounting of the same partitioned module.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/Legality.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/CostModel/Search.h"
#include "ditc/CostModel/WorkExtraction.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/InitAll.h"
#include "ditc/Text/EncoderConfig.h"

#include "mlir/IR/MLIRContext.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

using namespace ditc;

namespace {

struct Imported {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  LegalityContext legality;
};

/// `model` imported with its pipeline's default workload, judged with
/// `degrees` on their product of GPUs.
Imported import(const std::string &model, const Degrees &degrees) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  Imported out;
  out.context = std::make_unique<mlir::MLIRContext>(registry);
  ModelSpec spec = loadModel(std::string(DITC_TEST_MODELS_DIR) + "/" + model);
  out.module = importModel(*out.context, spec, resolveWorkload(spec, {}));
  ParallelFlags flags;
  flags.tp = degrees[Axis::TP];
  flags.ulysses = degrees[Axis::Ulysses];
  flags.ring = degrees[Axis::Ring];
  flags.kvGather = degrees[Axis::KVGather];
  flags.cfg = degrees[Axis::CFG];
  flags.pp = degrees[Axis::PP];
  flags.dp = degrees[Axis::DP];
  mlir::FailureOr<LegalityContext> legality =
      buildLegalityContext(*out.module, deploymentFromFlags(flags));
  EXPECT_TRUE(mlir::succeeded(legality));
  out.legality = std::move(*legality);
  return out;
}

Degrees degreesOf(std::initializer_list<std::pair<Axis, int64_t>> sizes) {
  Degrees d;
  for (auto [axis, size] : sizes)
    d[axis] = size;
  return d;
}

/// Whether `degrees` pass every rule on the same model and GPU count.
bool legal(const Imported &imported, const Degrees &degrees) {
  LegalityContext context = imported.legality;
  Placement &transformer = *context.deployment.find("transformer");
  transformer.degrees = degrees;
  transformer.instances = defaultInstances(degrees);
  return checkLegality(context).legal();
}

TEST(Suggestions, AreLegalFastestFirstAndOfferCFGToATrueCFGModel) {
  // sd3.5-large has 38 heads: ulysses 4 is illegal on 4 GPUs.
  Imported sd3 = import("sd3.5-large", degreesOf({{Axis::Ulysses, 4}}));
  ASSERT_FALSE(checkLegality(sd3.legality).legal());
  HardwareProfile h100 = loadHardwareProfile("h100-sxm");
  std::vector<Degrees> suggestions;
  for (const auto &[degrees, vae] : suggestConfigurations(*sd3.module, sd3.legality, h100, 28, 2))
    suggestions.push_back(degrees);
  ASSERT_EQ(suggestions.size(), 3u);
  int64_t splitBranches = 0;
  for (const Degrees &s : suggestions) {
    EXPECT_EQ(s.worldSize(), 4);
    EXPECT_TRUE(legal(sd3, s)) << s.describe();
    splitBranches += s[Axis::CFG] == 2;
  }
  // Two guidance branches: splitting them is what pays first. (A batched
  // call launches its ops once for both branches, so a configuration that
  // keeps them together may still place third.)
  EXPECT_EQ(suggestions[0][Axis::CFG], 2) << suggestions[0].describe();
  EXPECT_GE(splitBranches, 2);
  // Fastest first, by the same model the search ranks with.
  SearchOptions options;
  options.numGpus = 4;
  options.gpusPerNode = 4;
  options.hardware = h100;
  options.branchCalls = 2;
  mlir::FailureOr<SearchResult> found =
      searchConfigurations(*sd3.module, sd3.legality, options);
  ASSERT_TRUE(mlir::succeeded(found));
  ASSERT_GE(found->ranked.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(found->ranked[i].config.degrees, suggestions[i]) << i;
  for (size_t i = 1; i < found->ranked.size(); ++i)
    EXPECT_LE(found->ranked[i - 1].estimate.stepSeconds,
              found->ranked[i].estimate.stepSeconds);
}

TEST(Suggestions, ADistilledModelIsNotOfferedCFG) {
  // FLUX.1-dev runs one branch: cfg 2 is illegal, and no suggestion uses it.
  Imported flux = import("flux.1-dev", degreesOf({{Axis::CFG, 2}}));
  ASSERT_FALSE(checkLegality(flux.legality).legal());
  std::vector<Degrees> suggestions;
  for (const auto &[degrees, vae] : suggestConfigurations(
           *flux.module, flux.legality, loadHardwareProfile("h100-sxm"), 28, 1))
    suggestions.push_back(degrees);
  ASSERT_FALSE(suggestions.empty());
  for (const Degrees &s : suggestions) {
    EXPECT_EQ(s[Axis::CFG], 1) << s.describe();
    EXPECT_TRUE(legal(flux, s)) << s.describe();
  }
}

TEST(Search, CountsWhatEachRuleRejectsAndEveryCandidateOnce) {
  // tiny-wan has 2 heads: tp and ulysses of 4 are refused by the rules.
  Imported wan = import("tiny-wan", Degrees());
  SearchOptions options;
  options.numGpus = 4;
  options.gpusPerNode = 4;
  options.hardware = loadHardwareProfile("cpu-local");
  mlir::FailureOr<SearchResult> found =
      searchConfigurations(*wan.module, wan.legality, options);
  ASSERT_TRUE(mlir::succeeded(found));
  EXPECT_TRUE(found->exhaustive);
  // Every candidate is either legal or refused by at least one rule.
  int64_t refused = found->candidates - found->legal;
  int64_t counted = 0;
  for (auto &[rule, count] : found->rejectedByRule)
    counted += count;
  EXPECT_GE(counted, refused);
  EXPECT_EQ(refused == 0, found->rejectedByRule.empty());
  EXPECT_EQ(int64_t(found->ranked.size()), found->legal - found->tooLarge);
  std::set<std::array<int64_t, 7>> seen;
  for (const RankedConfiguration &c : found->ranked)
    EXPECT_TRUE(seen.insert(c.config.degrees.sizes).second)
        << c.config.degrees.describe();
}

TEST(Search, ABoundOnShapesKeepsTheNearestAndSaysSo) {
  Imported wan = import("tiny-wan", Degrees());
  SearchOptions options;
  options.numGpus = 8;
  options.gpusPerNode = 8;
  options.hardware = loadHardwareProfile("cpu-local");
  options.maxShapes = 1;
  options.anchor = degreesOf({{Axis::Ulysses, 2}});
  mlir::FailureOr<SearchResult> found =
      searchConfigurations(*wan.module, wan.legality, options);
  ASSERT_TRUE(mlir::succeeded(found));
  EXPECT_FALSE(found->exhaustive);
  EXPECT_EQ(found->shapesPriced, 1);
  EXPECT_GT(found->shapes, 1);
  // Only the anchor's own shape (ulysses 2, the rest 1 but cfg, pp, dp) is
  // priced.
  ASSERT_FALSE(found->ranked.empty());
  for (const RankedConfiguration &c : found->ranked) {
    EXPECT_EQ(c.config.degrees[Axis::Ulysses], 2);
    EXPECT_EQ(c.config.degrees[Axis::TP], 1);
    EXPECT_EQ(c.config.degrees[Axis::Ring], 1);
    EXPECT_EQ(c.config.degrees[Axis::KVGather], 1);
  }
}

} // namespace

// The search prices the all-reduces the runtime issues: a row-parallel
// linear's all-reduce once per row chunk of the plan's overlap_row_chunks
// cut (up to 4, whole GEMM tiles of 256 rows), every other collective once.
// One branch call of tiny-wan runs 32760 image rows (128 tiles: 4 chunks)
// and 512 text rows (2 tiles: 2 chunks).
TEST(WorkExtraction, RowParallelAllReducesCountTheRuntimesChunks) {
  Imported wan = import("tiny-wan", degreesOf({{Axis::TP, 2}}));
  mlir::FailureOr<TransformerWork> work =
      partitionAndExtract(*wan.module, degreesOf({{Axis::TP, 2}}));
  ASSERT_TRUE(mlir::succeeded(work));
  std::map<int64_t, int64_t> allReducesByMessages;
  std::vector<const BlockWork *> blocks{&work->prologue};
  for (const BlockWork &block : work->blocks)
    blocks.push_back(&block);
  for (const BlockWork *block : blocks)
    for (const CollectiveWork &c : block->collectives) {
      if (c.kind == CollectiveKind::AllReduce)
        ++allReducesByMessages[collectiveMessages(c)];
      else
        EXPECT_EQ(collectiveMessages(c), 1);
    }
  // The text projection's all-reduce in 2 chunks; per block the
  // self-attention output, the cross-attention output and the feed-forward's
  // second linear in 4: `ditc compile --tp-size 2` marks the same 7.
  ASSERT_EQ(work->blocks.size(), 2u);
  EXPECT_EQ(allReducesByMessages[2], 1);
  EXPECT_EQ(allReducesByMessages[4], 6);
  // Ulysses exchanges are not all-reduces: one message each.
  Imported ulysses = import("tiny-wan", degreesOf({{Axis::Ulysses, 2}}));
  work = partitionAndExtract(*ulysses.module, degreesOf({{Axis::Ulysses, 2}}));
  ASSERT_TRUE(mlir::succeeded(work));
  for (const BlockWork &block : work->blocks)
    for (const CollectiveWork &c : block.collectives)
      EXPECT_EQ(collectiveMessages(c), 1);
}

namespace {

std::string bundledVae(const std::string &model) {
  return loadModel(model).vaeConfig;
}

} // namespace

TEST(VaeDecodeCost, CountsTheFlopsTheRuntimeCounts) {
  // dit-run --decode-only printed these for the bundled configs' decoders
  // (bench/vae_decode.py, test/Vae): FLUX.1-dev's AutoencoderKL on
  // [1, 16, 1, 32, 32] latents 622.3 GFLOP and on 64 x 64 2515.0 GFLOP, its
  // own count of every convolution and attention product it ran.
  for (auto [rows, gflop] : {std::pair<int64_t, double>{32, 622.3}, {64, 2515.0}}) {
    std::optional<VaeDecodeWork> work =
        vaeDecodeWork(bundledVae("flux.1-dev"), {1, 1, rows, rows}, 1);
    ASSERT_TRUE(work);
    EXPECT_NEAR((work->convolutionFlops + work->attentionFlops) / 1e9, gflop, gflop * 2e-3)
        << rows;
  }
}

TEST(VaeDecodeCost, BandsSplitTheWorkAndTheMemoryAndExchangeHalos) {
  std::string flux = bundledVae("flux.1-dev");
  VaeDecodeShape shape{1, 1, 128, 128};
  std::optional<VaeDecodeWork> one = vaeDecodeWork(flux, shape, 1);
  std::optional<VaeDecodeWork> four = vaeDecodeWork(flux, shape, 4);
  ASSERT_TRUE(one && four);
  // The convolutions split by rows; each band's queries still see every key.
  EXPECT_NEAR(four->convolutionFlops * 4, one->convolutionFlops, one->convolutionFlops * 1e-9);
  EXPECT_GT(four->attentionFlops * 4, one->attentionFlops * 0.99);
  EXPECT_NEAR(four->peakActivationBytes * 4, one->peakActivationBytes,
              one->peakActivationBytes * 1e-9);
  EXPECT_EQ(four->paramBytes, one->paramBytes);
  EXPECT_EQ(one->haloBytes, 0);
  EXPECT_GT(four->haloBytes, 0);
  EXPECT_GT(four->reductions, 0);
  EXPECT_EQ(four->gathers, 1); // K and V in one, the band program's all_gather_kv
  HardwareProfile h100 = loadHardwareProfile("h100-sxm");
  EXPECT_LT(vaeDecodeSeconds(*four, h100, 4), vaeDecodeSeconds(*one, h100, 1));
  // Wan: frames double after each temporal upsample; a class ditc cannot
  // decode is not priced.
  std::optional<VaeDecodeWork> wan =
      vaeDecodeWork(bundledVae("wan2.1-t2v-1.3b"), {1, 21, 60, 104}, 1);
  std::optional<VaeDecodeWork> wanOneFrame =
      vaeDecodeWork(bundledVae("wan2.1-t2v-1.3b"), {1, 1, 60, 104}, 1);
  ASSERT_TRUE(wan && wanOneFrame);
  EXPECT_GT(wan->convolutionFlops, 15 * wanOneFrame->convolutionFlops);
  EXPECT_FALSE(vaeDecodeWork(bundledVae("ltx-video"), {1, 1, 16, 16}, 1));
}

TEST(VaeDecodeCost, CountsWhatTheRuntimeCountsForWan) {
  // dit-run's line for tiny-wan's AutoencoderKLWan on [1, 4, 3, 4, 4]
  // latents (test/Vae/patch-parallel.test's one-rank run): 0.400 GFLOP,
  // frame by frame with the causal cache.
  std::optional<VaeDecodeWork> work = vaeDecodeWork(bundledVae("tiny-wan"), {1, 3, 4, 4}, 1);
  ASSERT_TRUE(work);
  EXPECT_NEAR((work->convolutionFlops + work->attentionFlops) / 1e9, 0.400, 0.0005);
}

//===----------------------------------------------------------------------===//
// The prompt encode
//===----------------------------------------------------------------------===//

namespace {

/// Every text encoder of a bundled model: one rank's share of its float32
/// parameters at `tp`, as dit-run's memory check counts them (lib/Text).
double runtimeEncoderBytes(const std::string &model, int64_t tp) {
  ModelSpec spec = loadModel(model);
  double bytes = 0;
  for (const ModelSpec::TextEncoderSpec &e : spec.textEncoders)
    bytes += double(text::encoderParameterBytes(
        text::parseTextEncoderConfig(nlohmann::json::parse(e.config), e.className,
                                     e.configPath),
        tp));
  return bytes;
}

} // namespace

TEST(TextEncodeCost, ReadsTheSplitGraphsAsTheRuntimeSplitsThem) {
  // FLUX: CLIP-L (12 layers, 12 heads) and T5-XXL's encoder (24 layers, 64
  // heads), priced from @text_encoder as the partition pass splits it.
  Imported flux = import("flux.1-dev", Degrees());
  mlir::FailureOr<std::optional<TextEncodeWork>> one =
      partitionAndExtractTextEncoders(*flux.module, 1);
  mlir::FailureOr<std::optional<TextEncodeWork>> four =
      partitionAndExtractTextEncoders(*flux.module, 4);
  ASSERT_TRUE(mlir::succeeded(one) && *one);
  ASSERT_TRUE(mlir::succeeded(four) && *four);
  // Parameters: the bf16 graph's share is half the runtime's float32 share,
  // whole and split 4 ways (embeddings, norms and CLIP's pooling whole).
  EXPECT_NEAR((*one)->paramBytes * 2, runtimeEncoderBytes("flux.1-dev", 1), 1.0);
  EXPECT_NEAR((*four)->paramBytes * 2, runtimeEncoderBytes("flux.1-dev", 4), 1.0);
  EXPECT_GT((*one)->paramBytes / (1 << 30), 8.5); // T5-XXL's encoder in bf16
  // Two all-reduces per layer, none unsplit.
  EXPECT_EQ((*one)->allReduces, 0);
  EXPECT_EQ((*four)->allReduces, 2 * (12 + 24));
  // The linears' FLOPs split exactly; the attention's with the heads.
  auto gemm = [](const TextEncodeWork &w) { return w.compute.flops[size_t(OpClass::Gemm)]; };
  auto attention = [](const TextEncodeWork &w) {
    return w.compute.flops[size_t(OpClass::Attention)];
  };
  EXPECT_NEAR(gemm(**four) * 4, gemm(**one), gemm(**one) * 1e-12);
  EXPECT_NEAR(attention(**four) * 4, attention(**one), attention(**one) * 1e-12);
  // 2 x 4.7e9 parameters x 512 tokens, give or take CLIP and attention.
  EXPECT_NEAR(gemm(**one) / 1e12, 4.9, 0.3);
  // What the transformer reads: T5's 512 x 4096 states and CLIP's pooled 768.
  EXPECT_EQ((*one)->outputBytes, 2.0 * (512 * 4096 + 768));
  HardwareProfile h100 = loadHardwareProfile("h100-sxm");
  double alone = textEncodeSeconds(**one, h100, 1, 1, 1);
  EXPECT_LT(textEncodeSeconds(**four, h100, 1, 4, 4), alone);
  // A second guidance branch encodes its negative prompt in a second call.
  EXPECT_NEAR(textEncodeSeconds(**one, h100, 2, 1, 1), 2 * alone, alone * 1e-12);
  // The pass refuses a tp that does not divide the heads (12 and 64).
  EXPECT_TRUE(mlir::failed(partitionAndExtractTextEncoders(*flux.module, 5)));
}

TEST(TextEncodeCost, ModelsWithoutEncoderGraphsLeaveTheEncodeUnpriced) {
  // Qwen-Image's Qwen2.5-VL has no graph in ditc: nothing to price.
  Imported qwen = import("qwen-image", Degrees());
  mlir::FailureOr<std::optional<TextEncodeWork>> work =
      partitionAndExtractTextEncoders(*qwen.module, 1);
  ASSERT_TRUE(mlir::succeeded(work));
  EXPECT_FALSE(*work);
}

TEST(Search, EndToEndAddsTheEncodeAndOffloadsWhenOnlyThatFits) {
  // Wan 2.1 14B on one GPU: its transformer (about 26 GiB in bf16) and
  // UMT5-XXL (10.6 GiB) fit an H100 side by side; on a 40 GiB card the
  // encoder fits only offloaded.
  Imported wan = import("wan2.1-t2v-14b", Degrees());
  SearchOptions options;
  options.numGpus = 2;
  options.gpusPerNode = 2;
  options.steps = 50;
  options.branchCalls = 2;
  options.hardware = loadHardwareProfile("h100-sxm");
  mlir::FailureOr<SearchResult> roomy = searchConfigurations(*wan.module, wan.legality, options);
  ASSERT_TRUE(mlir::succeeded(roomy));
  ASSERT_TRUE(roomy->singleGpuEncode.priced);
  EXPECT_FALSE(roomy->singleGpuEncode.offload);
  EXPECT_NEAR(roomy->singleGpuEncode.paramBytes / double(1 << 30), 10.6, 0.1);
  EXPECT_NEAR(roomy->singleGpuEndToEndSeconds,
              roomy->singleGpuEncode.seconds +
                  50 * (roomy->singleGpu.stepSeconds + options.hardware.stepHostOverhead) +
                  roomy->singleGpuDecode.seconds,
              1e-9);
  ASSERT_FALSE(roomy->ranked.empty());
  for (const RankedConfiguration &c : roomy->ranked) {
    ASSERT_TRUE(c.encode.priced);
    EXPECT_NEAR(c.endToEndSeconds,
                c.encode.seconds + 50 * (c.estimate.stepSeconds + options.hardware.stepHostOverhead) +
                    c.decode.seconds,
                1e-9);
    // Two ranks per replica: the encoders split over both (64 heads).
    if (c.config.degrees.instanceSize() == 2)
      EXPECT_EQ(c.encode.tpSize, 2);
  }
  // A card with just the room the encode needs beside the transformer's
  // parameters, which is less than the steps would need with UMT5 still
  // resident: only the offloaded encoders fit.
  double encodePeak = roomy->singleGpuEncode.peakMemoryBytes;
  ASSERT_LT(encodePeak, roomy->singleGpu.peakMemoryBytes() + roomy->singleGpuEncode.paramBytes);
  ASSERT_GE(encodePeak, roomy->singleGpu.peakMemoryBytes());
  options.hardware.memoryBytes = encodePeak;
  mlir::FailureOr<SearchResult> tight = searchConfigurations(*wan.module, wan.legality, options);
  ASSERT_TRUE(mlir::succeeded(tight));
  EXPECT_TRUE(tight->singleGpuEncode.offload);
  EXPECT_TRUE(tight->singleGpuFits);
  // A little less, and the encode itself does not fit beside the
  // transformer: one GPU does not fit at all.
  options.hardware.memoryBytes = encodePeak * 0.999;
  tight = searchConfigurations(*wan.module, wan.legality, options);
  ASSERT_TRUE(mlir::succeeded(tight));
  EXPECT_FALSE(tight->singleGpuFits);
  // Without the encoders the request is faster, by the encode.
  options.hardware = loadHardwareProfile("h100-sxm");
  options.priceTextEncoders = false;
  mlir::FailureOr<SearchResult> bare = searchConfigurations(*wan.module, wan.legality, options);
  ASSERT_TRUE(mlir::succeeded(bare));
  EXPECT_FALSE(bare->singleGpuEncode.priced);
  EXPECT_NEAR(roomy->singleGpuEndToEndSeconds - bare->singleGpuEndToEndSeconds,
              roomy->singleGpuEncode.seconds, 1e-9);
}

TEST(Search, BothExpertsStayResident) {
  // Wan 2.2 A14B's two 14B experts are both on the device, as diffusers
  // keeps them: one GPU holds twice Wan 2.1 14B's transformer parameters
  // (the same architecture), and every rank of a split holds both slices.
  Imported a14b = import("wan2.2-t2v-a14b", Degrees());
  Imported wan21 = import("wan2.1-t2v-14b", Degrees());
  for (const Degrees &d : {Degrees(), degreesOf({{Axis::TP, 2}})}) {
    mlir::FailureOr<TransformerWork> two = partitionAndExtract(*a14b.module, d);
    mlir::FailureOr<TransformerWork> one = partitionAndExtract(*wan21.module, d);
    ASSERT_TRUE(mlir::succeeded(two) && mlir::succeeded(one));
    Configuration config;
    config.degrees = d;
    config.meshOrder = MeshLayout::defaultOrder();
    config.gpusPerNode = d.worldSize();
    config.branchCalls = 2;
    HardwareProfile h100 = loadHardwareProfile("h100-sxm");
    StepEstimate both = estimateStep(*two, config, h100);
    StepEstimate single = estimateStep(*one, config, h100);
    EXPECT_NEAR(both.paramBytes / single.paramBytes, 2.0, 0.01) << d.describe();
    EXPECT_GT(both.paramBytes / double(1 << 30), d.worldSize() == 1 ? 50 : 25);
    // The step's work is one expert's.
    EXPECT_NEAR(both.stepSeconds, single.stepSeconds, single.stepSeconds * 1e-9);
    // --expert-offload: one expert resident (the two are the same size).
    config.expertOffload = true;
    StepEstimate offloaded = estimateStep(*two, config, h100);
    EXPECT_NEAR(offloaded.paramBytes, single.paramBytes, single.paramBytes * 1e-9);
    EXPECT_EQ(offloaded.stepSeconds, both.stepSeconds);
  }
}
