//===- PlanEmissionTest.cpp - program serializer and manifest builder -----===//
//
// The serializer writes attributes from their typed values and refuses, with
// a diagnostic, what it has no spelling for; it names inputs by their
// dit.input attributes. The manifest builder takes coordinates, roles and
// the rank table from the module's attributes. The modules are parsed
// without verification, as a malformed module may reach the plan when a
// pipeline is run with the verifier off (ditc compile does).
//
//===----------------------------------------------------------------------===//
#include "ditc/Plan/ManifestBuilder.h"
#include "ditc/Plan/ProgramSerializer.h"
#include "ditc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace ditc;
using namespace mlir;
using nlohmann::json;

namespace {

class PlanEmission : public ::testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
    handler = std::make_unique<ScopedDiagnosticHandler>(
        context.get(), [this](Diagnostic &diagnostic) {
          diagnostics += diagnostic.str() + "\n";
          return success();
        });
  }

  /// Parses `body` inside a module whose grid has `shape` (ring 2 x tp 2
  /// unless given), unverified.
  ModuleOp parse(const std::string &attributes, const std::string &body,
                 const std::string &shape = "1x1x1x2x1x1x2") {
    std::string text =
        "module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, "
        "kv_gather, ulysses, tp]>" +
        attributes + "} {\n shard.grid @mesh(shape = " + shape + ")\n" +
        body + "}\n";
    module = parseSourceString<ModuleOp>(
        text, ParserConfig(context.get(), /*verifyAfterParse=*/false));
    EXPECT_TRUE(module) << diagnostics;
    FailureOr<MeshInfo> info = readMeshInfo(*module);
    EXPECT_TRUE(succeeded(info));
    mesh = *info;
    return *module;
  }

  /// Whether a module with these attributes fails to parse: the typed
  /// #dit.groups refuses bad rank lists before any pass or the plan sees them.
  bool groupsRefused(const std::string &attributes) {
    std::string text = "module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, "
                       "pp, ring, kv_gather, ulysses, tp]>" +
                       attributes + "} {}";
    return !parseSourceString<ModuleOp>(
        text, ParserConfig(context.get(), /*verifyAfterParse=*/false));
  }

  FailureOr<SerializedProgram> serialize(StringRef fn) {
    return serializeProgram(module->lookupSymbol<func::FuncOp>(fn), mesh);
  }

  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::string diagnostics;
  OwningOpRef<ModuleOp> module;
  MeshInfo mesh;
};

