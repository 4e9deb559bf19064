//===- DialectInterfacesTest.cpp - every dit op carries its interfaces ----===//
//
// The partitioner and the plan know ops only through DitShardableOpInterface,
// DitParameterOpInterface and DitCostOpInterface, so an op added to the
// dialect without them would fail only when a model first uses it. These
// tests fail as soon as it is registered, and check the interfaces' figures
// (FLOPs, parameter specs) on small hand-written IR.
//
//===----------------------------------------------------------------------===//
#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace mlir::dit;

namespace {

/// dit ops that never appear in a transformer function: the partitioner's
/// own (stack, unstack, split, cfg_select), the denoising step's, and the
/// pipeline component markers. Every other dit op must implement the
/// interfaces.
const std::set<std::string> kOutsideTransformer = {
    "dit.stack",       "dit.unstack",        "dit.split",    "dit.cfg_select",
    "dit.cfg_combine", "dit.scheduler_step", "dit.component", "dit.yield"};

/// The VAE decoder's ops: they live in a dit.component body, split into
/// bands by dit-partition-vae rather than by the sharding interface, so
/// they implement the cost interface (and parameters) only.
const std::set<std::string> kVaeDecoder = {
    "dit.conv",        "dit.group_norm",        "dit.channel_rms_norm",
    "dit.upsample",    "dit.temporal_upsample", "dit.dup_up",
    "dit.image_attention", "dit.add",           "dit.denormalize_latents",
    "dit.pixel_unpatchify", "dit.clamp",
    // The text encoders' own ops: split by dit-partition-text-encoder.
    "dit.token_embedding", "dit.relative_position_bias", "dit.mul",
    "dit.eos_pool", "dit.mask_rows"};

struct Fixture : ::testing::Test {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  void SetUp() override {
    ditc::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
  }
  OwningOpRef<ModuleOp> parse(const char *text) {
    return parseSourceString<ModuleOp>(text, context.get());
  }
};

using DitOpInterfaces = Fixture;

TEST_F(DitOpInterfaces, EveryTransformerOpImplementsThem) {
  int checked = 0;
  for (RegisteredOperationName name : context->getRegisteredOperations()) {
    if (name.getDialectNamespace() != "dit")
      continue;
    std::string op = name.getStringRef().str();
    if (kOutsideTransformer.count(op))
      continue;
    if (kVaeDecoder.count(op)) {
      EXPECT_TRUE(name.hasInterface<DitCostOpInterface>())
          << op << " does not implement DitCostOpInterface (DitCost.cpp)";
      EXPECT_EQ(llvm::is_contained(name.getAttributeNames(), "weight"),
                name.hasInterface<DitParameterOpInterface>())
          << op << " names a weight but does not list its parameters (DitParameters.cpp)";
      continue;
    }
    ++checked;
    EXPECT_TRUE(name.hasInterface<DitShardableOpInterface>())
        << op << " can appear in @transformer but does not implement "
                 "DitShardableOpInterface (DitShardingRules.cpp)";
    EXPECT_TRUE(name.hasInterface<DitCostOpInterface>())
        << op << " does not implement DitCostOpInterface (DitCost.cpp)";
    // An op that names a checkpoint parameter must say how it is laid out.
    bool readsParameters =
        llvm::is_contained(name.getAttributeNames(),
                           StringAttr::get(context.get(), "weight"));
    EXPECT_EQ(readsParameters, name.hasInterface<DitParameterOpInterface>())
        << op << ": an op with a 'weight' attribute implements "
                 "DitParameterOpInterface (DitParameters.cpp), and only such "
                 "an op";
  }
  // The dialect has 13 ops that can appear in a transformer today.
  EXPECT_GE(checked, 13);
}

/// Every op of every bundled model's transformer is shardable: the check
/// covers the upstream ops the importer emits too (tensor.concat).
TEST_F(DitOpInterfaces, EveryImportedTransformerOpIsShardable) {
  for (const char *model : {"tiny-wan", "tiny-flux", "qwen-image",
                            "hunyuanvideo", "cogvideox-2b", "ltx-video",
                            "mochi-1-preview", "sd3-medium",
                            "wan2.2-ti2v-5b"}) {
    ditc::ModelSpec spec =
        ditc::loadModel(std::string(DITC_TEST_MODELS_DIR) + "/" + model);
    ditc::Workload workload = ditc::resolveWorkload(spec, {});
    OwningOpRef<ModuleOp> module = ditc::importModel(*context, spec, workload);
    std::set<std::string> missing;
    int ops = 0;
    module->walk([&](func::FuncOp fn) {
      if (!isTransformerFunction(fn))
        return;
      fn.walk([&](Operation *op) {
        if (isa<func::FuncOp, func::ReturnOp>(op))
          return;
        ++ops;
        if (!isa<DitShardableOpInterface>(op))
          missing.insert(op->getName().getStringRef().str());
      });
    });
    EXPECT_GT(ops, 0) << model;
    EXPECT_TRUE(missing.empty())
        << model << ": " << *missing.begin()
        << " does not implement DitShardableOpInterface";
  }
}

const char *kBlock = R"mlir(
  func.func @f(%x: tensor<2x8x16xf32>, %q: tensor<2x8x32xf32>,
               %kv: tensor<2x12x32xf32>, %mod: tensor<2x6x16xf32>) {
    %l = dit.linear %x {weight = "proj", bias = true}
        : tensor<2x8x16xf32> -> tensor<2x8x32xf32>
    %n = dit.rms_norm %x {affine = true, eps = 1.0e-06 : f64, weight = "norm"}
        : tensor<2x8x16xf32>
    %a = dit.attention cross %q, %kv, %kv {num_heads = 4 : i64, head_dim = 8 : i64}
        : tensor<2x8x32xf32>, tensor<2x12x32xf32>, tensor<2x12x32xf32>
        -> tensor<2x8x32xf32>
    %m = dit.modulate %x, %mod {shift = 0 : i64, scale = 1 : i64}
        : tensor<2x8x16xf32>, tensor<2x6x16xf32>
    return
  }
)mlir";

