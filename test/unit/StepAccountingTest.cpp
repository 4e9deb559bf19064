//===- StepAccountingTest.cpp - per-step figures and collective traces ----===//
//
// The step accounting (lib/Analysis/StepAccounting) and the collective
// traces (collectCollectives, lib/Transforms/Roles.cpp) against numbers
// worked out by hand: first on a small hand-written partitioned module
// where every op's figure is written down, then on tiny-wan imported and
// partitioned, against formulas in the model's dimensions.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/StepAccounting.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/InitAll.h"
#include "ditc/Transforms/Pipelines.h"
#include "ditc/Transforms/Roles.h"

#include "dit/IR/DitOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace ditc;
using namespace mlir;

namespace {

// ring 2 (grid axis 3) x tp 2 (grid axis 6). @block is one TP-split
// attention block with a ring attention; @step calls it twice and gathers
// over ring. Shapes are local; f32 is 4 bytes.
constexpr const char *kModule = R"mlir(
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x1x2x1x1x2)
  func.func @block(%x: tensor<2x8x16xf32>, %text: tensor<2x4x16xf32>) -> tensor<2x8x16xf32> {
    %q = dit.linear %x {weight = "q", bias = true, dit.tp = #dit.tp_role<column>} : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
    %k = dit.linear %text {weight = "k", bias = false, dit.tp = #dit.tp_role<column>} : tensor<2x4x16xf32> -> tensor<2x4x8xf32>
    %qn = dit.rms_norm %q {affine = true, eps = 1.0e-6 : f64, weight = "nq", dit.reduce_stats_over = #dit.axes<[tp]>} : tensor<2x8x8xf32>
    %a = dit.attention cross %qn, %k, %k {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<2x8x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
    %r = dit.attention self %qn, %qn, %qn {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [tp], rows = ring>, dit.ring_axis = 3 : i64} : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
    %o = dit.linear %a {weight = "o", bias = true, dit.tp = #dit.tp_role<row>} : tensor<2x8x8xf32> -> tensor<2x8x16xf32>
    %s = shard.all_reduce %o on @mesh grid_axes = [6] : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %y = dit.residual_add %x, %s : tensor<2x8x16xf32>
    return %y : tensor<2x8x16xf32>
  }
  func.func @step(%x: tensor<2x8x16xf32>, %text: tensor<2x4x16xf32>) -> tensor<2x16x16xf32> {
    %b1 = call @block(%x, %text) : (tensor<2x8x16xf32>, tensor<2x4x16xf32>) -> tensor<2x8x16xf32>
    %b2 = call @block(%b1, %text) : (tensor<2x8x16xf32>, tensor<2x4x16xf32>) -> tensor<2x8x16xf32>
    %g = shard.all_gather %b2 on @mesh grid_axes = [3] gather_axis = 1 : tensor<2x8x16xf32> -> tensor<2x16x16xf32>
    return %g : tensor<2x16x16xf32>
  }
  func.func @stacked(%qkv: tensor<2x8x24xf32>) -> tensor<2x8x8xf32> {
    %o = dit.attention self %qkv {num_heads = 2 : i64, head_dim = 4 : i64, qkv_layout = #dit<qkv_layout stacked>} : tensor<2x8x24xf32> -> tensor<2x8x8xf32>
    return %o : tensor<2x8x8xf32>
  }
}
)mlir";

class HandWritten : public ::testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    module = parseSourceString<ModuleOp>(kModule, context.get());
    ASSERT_TRUE(module);
    FailureOr<MeshInfo> info = readMeshInfo(*module);
    ASSERT_TRUE(succeeded(info));
    mesh = *info;
  }

  func::FuncOp fn(StringRef name) {
    return module->lookupSymbol<func::FuncOp>(name);
  }

  /// The ops of `fn` in order, without the terminator.
  std::vector<Operation *> ops(StringRef name) {
    std::vector<Operation *> out;
    for (Operation &op : fn(name).front().without_terminator())
      out.push_back(&op);
    return out;
  }

  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  MeshInfo mesh;
};

TEST_F(HandWritten, FlopsPerOp) {
  std::vector<Operation *> block = ops("block");
  ASSERT_EQ(block.size(), 8u);
  // GEMMs 2 M N K with M the rows (batch x tokens).
  EXPECT_EQ(opFlops(block[0], mesh), 2 * (2 * 8) * 8 * 16); // q
  EXPECT_EQ(opFlops(block[1], mesh), 2 * (2 * 4) * 8 * 16); // k
  // A norm: one per element.
  EXPECT_EQ(opFlops(block[2], mesh), 2 * 8 * 8);
  // Attention 4 B Lq Lk (H d): cross over the 4 text rows.
  EXPECT_EQ(opFlops(block[3], mesh), 4 * 2 * 8 * 4 * 8);
  // Ring attention sees the 8 local rows of both ring members, and merges
  // the second block into the running output: 3 per output element.
  EXPECT_EQ(opFlops(block[4], mesh),
            4 * 2 * 8 * (8 * 2) * 8 + kRingMergeFlopsPerElement * 2 * 8 * 8);
  EXPECT_EQ(opFlops(block[5], mesh), 2 * (2 * 8) * 16 * 8); // o
  EXPECT_EQ(opFlops(block[6], mesh), 0);                    // all_reduce
  EXPECT_EQ(opFlops(block[7], mesh), 2 * 8 * 16);           // residual
  // Stacked QKV [B, L, 3 H d]: H d = 24 / 3.
  EXPECT_EQ(opFlops(ops("stacked")[0], mesh), 4 * 2 * 8 * 8 * 8);
}

TEST_F(HandWritten, TrafficPerOp) {
  std::vector<Operation *> block = ops("block");
  // Norm statistics: one f32 per row (2 x 8), ring all-reduce over tp 2:
  // 2 (n - 1) / n = 1.
  std::optional<Traffic> stats = opTraffic(block[2], mesh);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->kind, "all_reduce");
  EXPECT_EQ(stats->axes, "tp");
  EXPECT_EQ(stats->bytes, 2 * 8 * 4);
  // Ring attention: K and V blocks (8 rows x 2 x 8 x 4 B) each hop, 1 hop.
  std::optional<Traffic> ring = opTraffic(block[4], mesh);
  ASSERT_TRUE(ring);
  EXPECT_EQ(ring->kind, "shift");
  EXPECT_EQ(ring->axes, "ring");
  EXPECT_EQ(ring->count, 2);
  EXPECT_EQ(ring->bytes, 2 * (8 * 2 * 8 * 4));
  std::optional<Traffic> reduce = opTraffic(block[6], mesh);
  ASSERT_TRUE(reduce);
  EXPECT_EQ(reduce->bytes, 2 * 8 * 16 * 4);
  EXPECT_FALSE(opTraffic(block[0], mesh));
  EXPECT_FALSE(opTraffic(block[3], mesh)); // attention without a ring
}

TEST_F(HandWritten, ParameterSlices) {
  std::vector<Operation *> block = ops("block");
  std::vector<ParamSlice> q = parameterSlices(block[0], mesh);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].name, "q.weight");
  EXPECT_EQ(q[0].shape, (std::vector<int64_t>{16, 16})); // global
  EXPECT_EQ(q[0].splitDim, 0);
  EXPECT_EQ(q[0].segments, (std::vector<int64_t>{16}));
  EXPECT_EQ(q[0].localBytes, 8 * 16 * 4);
  EXPECT_EQ(q[1].localBytes, 8 * 4);
  std::vector<ParamSlice> o = parameterSlices(block[5], mesh);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].shape, (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(o[0].splitDim, 1);
  EXPECT_EQ(o[1].name, "o.bias");
  EXPECT_EQ(o[1].splitDim, -1);
  EXPECT_TRUE(o[1].onlyOnTPCoordinate0);
  EXPECT_EQ(o[1].localBytes, 16 * 4);
  // A norm over a TP-split width holds its half of the weight.
  std::vector<ParamSlice> norm = parameterSlices(block[2], mesh);
  ASSERT_EQ(norm.size(), 1u);
  EXPECT_EQ(norm[0].shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(norm[0].localBytes, 8 * 4);
}

TEST_F(HandWritten, WholeStep) {
  FailureOr<StepStats> stats = accountStep(fn("step"), mesh);
  ASSERT_TRUE(succeeded(stats));
  // Two calls of @block, then one all_gather over ring.
  EXPECT_EQ(stats->collectives,
            (std::map<std::string, int64_t>{
                {"all_gather", 1}, {"all_reduce", 4}, {"shift", 4}}));
  int64_t blockTp = 2 * 8 * 4 + 2 * 8 * 16 * 4; // statistics + all_reduce
  int64_t blockRing = 2 * (8 * 2 * 8 * 4);
  int64_t gather = 1 * (2 * 8 * 16 * 4); // (n - 1) |input|
  EXPECT_EQ(stats->bytesSent, (std::map<std::string, int64_t>{
                                  {"ring", 2 * blockRing + gather},
                                  {"tp", 2 * blockTp}}));
  int64_t blockFlops = 2 * 16 * 8 * 16 + 2 * 8 * 8 * 16 + 2 * 8 * 8 +
                       4 * 2 * 8 * 4 * 8 + 4 * 2 * 8 * 16 * 8 +
                       3 * 2 * 8 * 8 + 2 * 16 * 16 * 8 + 2 * 8 * 16;
  EXPECT_EQ(stats->flops, 2 * blockFlops);
  // Parameters once, though @block runs twice: q.weight, q.bias, k.weight,
  // nq.weight, o.weight and o.bias.
  EXPECT_EQ(stats->paramBytes,
            8 * 16 * 4 + 8 * 4 + 8 * 16 * 4 + 8 * 4 + 16 * 8 * 4 + 16 * 4);
  // @block peaks at 3584 B (x, the running value, o and s live at once);
  // @step holds its two arguments and a call's result while a call runs.
  EXPECT_EQ(stats->activationBytes, (1024 + 512 + 1024) + 3584);
}

TEST_F(HandWritten, CollectiveTraceFollowsCalls) {
  std::vector<CollectiveCall> calls = collectCollectives(fn("step"));
  std::vector<std::string> kinds;
  for (const CollectiveCall &c : calls)
    kinds.push_back(c.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{
                       "all_reduce_stats", "ring_attention", "all_reduce",
                       "all_reduce_stats", "ring_attention", "all_reduce",
                       "all_gather"}));
  // Statistics run on tp's grid axis; ring attention on its ring axis.
  EXPECT_EQ(calls[0].gridAxes, (std::vector<int16_t>{6}));
  EXPECT_EQ(calls[1].gridAxes, (std::vector<int16_t>{3}));
  EXPECT_EQ(calls[2].gridAxes, (std::vector<int16_t>{6}));
  EXPECT_EQ(calls[6].gridAxes, (std::vector<int16_t>{3}));
  EXPECT_NE(calls[2].signature.find(
                "all_reduce (tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>)"),
            std::string::npos)
      << calls[2].signature;
  // The two calls issue the same collectives.
  EXPECT_EQ(calls[0].signature, calls[3].signature);
  EXPECT_EQ(calls[2].signature, calls[5].signature);
}