constexpr const char *kStep = R"mlir(
  func.func @step(%x: tensor<1x8x16xf32> {dit.input = "latents"},
                  %t: tensor<2x4x16xf32> {dit.input = "text", dit.branch = 1 : i64}) -> tensor<1x8x16xf32> {
    %q = dit.linear %x {weight = "q", bias = true, dit.tp = #dit.tp_role<column>, dit.tp_segments = array<i64: 8, 8>, dit.block = 3 : i64} : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
    %n = dit.rms_norm %q {affine = false, eps = 1.0e-6 : f64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.block = 5 : i64} : tensor<1x8x8xf32>
    %a = dit.attention self %n, %n, %n {num_heads = 2 : i64, head_dim = 4 : i64, text_position = #dit<text_position suffix>, dit.ring_axis = 3 : i64, dit.attention_plan = #dit.attention_plan<heads = [tp], rows = ring>} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
    %o = dit.linear %a {weight = "o", bias = true, dit.tp = #dit.tp_role<row>} : tensor<1x8x8xf32> -> tensor<1x8x16xf32>
    %s = shard.all_reduce %o on @mesh grid_axes = [6] : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
    return %s : tensor<1x8x16xf32>
  }
)mlir";

TEST_F(PlanEmission, AttributesFromTheirTypedValues) {
  parse("", kStep);
  FailureOr<SerializedProgram> program = serialize("step");
  ASSERT_TRUE(succeeded(program)) << diagnostics;
  const json &ops = program->body["ops"];
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0]["attrs"],
            json::parse(R"({"weight": "q", "bias": true, "dit.tp": "column",
                           "dit.tp_segments": [8, 8], "dit.block": 3})"));
  EXPECT_EQ(ops[0]["params"][0],
            json::parse(R"({"name": "q.weight", "shape": [16, 16],
                           "split": {"dim": 0, "axis": "tp", "segments": [8, 8]}})"));
  EXPECT_EQ(ops[1]["attrs"]["eps"], 1.0e-6);
  EXPECT_EQ(ops[1]["attrs"]["dit.reduce_stats_over"], json::parse(R"(["tp"])"));
  EXPECT_FALSE(ops[1].contains("params")); // no weight
  const json &attention = ops[2]["attrs"];
  EXPECT_EQ(attention["kind"], "self");
  EXPECT_EQ(attention["text_position"], "suffix");
  EXPECT_EQ(attention["qkv_layout"], "separate");
  EXPECT_EQ(attention["kv_cache"], "none");
  EXPECT_EQ(attention["dit.attention_plan"],
            json::parse(R"({"heads": ["tp"], "rows": "ring"})"));
  EXPECT_EQ(attention["dit.ring_axis"], 3);
  EXPECT_EQ(attention["ring_axis_name"], "ring");
  EXPECT_EQ(ops[3]["params"][1],
            json::parse(R"({"name": "o.bias", "shape": [16],
                           "only_on_axis_coordinate_0": "tp"})"));
  // The collective names its axes; its grid symbol is left out. It
  // completes the row-parallel linear just before it, so it may run in row
  // chunks (docs/plan-format.md, overlap_row_chunks).
  EXPECT_EQ(ops[4]["attrs"],
            json::parse(R"({"grid_axes": [6], "axes": ["tp"], "reduction": "sum",
                           "overlap_row_chunks": 4})"));
  EXPECT_EQ(program->layers, std::make_pair(int64_t(3), int64_t(5)));
  // Inputs by their names, wherever they sit.
  EXPECT_EQ(program->body["inputs"],
            json::parse(R"([{"name": "latents", "value": 0},
                           {"name": "text", "value": 1, "branch": 1}])"));
}

TEST_F(PlanEmission, WrongKindOfPassAttributeIsADiagnostic) {
  std::string step = kStep;
  // An unverified module can still carry the old string spelling.
  std::string typed = "dit.tp = #dit.tp_role<column>";
  step.replace(step.find(typed), typed.size(), "dit.tp = \"colum\"");
  parse("", step);
  EXPECT_TRUE(failed(serialize("step")));
  EXPECT_NE(diagnostics.find("attribute 'dit.tp' = \"colum\" has no spelling "
                             "in the plan format"),
            std::string::npos)
      << diagnostics;
}

TEST_F(PlanEmission, StatisticsAxesAsGridIndicesAreADiagnostic) {
  std::string step = kStep;
  std::string typed = "dit.reduce_stats_over = #dit.axes<[tp]>";
  step.replace(step.find(typed), typed.size(), "dit.reduce_stats_over = [6]");
  parse("", step);
  EXPECT_TRUE(failed(serialize("step")));
  EXPECT_NE(diagnostics.find("attribute 'dit.reduce_stats_over' = [6]"),
            std::string::npos)
      << diagnostics;
}

TEST_F(PlanEmission, UnnamedInputIsADiagnostic) {
  std::string step = kStep;
  step.replace(step.find(" {dit.input = \"latents\"}"), 24, "");
  parse("", step);
  EXPECT_TRUE(failed(serialize("step")));
  EXPECT_NE(diagnostics.find("argument #0 has no 'dit.input' name"),
            std::string::npos)
      << diagnostics;
}

// cfg 2 x tp 2 over ranks laid out as the groups say; the rank table runs
// role 0 (cfg 0) on ranks 0 and 1, role 1 on ranks 2 and 3.
constexpr const char *kRoles = R"mlir(
  func.func @denoise_step_s0_c0(%x: tensor<1xf32> {dit.input = "latents"}) -> tensor<1xf32> attributes {dit.role = #dit.role<stage = 0, cfg = 0>} {
    return %x : tensor<1xf32>
  }
  func.func @denoise_step_s0_c1(%x: tensor<1xf32> {dit.input = "latents"}) -> tensor<1xf32> attributes {dit.role = #dit.role<stage = 0, cfg = 1>} {
    return %x : tensor<1xf32>
  }
)mlir";