template <typename OpT> OpT first(ModuleOp module) {
  OpT found;
  module.walk([&](OpT op) {
    if (!found)
      found = op;
  });
  return found;
}

TEST_F(DitOpInterfaces, FlopCounts) {
  OwningOpRef<ModuleOp> module = parse(kBlock);
  ASSERT_TRUE(module);
  // GEMM: 2 * M * N * K with M = 2 * 8 tokens, K = 16, N = 32.
  EXPECT_EQ(cast<DitCostOpInterface>(first<LinearOp>(*module).getOperation())
                .getFlops(),
            2 * 16 * 32 * 16);
  // Attention: 4 * B * H * Lq * Lk * d = 4 * 2 * 4 * 8 * 12 * 8.
  EXPECT_EQ(cast<DitCostOpInterface>(first<AttentionOp>(*module).getOperation())
                .getFlops(),
            4 * 2 * 4 * 8 * 12 * 8);
  // Norms and elementwise ops: one per output element.
  EXPECT_EQ(cast<DitCostOpInterface>(first<RMSNormOp>(*module).getOperation())
                .getFlops(),
            2 * 8 * 16);
  EXPECT_EQ(cast<DitCostOpInterface>(first<ModulateOp>(*module).getOperation())
                .getFlops(),
            2 * 8 * 16);
}

TEST_F(DitOpInterfaces, ParameterSpecsFollowTheTPRole) {
  OwningOpRef<ModuleOp> module = parse(kBlock);
  ASSERT_TRUE(module);
  LinearOp linear = first<LinearOp>(*module);
  auto specsOf = [&](int64_t tp) {
    SmallVector<ParameterSpec> specs;
    cast<DitParameterOpInterface>(linear.getOperation()).getParameters(tp, specs);
    return specs;
  };
  SmallVector<ParameterSpec> whole = specsOf(1);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0].name, "proj.weight");
  EXPECT_EQ(whole[0].shape, (SmallVector<int64_t>{32, 16}));
  EXPECT_EQ(whole[0].splitDim, -1);
  // Column-parallel under tp 2: the local 32 outputs are half of 64.
  setTPRole(linear, "column");
  SmallVector<ParameterSpec> column = specsOf(2);
  EXPECT_EQ(column[0].shape, (SmallVector<int64_t>{64, 16}));
  EXPECT_EQ(column[0].splitDim, 0);
  EXPECT_EQ(column[1].splitDim, 0);
  // Row-parallel: the input dimension splits; the bias is added once.
  setTPRole(linear, "row");
  SmallVector<ParameterSpec> row = specsOf(2);
  EXPECT_EQ(row[0].shape, (SmallVector<int64_t>{32, 32}));
  EXPECT_EQ(row[0].splitDim, 1);
  EXPECT_EQ(row[1].name, "proj.bias");
  EXPECT_TRUE(row[1].rank0Only);
}