//===----------------------------------------------------------------------===//
// tiny-wan, imported and partitioned
//===----------------------------------------------------------------------===//

class TinyWan : public ::testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
  }

  /// tiny-wan at 128 x 128, 5 frames, f32, partitioned over `degrees`
  /// ("cfg = 2, tp = 2"). Returns the role functions in dit.roles order.
  std::vector<func::FuncOp> partition(const std::string &degrees) {
    ModelSpec spec = loadModel(std::string(DITC_TEST_MODELS_DIR) + "/tiny-wan");
    WorkloadOptions options;
    options.height = 128;
    options.width = 128;
    options.frames = 5;
    Workload workload = resolveWorkload(spec, options);
    ImportOptions importOptions;
    importOptions.elementType = ElementType::F32;
    module = importModel(*context, spec, workload, importOptions);
    (*module)->setAttr("dit.mesh",
                       parseAttribute("#dit.mesh<" + degrees + ">", context.get()));
    PassManager pm(context.get());
    PartitionOptions partition;
    partition.checkLegality = false; // the lit tests cover the rules
    buildPartitionPipeline(pm, partition);
    EXPECT_TRUE(succeeded(pm.run(*module))) << degrees;
    FailureOr<MeshInfo> info = readMeshInfo(*module);
    EXPECT_TRUE(succeeded(info));
    mesh = *info;
    std::vector<func::FuncOp> roles;
    for (Attribute ref : (*module)->getAttrOfType<ArrayAttr>(kRolesAttrName))
      roles.push_back(module->lookupSymbol<func::FuncOp>(
          cast<FlatSymbolRefAttr>(ref).getValue()));
    return roles;
  }

  StepStats account(func::FuncOp role) {
    FailureOr<StepStats> stats = accountStep(role, mesh);
    EXPECT_TRUE(succeeded(stats));
    return succeeded(stats) ? *stats : StepStats();
  }

  // tiny-wan: width D 32, 2 blocks, FFN F 64, text width T 16 over L 512
  // tokens, timestep frequencies 16, patch features P = 4 x 1 x 2 x 2; at
  // 128 x 128 x 5 frames, S = 128 image tokens. Two guidance branches.
  static constexpr int64_t D = 32, Blocks = 2, F = 64, T = 16, L = 512,
                           Freq = 16, P = 16, S = 128;

  /// FLOPs of one transformer call on a rank that holds `s` image tokens
  /// whose self-attention sees `keys` rows, no TP.
  static int64_t transformerFlops(int64_t s, int64_t keys) {
    int64_t gemm = [&] {
      int64_t top = 2 * s * P * D           // patch embedding
                    + 2 * Freq * D + 2 * D * D // timestep embedding MLP
                    + 2 * L * T * D + 2 * L * D * D // text embedder
                    + 2 * D * 6 * D          // time projection
                    + 2 * s * D * P;         // proj_out
      int64_t block = 4 * 2 * s * D * D      // self q, k, v, out
                      + 2 * 2 * s * D * D    // cross q, out
                      + 2 * 2 * L * D * D    // cross k, v over the text
                      + 2 * 2 * s * D * F    // FFN up and down
                      + 4 * s * keys * D     // self attention
                      + 4 * s * L * D;       // cross attention
      return top + Blocks * block;
    }();
    // One per element: per block 3 layer norms, 3 RMS norms on image rows
    // and one on the text keys, 2 modulations, 2 ropes, 3 residual adds,
    // the gelu over F, and the 6 x D adaLN table; around the blocks the
    // text gelu, the time silu, the final 2 x D table, norm and modulation.
    int64_t elementwise =
        Blocks * (13 * s * D + L * D + s * F + 6 * D) +
        (L * D + D + 2 * D + s * D + s * D);
    return gemm + elementwise;
  }

  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  MeshInfo mesh;
};