std::string groups(const std::string &tp) {
  return ", dit.roles = [@denoise_step_s0_c0, @denoise_step_s0_c1], "
         "dit.rank_roles = array<i64: 0, 0, 1, 1>, dit.groups = #dit.groups<"
         "dp = [[0], [1], [2], [3]], cfg = [[0, 2], [1, 3]], "
         "pp = [[0], [1], [2], [3]], ring = [[0], [1], [2], [3]], "
         "kv_gather = [[0], [1], [2], [3]], ulysses = [[0], [1], [2], [3]], "
         "tp = " + tp + ">";
}

FailureOr<json> manifestOf(ModuleOp module, const MeshInfo &mesh) {
  ModelSpec spec;
  spec.patch = {1, 2, 2};
  Workload workload;
  workload.branches = 1;
  Deployment deployment;
  deployment.numGpus = 4;
  FailureOr<std::vector<RoleProgram>> roles = readRolePrograms(module, mesh, 1);
  if (failed(roles))
    return failure();
  return buildManifest(module, mesh, *roles, json::array(), spec, workload,
                       deployment, {});
}

TEST_F(PlanEmission, ManifestCoordinatesAreGroupPositions) {
  ModuleOp m = parse(groups("[[1, 0], [3, 2]]"), kRoles,
                     "1x2x1x1x1x1x2");
  FailureOr<json> manifest = manifestOf(m, mesh);
  ASSERT_TRUE(succeeded(manifest)) << diagnostics;
  const json &ranks = (*manifest)["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  // tp lists rank 1 first in its group: it is tp coordinate 0.
  EXPECT_EQ(ranks[0]["coords"]["tp"], 1);
  EXPECT_EQ(ranks[1]["coords"]["tp"], 0);
  EXPECT_EQ(ranks[2]["coords"]["cfg"], 1);
  EXPECT_EQ(ranks[0]["program"], "s0_c0");
  EXPECT_EQ(ranks[3]["program"], "s0_c1");
  EXPECT_EQ((*manifest)["groups"]["tp"], json::parse("[[1, 0], [3, 2]]"));
}

TEST_F(PlanEmission, RankMissingFromTheGroupsIsADiagnostic) {
  EXPECT_TRUE(groupsRefused(groups("[[0, 1]]")));
  EXPECT_NE(diagnostics.find("'tp' groups cover 2 ranks but 'dp' groups cover 4"),
            std::string::npos)
      << diagnostics;
}

TEST_F(PlanEmission, RankTwiceOrOutsideTheWorldIsADiagnostic) {
  EXPECT_TRUE(groupsRefused(groups("[[0, 1], [1, 3]]")));
  EXPECT_NE(diagnostics.find("rank 1 is in more than one 'tp' group"),
            std::string::npos)
      << diagnostics;
  EXPECT_TRUE(groupsRefused(groups("[[0, 1], [2, 7]]")));
  EXPECT_NE(diagnostics.find("rank 7 is in a 'tp' group but in no 'dp' group"),
            std::string::npos)
      << diagnostics;
}

TEST_F(PlanEmission, MalformedGroupsAreADiagnostic) {
  // The untyped spelling groups had before #dit.groups.
  ModuleOp m = parse(", dit.roles = [@denoise_step_s0_c0, @denoise_step_s0_c1], "
                     "dit.rank_roles = array<i64: 0, 0, 1, 1>, "
                     "dit.groups = {tp = [[0, 1], [2, 3]]}",
                     kRoles, "1x2x1x1x1x1x2");
  EXPECT_TRUE(failed(manifestOf(m, mesh)));
  EXPECT_NE(diagnostics.find("the plan needs 'dit.groups = #dit.groups<...>'"),
            std::string::npos)
      << diagnostics;
}

} // namespace