/// The patch embedding's weight is [D, C * pt * ph * pw] for the plan; a
/// convolution's checkpoint stores the kernel unflattened, and the spec
/// says so, on latents and on patch tokens alike.
TEST_F(DitOpInterfaces, PatchEmbeddingCheckpointShapes) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @f(%v: tensor<1x4x2x4x4xf32>, %i: tensor<1x4x4x4xf32>, %t: tensor<1x4x16xf32>) {
      %a = dit.patch_embed %v {patch = array<i64: 2, 2, 2>, weight = "a", kernel = #dit<patch_kernel conv3d>} : tensor<1x4x2x4x4xf32> -> tensor<1x4x8xf32>
      %b = dit.patch_embed %i {patch = array<i64: 1, 2, 2>, weight = "b", kernel = #dit<patch_kernel conv2d>} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
      %c = dit.patch_embed %t {patch = array<i64: 1, 2, 2>, weight = "c"} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
      %d = dit.patch_embed %t {patch = array<i64: 1, 2, 2>, weight = "d", kernel = #dit<patch_kernel conv3d>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
      return
    })mlir");
  ASSERT_TRUE(module);
  std::vector<SmallVector<ParameterSpec>> specs;
  module->walk([&](PatchEmbedOp op) {
    specs.emplace_back();
    cast<DitParameterOpInterface>(op.getOperation()).getParameters(1, specs.back());
  });
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0][0].shape, (SmallVector<int64_t>{8, 32}));
  EXPECT_EQ(specs[0][0].checkpointShape, (SmallVector<int64_t>{8, 4, 2, 2, 2}));
  EXPECT_EQ(specs[1][0].shape, (SmallVector<int64_t>{8, 16}));
  EXPECT_EQ(specs[1][0].checkpointShape, (SmallVector<int64_t>{8, 4, 2, 2}));
  EXPECT_TRUE(specs[2][0].checkpointShape.empty()); // linear: stored as used
  EXPECT_EQ(specs[3][0].shape, (SmallVector<int64_t>{8, 16}));
  EXPECT_EQ(specs[3][0].checkpointShape, (SmallVector<int64_t>{8, 4, 1, 2, 2}));
  EXPECT_TRUE(specs[0][1].checkpointShape.empty()); // the bias
}

/// The upstream interface's maps: linear's k loop is a sum reduction that
/// indexes only the input; modulate's chunk table has a loop of its own,
/// not the token loop.
TEST_F(DitOpInterfaces, UpstreamIndexingMaps) {
  OwningOpRef<ModuleOp> module = parse(kBlock);
  ASSERT_TRUE(module);
  auto linear =
      cast<shard::ShardingInterface>(first<LinearOp>(*module).getOperation());
  EXPECT_EQ(linear.getLoopIteratorTypes().back(),
            utils::IteratorType::reduction);
  EXPECT_EQ(linear.getReductionLoopIteratorKinds(),
            SmallVector<shard::ReductionKind>{shard::ReductionKind::Sum});
  SmallVector<AffineMap> maps = linear.getIndexingMaps();
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].getResult(2), getAffineDimExpr(3, context.get()));
  EXPECT_EQ(maps[1].getResult(2), getAffineDimExpr(2, context.get()));
  auto modulate =
      cast<shard::ShardingInterface>(first<ModulateOp>(*module).getOperation());
  SmallVector<AffineMap> modMaps = modulate.getIndexingMaps();
  ASSERT_EQ(modMaps.size(), 3u);
  EXPECT_EQ(modMaps[0].getResult(1), getAffineDimExpr(1, context.get()));
  EXPECT_EQ(modMaps[1].getResult(1), getAffineDimExpr(3, context.get()));
  EXPECT_EQ(modMaps[2].getNumDims(), 4u);
}

} // namespace