TEST_F(TinyWan, OneRankFlopsMatchTheModelFormula) {
  std::vector<func::FuncOp> roles = partition("dp = 1");
  ASSERT_EQ(roles.size(), 1u);
  StepStats stats = account(roles[0]);
  EXPECT_TRUE(stats.collectives.empty());
  // Both branches, then the CFG combine and the Euler step over the
  // latent tokens (S x P).
  EXPECT_EQ(stats.flops, 2 * transformerFlops(S, S) + 2 * S * P);
}

TEST_F(TinyWan, RingHalvesTheRowsButAttentionSeesThemAll) {
  std::vector<func::FuncOp> roles = partition("ring = 2");
  ASSERT_EQ(roles.size(), 1u);
  StepStats stats = account(roles[0]);
  // Each self-attention merges the second ring block into its running
  // output: 3 FLOPs per output element ([1, S/2, D]).
  int64_t merges = Blocks * kRingMergeFlopsPerElement * (S / 2) * D;
  EXPECT_EQ(stats.flops,
            2 * (transformerFlops(S / 2, S) + merges) + 2 * (S / 2) * P);
  // R - 1 = 1 hop moving the K and V image blocks of both branches, batched
  // into one call ([2, 64, 32] f32), per self-attention, 2 blocks.
  EXPECT_EQ(stats.collectives, (std::map<std::string, int64_t>{{"shift", 4}}));
  EXPECT_EQ(stats.bytesSent, (std::map<std::string, int64_t>{
                                 {"ring", 2 * 2 * 2 * (64 * 32 * 4)}}));
}

TEST_F(TinyWan, CfgTpTrafficMatchesTheAlgorithms) {
  std::vector<func::FuncOp> roles = partition("cfg = 2, tp = 2");
  ASSERT_EQ(roles.size(), 2u);
  StepStats stats = account(roles[0]);
  // All-reduces over tp (2(n-1)/n = 1 for n = 2): the text embedder's
  // linear_2 [1, 512, 32], 3 row-parallel linears per block [1, 128, 32],
  // and norm statistics, one f32 per row of 2 x (3 x 128 + 512) rows.
  int64_t tp = L * D * 4 + Blocks * 3 * S * D * 4 + 2 * (3 * S + L) * 4;
  // One all-gather of this rank's prediction over cfg: (n-1) x |input|,
  // the prediction being the local latent tokens [1, 1, 128, 16].
  int64_t cfg = 1 * S * P * 4;
  EXPECT_EQ(stats.bytesSent,
            (std::map<std::string, int64_t>{{"cfg", cfg}, {"tp", tp}}));
  EXPECT_EQ(stats.collectives, (std::map<std::string, int64_t>{
                                   {"all_gather", 1}, {"all_reduce", 15}}));
}

TEST_F(TinyWan, PipelineTracesPairUp) {
  std::vector<func::FuncOp> roles = partition("pp = 2");
  ASSERT_EQ(roles.size(), 2u);
  std::vector<CollectiveCall> first = collectCollectives(roles[0]);
  std::vector<CollectiveCall> last = collectCollectives(roles[1]);
  // Stage 0 sends 4 values per call (2 calls) and receives the latents
  // back between steps; stage 1 mirrors it.
  ASSERT_EQ(first.size(), 9u);
  ASSERT_EQ(last.size(), 9u);
  int16_t pp = mesh.gridAxis(Axis::PP);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(first[i].kind, "send");
    EXPECT_EQ(first[i].peer, 1);
    EXPECT_EQ(first[i].gridAxes, (std::vector<int16_t>{pp}));
    EXPECT_EQ(last[i].kind, "recv");
    EXPECT_EQ(last[i].peer, 0);
    // The same tensor type leaves stage 0 and arrives at stage 1.
    EXPECT_EQ(first[i].signature.substr(5), last[i].signature.substr(5)) << i;
  }
  EXPECT_EQ(first[8].kind, "recv");
  EXPECT_EQ(last[8].kind, "send");
  EXPECT_NE(first[8].signature.find("between steps"), std::string::npos);
  EXPECT_NE(last[8].signature.find("between steps"), std::string::npos);
  EXPECT_EQ(first[8].signature.substr(5), last[8].signature.substr(5));
}

} // namespace
