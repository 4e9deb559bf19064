//===- CostModelTest.cpp - each term of the step-time model, and profiles ===//
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/CostModel/CostModel.h"
#include "ditc/CostModel/HardwareProfile.h"
#include "ditc/Support/BadInput.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace ditc;

namespace {

HardwareProfile toyProfile() {
  HardwareProfile hw;
  hw.name = "toy";
  hw.gpusPerNode = 4;
  hw.peakFlopsBf16 = 100e12;
  hw.peakFlopsFp32 = 10e12;
  hw.memoryBytes = 80e9;
  hw.memoryBandwidth = 1e12;
  hw.intraNode = {100e9, 2e-6};
  hw.interNode = {10e9, 10e-6};
  hw.gemmEfficiency = 0.5;
  hw.attentionEfficiency = 0.25;
  hw.elementwiseEfficiency = 1.0;
  for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                           CollectiveKind::AllToAll, CollectiveKind::SendRecv,
                           CollectiveKind::RingShift})
    hw.collectiveEfficiency[k] = 1.0;
  hw.ringOverlap = 0;
  return hw;
}

Degrees degrees(std::initializer_list<std::pair<Axis, int64_t>> sizes) {
  Degrees d;
  for (auto [axis, size] : sizes)
    d[axis] = size;
  return d;
}

TEST(CollectiveSeconds, AlphaBetaPerAlgorithm) {
  LinkClass link{1e9, 1e-6}; // 1 GB/s, 1 us per step
  double mb = 1e6;
  // Ring all-reduce over 4: 2*3 steps, 2*3/4 of the buffer.
  EXPECT_DOUBLE_EQ(collectiveSeconds(CollectiveKind::AllReduce, mb, 4, link, 1),
                   6e-6 + 1.5e-3);
  // All-gather over 4: 3 steps, 3 contributions received.
  EXPECT_DOUBLE_EQ(collectiveSeconds(CollectiveKind::AllGather, mb, 4, link, 1),
                   3e-6 + 3e-3);
  // All-to-all over 4: 3 steps, 3/4 of the buffer leaves.
  EXPECT_DOUBLE_EQ(collectiveSeconds(CollectiveKind::AllToAll, mb, 4, link, 1),
                   3e-6 + 0.75e-3);
  EXPECT_DOUBLE_EQ(collectiveSeconds(CollectiveKind::SendRecv, mb, 2, link, 1),
                   1e-6 + 1e-3);
  // Half the efficiency doubles the bandwidth term only.
  EXPECT_DOUBLE_EQ(collectiveSeconds(CollectiveKind::SendRecv, mb, 2, link, 0.5),
                   1e-6 + 2e-3);
  // A group of one moves nothing.
  EXPECT_EQ(collectiveSeconds(CollectiveKind::AllReduce, mb, 1, link, 1), 0);
}

TEST(ComputeSeconds, RooflinePerOpClass) {
  HardwareProfile hw = toyProfile();
  ComputeWork work;
  // Compute-bound GEMM: 1e12 FLOPs at 50 TFLOP/s achievable.
  work.add(OpClass::Gemm, 1e12, 1e6);
  // Memory-bound elementwise: 1e9 bytes at 1 TB/s.
  work.add(OpClass::Elementwise, 1e6, 1e9);
  // Attention at a quarter of peak.
  work.add(OpClass::Attention, 1e12, 0);
  EXPECT_NEAR(computeSeconds(work, hw, /*bf16=*/true), 0.02 + 1e-3 + 0.04, 1e-12);
  // fp32 peak is ten times lower.
  EXPECT_NEAR(computeSeconds(work, hw, /*bf16=*/false), 0.2 + 1e-3 + 0.4, 1e-12);
}

TEST(GroupsCrossNodes, FollowsTheLayoutAndItsAlignment) {
  std::vector<Axis> order = MeshLayout::defaultOrder();
  Degrees d = degrees({{Axis::CFG, 2}, {Axis::TP, 4}});
  // tp is innermost: its groups are ranks 0-3 and 4-7, one node each.
  EXPECT_FALSE(groupsCrossNodes(d, order, {Axis::TP}, 4));
  EXPECT_TRUE(groupsCrossNodes(d, order, {Axis::CFG}, 4));
  // Everything on one node.
  EXPECT_FALSE(groupsCrossNodes(d, order, {Axis::CFG}, 8));
  // A group of 3 contiguous ranks on nodes of 4 straddles a boundary.
  Degrees odd = degrees({{Axis::DP, 4}, {Axis::TP, 3}});
  EXPECT_TRUE(groupsCrossNodes(odd, order, {Axis::TP}, 4));
  // Two axes together: ulysses x tp spans 8 ranks, two nodes of 4.
  Degrees both = degrees({{Axis::Ulysses, 2}, {Axis::TP, 4}});
  EXPECT_FALSE(groupsCrossNodes(both, order, {Axis::TP}, 4));
  EXPECT_TRUE(groupsCrossNodes(both, order, {Axis::Ulysses, Axis::TP}, 4));
}

/// Two identical blocks, each with one GEMM and one tp all-reduce, and a
/// cut of 1 MB between them.
TransformerWork twoBlocks() {
  TransformerWork work;
  work.elementBytes = 2;
  work.latentBytes = 1e6;
  work.peakActivationBytes = 3e9;
  for (int i = 0; i < 2; ++i) {
    BlockWork block;
    block.compute.add(OpClass::Gemm, 1e12, 0);
    block.collectives.push_back({CollectiveKind::AllReduce, {Axis::TP}, 1e8});
    block.paramBytes = 1e9;
    block.cutBytes = 1e6;
    work.blocks.push_back(block);
  }
  return work;
}

Configuration configOf(const Degrees &d, int64_t branchCalls = 1) {
  Configuration c;
  c.degrees = d;
  c.meshOrder = MeshLayout::defaultOrder();
  c.gpusPerNode = 4;
  c.branchCalls = branchCalls;
  return c;
}

TEST(EstimateStep, ComputePlusExposedCommunication) {
  HardwareProfile hw = toyProfile();
  TransformerWork work = twoBlocks();
  work.shape = degrees({{Axis::TP, 2}});
  StepEstimate e = estimateStep(work, configOf(work.shape), hw);
  double gemm = 2 * 1e12 / 50e12;
  // Ring all-reduce over 2: 2 steps of latency, the whole buffer once.
  double allReduce = 2 * (2 * 2e-6 + 1e8 / 100e9);
  EXPECT_NEAR(e.computeSeconds, gemm, 1e-12);
  EXPECT_NEAR(e.commSeconds.at(Axis::TP), allReduce, 1e-12);
  EXPECT_NEAR(e.stepSeconds, gemm + allReduce, 1e-12);
  EXPECT_NEAR(e.bubbleSeconds, 0, 1e-12);
  EXPECT_DOUBLE_EQ(e.paramBytes, 2e9);
  EXPECT_DOUBLE_EQ(e.activationBytes, 3e9);
  // Buffers: send and receive of the largest collective.
  EXPECT_DOUBLE_EQ(e.bufferBytes, 2e8);
}

// An all-reduce the runtime issues in row chunks (a row-parallel linear's,
// overlap_row_chunks) pays the latency once per chunk and its bytes once.
TEST(EstimateStep, AnAllReduceInPiecesPaysALatencyPerPiece) {
  HardwareProfile hw = toyProfile();
  TransformerWork work = twoBlocks();
  work.shape = degrees({{Axis::TP, 2}});
  for (BlockWork &block : work.blocks) {
    CollectiveWork &sum = block.collectives[0];
    sum.rowChunks = 4, sum.rowItems = 1, sum.rowsPerItem = 4096;
    ASSERT_EQ(collectiveMessages(sum), 4);
  }
  StepEstimate e = estimateStep(work, configOf(work.shape), hw);
  double allReduce = 2 * (4 * 2 * 2e-6 + 1e8 / 100e9);
  EXPECT_NEAR(e.commSeconds.at(Axis::TP), allReduce, 1e-12);
  // Over 4 ranks: 2(n - 1) latencies per piece.
  work.shape = degrees({{Axis::TP, 4}});
  e = estimateStep(work, configOf(work.shape), hw);
  EXPECT_NEAR(e.commSeconds.at(Axis::TP), 2 * (4 * 6 * 2e-6 + 1.5 * 1e8 / 100e9),
              1e-12);
}

// The chunks are the executor's: whole GEMM tiles of 256 rows, cut per
// batch element, so fewer where the rows are few and more where branch
// calls run as one batch.
TEST(CollectiveMessages, AreTheRowChunksTheRuntimeCuts) {
  CollectiveWork sum{CollectiveKind::AllReduce, {Axis::TP}, 1e6};
  EXPECT_EQ(collectiveMessages(sum), 1);
  sum.rowChunks = 4, sum.rowItems = 1, sum.rowsPerItem = 32760;
  EXPECT_EQ(collectiveMessages(sum), 4);
  // 512 rows are 2 tiles: 2 chunks; a batch of 2 calls, 2 per element.
  sum.rowsPerItem = 512;
  EXPECT_EQ(collectiveMessages(sum), 2);
  EXPECT_EQ(collectiveMessages(sum, 2), 4);
  // 2 elements of 32760 rows: 2 chunks each; batched twice, 1 each.
  sum.rowItems = 2, sum.rowsPerItem = 32760;
  EXPECT_EQ(collectiveMessages(sum), 4);
  EXPECT_EQ(collectiveMessages(sum, 2), 4);
  // Only all-reduces are cut.
  sum.kind = CollectiveKind::AllToAll;
  EXPECT_EQ(collectiveMessages(sum), 1);
}

TEST(EstimateStep, PipelineStagesRunInTurnAndTheRestIsBubble) {
  HardwareProfile hw = toyProfile();
  TransformerWork work = twoBlocks();
  work.blocks[0].collectives.clear();
  work.blocks[1].collectives.clear();
  StepEstimate e = estimateStep(work, configOf(degrees({{Axis::PP, 2}})), hw);
  double block = 1e12 / 50e12;
  double send = 2e-6 + 1e6 / 100e9;
  // One cut each call, and the latents back once per step.
  EXPECT_NEAR(e.commSeconds.at(Axis::PP), 2 * send, 1e-12);
  EXPECT_NEAR(e.computeSeconds, block, 1e-12);
  EXPECT_NEAR(e.stepSeconds, 2 * block + 2 * send, 1e-12);
  EXPECT_NEAR(e.bubbleSeconds, block, 1e-12);
  // Each stage holds half the parameters.
  EXPECT_DOUBLE_EQ(e.paramBytes, 1e9);
}

TEST(EstimateStep, BranchCallsPipelineThroughTheStages) {
  HardwareProfile hw = toyProfile();
  TransformerWork work = twoBlocks();
  work.blocks[0].collectives.clear();
  work.blocks[1].collectives.clear();
  // Two branch calls over two stages: stage 1 runs call 0 while stage 0
  // runs call 1, so a step is three block times, not four.
  StepEstimate e =
      estimateStep(work, configOf(degrees({{Axis::PP, 2}}), /*branchCalls=*/2), hw);
  double block = 1e12 / 50e12;
  double send = 2e-6 + 1e6 / 100e9;
  EXPECT_NEAR(e.stepSeconds, 3 * block + 3 * send, 1e-12);
  EXPECT_NEAR(e.computeSeconds, 2 * block, 1e-12);
  // Without stages the calls run back to back.
  EXPECT_NEAR(estimateStep(work, configOf(Degrees(), 2), hw).stepSeconds, 4 * block,
              1e-12);
}

TEST(EstimateStep, CFGSplitsTheBranchCallsAndGathersOnce) {
  HardwareProfile hw = toyProfile();
  TransformerWork work = twoBlocks();
  work.blocks[0].collectives.clear();
  work.blocks[1].collectives.clear();
  StepEstimate serial = estimateStep(work, configOf(Degrees(), 2), hw);
  StepEstimate split =
      estimateStep(work, configOf(degrees({{Axis::CFG, 2}}), 2), hw);
  EXPECT_NEAR(serial.stepSeconds, 2 * 2 * 1e12 / 50e12, 1e-12);
  double gather = 2e-6 + 1e6 / 100e9;
  EXPECT_NEAR(split.stepSeconds, 2 * 1e12 / 50e12 + gather, 1e-12);
  EXPECT_NEAR(split.commSeconds.at(Axis::CFG), gather, 1e-12);
}

TEST(EstimateStep, EagerLaunchesAddPerOpAndABatchedCallLaunchesOnce) {
  HardwareProfile hw = toyProfile();
  hw.kernelLaunch = 50e-6;
  TransformerWork work = twoBlocks();
  for (BlockWork &block : work.blocks)
    block.compute.launches = 30;
  Configuration batched = configOf(work.shape, /*branchCalls=*/2);
  Configuration calls = batched;
  calls.batchBranches = false;
  StepEstimate one = estimateStep(work, batched, hw);
  StepEstimate two = estimateStep(work, calls, hw);
  // 2 blocks x 30 ops, launched once for the batched branches and once
  // per call without batching; each adds to the roofline's time.
  EXPECT_NEAR(one.launchSeconds, 60 * 50e-6, 1e-12);
  EXPECT_NEAR(two.launchSeconds, 2 * 60 * 50e-6, 1e-12);
  // A compiled engine (kernel_launch 0) pays none, and the eager step is
  // the compiled one plus its launches.
  hw.kernelLaunch = 0;
  StepEstimate compiled = estimateStep(work, batched, hw);
  StepEstimate compiledCalls = estimateStep(work, calls, hw);
  EXPECT_EQ(compiled.launchSeconds, 0);
  EXPECT_NEAR(one.computeSeconds, compiled.computeSeconds + 60 * 50e-6, 1e-12);
  EXPECT_NEAR(two.computeSeconds, compiledCalls.computeSeconds + 2 * 60 * 50e-6, 1e-12);
  EXPECT_NEAR(one.stepSeconds, compiled.stepSeconds + 60 * 50e-6, 1e-12);
}

TEST(EstimateStep, BatchedBranchesPayEachCollectiveOnceAndReadWeightsOnce) {
  HardwareProfile hw = toyProfile();
  TransformerWork work = twoBlocks();
  work.shape = degrees({{Axis::TP, 2}});
  // A memory-bound linear per block: 1 GB of activations in and out, and
  // its 1 GB of weights.
  for (BlockWork &block : work.blocks)
    block.compute.add(OpClass::Gemm, 0, 2e9, 1e9);
  Configuration batched = configOf(work.shape, /*branchCalls=*/2);
  Configuration calls = batched;
  calls.batchBranches = false;
  StepEstimate one = estimateStep(work, batched, hw);
  StepEstimate two = estimateStep(work, calls, hw);
  // Per block one ring all-reduce (2 latencies and the buffer once) of
  // both branches' rows, or one per branch.
  EXPECT_NEAR(one.commSeconds.at(Axis::TP), 2 * (2 * 2e-6 + 2e8 / 100e9), 1e-12);
  EXPECT_NEAR(two.commSeconds.at(Axis::TP), 2 * 2 * (2 * 2e-6 + 1e8 / 100e9), 1e-12);
  // GEMMs: the FLOPs twice either way; the weights read once per step
  // batched ((2 x 1 + 1) GB of bytes per block), twice per branch call.
  double flops = 2 * 1e12 / 50e12;
  EXPECT_NEAR(one.computeSeconds, std::max(2 * flops, 2 * 3e9 / 1e12), 1e-12);
  EXPECT_NEAR(two.computeSeconds, 2 * std::max(flops, 2 * 2e9 / 1e12), 1e-12);
  EXPECT_DOUBLE_EQ(one.flopsPerRank, two.flopsPerRank);
  // Both branches' activations and collective buffers at once.
  EXPECT_DOUBLE_EQ(one.activationBytes, 2 * two.activationBytes);
  EXPECT_DOUBLE_EQ(one.bufferBytes, 2 * two.bufferBytes);
  // Pipeline stages keep the branches as micro-batches.
  Configuration staged = configOf(degrees({{Axis::PP, 2}}), 2);
  Configuration stagedCalls = staged;
  stagedCalls.batchBranches = false;
  EXPECT_DOUBLE_EQ(estimateStep(work, staged, hw).stepSeconds,
                   estimateStep(work, stagedCalls, hw).stepSeconds);
}

TEST(EstimateStep, AGroupAcrossNodesPaysTheNIC) {
  HardwareProfile hw = toyProfile();
  TransformerWork work = twoBlocks();
  Configuration inside = configOf(degrees({{Axis::DP, 2}, {Axis::TP, 4}}));
  Configuration across = inside;
  across.meshOrder = {Axis::TP, Axis::DP, Axis::CFG, Axis::PP,
                      Axis::Ring, Axis::KVGather, Axis::Ulysses};
  StepEstimate near = estimateStep(work, inside, hw);
  StepEstimate far = estimateStep(work, across, hw);
  // Replicas across nodes cost nothing, but the layout says where they are.
  EXPECT_EQ(near.crossNodeAxes, std::vector<Axis>{Axis::DP});
  EXPECT_EQ(near.commSeconds.count(Axis::DP), 0u);
  ASSERT_EQ(far.crossNodeAxes, std::vector<Axis>{Axis::TP});
  double perReduce = [&](const LinkClass &l) {
    return 2 * 3 * l.latency + 2 * 3.0 / 4 * 1e8 / l.bandwidth;
  }(hw.interNode);
  EXPECT_NEAR(far.commSeconds.at(Axis::TP), 2 * perReduce, 1e-12);
  EXPECT_GT(far.stepSeconds, near.stepSeconds);
}

TEST(EstimateStep, RingShiftsHideBehindEachHopsAttention) {
  HardwareProfile hw = toyProfile();
  TransformerWork work;
  work.elementBytes = 2;
  BlockWork block;
  block.compute.add(OpClass::Attention, 4e12, 0);
  // Two hops of 1 GB; each hop's attention is 1e12 FLOPs = 40 ms at 25 TF/s.
  block.collectives.push_back(
      {CollectiveKind::RingShift, {Axis::Ring}, 1e9, 2, 1e12});
  work.blocks.push_back(block);
  Configuration c = configOf(degrees({{Axis::Ring, 3}}));
  c.gpusPerNode = 4;
  double hop = 2e-6 + 1e9 / 100e9; // 10 ms
  EXPECT_NEAR(estimateStep(work, c, hw).commSeconds.at(Axis::Ring), 2 * hop, 1e-12);
  hw.ringOverlap = 1;
  EXPECT_EQ(estimateStep(work, c, hw).commSeconds.count(Axis::Ring), 0u);
  hw.ringOverlap = 0.125; // hides 5 ms of each 10 ms hop
  EXPECT_NEAR(estimateStep(work, c, hw).commSeconds.at(Axis::Ring),
              2 * (hop - 0.005), 1e-12);
  // A fixed cost per hop that no overlap hides.
  hw.ringOverlap = 1;
  hw.ringHopOverhead = 1e-5;
  EXPECT_NEAR(estimateStep(work, c, hw).commSeconds.at(Axis::Ring), 2e-5, 1e-15);
}

TEST(Compute, AttentionCallsOverFewKeysRunSlower) {
  HardwareProfile hw = toyProfile();
  hw.attentionHalfKeys = 128;
  ComputeWork whole, split;
  whole.add(OpClass::Attention, 1e12, 0);
  whole.attentionFlopsByKeys[4096] = 1e12;
  split.add(OpClass::Attention, 1e12, 0);
  split.attentionFlopsByKeys[1024] = 1e12; // four hops of a quarter each
  double peak = hw.peakFlopsBf16 * hw.attentionEfficiency;
  EXPECT_NEAR(computeSeconds(whole, hw, true), 1e12 / peak * (4096.0 + 128) / 4096, 1e-12);
  EXPECT_NEAR(computeSeconds(split, hw, true), 1e12 / peak * (1024.0 + 128) / 1024, 1e-12);
  hw.attentionHalfKeys = 0;
  EXPECT_NEAR(computeSeconds(split, hw, true), 1e12 / peak, 1e-12);
}

TEST(Compute, RingMergesCostTheirBytes) {
  HardwareProfile hw = toyProfile();
  hw.ringMergeBytes = 34;
  ComputeWork merges;
  merges.ringMergeElements = 1e9;
  EXPECT_NEAR(computeSeconds(merges, hw, true),
              34e9 / (hw.memoryBandwidth * hw.elementwiseEfficiency), 1e-12);
}

// Profiles.

std::string profileText(const std::string &field, const nlohmann::json &value) {
  nlohmann::json number = {{"value", 1.0}, {"source", "test"}};
  nlohmann::json efficiency;
  for (const char *k : {"gemm", "attention", "elementwise", "all_reduce",
                        "all_gather", "all_to_all", "send_recv", "ring_shift",
                        "ring_overlap"})
    efficiency[k] = number;
  nlohmann::json p = {{"gpus_per_node", {{"value", 8}, {"source", "test"}}},
                      {"efficiency", efficiency}};
  for (const char *k : {"peak_flops_bf16", "peak_flops_fp32", "memory_bytes",
                        "memory_bandwidth", "intra_node_bandwidth",
                        "intra_node_latency", "inter_node_bandwidth",
                        "inter_node_latency"})
    p[k] = {{"value", 1e9}, {"source", "test"}};
  for (const char *k : {"intra_node_latency", "inter_node_latency"})
    p[k] = {{"value", 1e-6}, {"source", "test"}};
  p["attention_half_keys"] = {{"value", 128}, {"source", "test"}};
  p["ring_merge_bytes"] = {{"value", 34}, {"source", "test"}};
  p["ring_hop_overhead"] = {{"value", 1e-5}, {"source", "test"}};
  if (!field.empty()) {
    if (value.is_null())
      p.erase(field);
    else
      p[field] = value;
  }
  return nlohmann::json{{"profiles", {{"mine", p}}}}.dump();
}

std::string errorOf(const std::string &text) {
  try {
    parseHardwareProfiles(text, "p.json");
  } catch (const BadInput &e) {
    return e.what();
  }
  return "";
}

TEST(HardwareProfiles, TheBundledFileParsesAndNamesEveryRequiredGPU) {
  std::vector<std::string> names = bundledHardwareNames();
  for (const char *name : {"h100-sxm", "h800", "h200", "h20", "a100-80gb-sxm",
                           "l40s", "l20", "cpu-local"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  HardwareProfile h100 = loadHardwareProfile("H100-SXM");
  EXPECT_DOUBLE_EQ(h100.peakFlopsBf16, 989.4e12);
  EXPECT_EQ(h100.gpusPerNode, 8);
}

TEST(HardwareProfiles, AValidProfileParses) {
  EXPECT_EQ(errorOf(profileText("", nullptr)), "");
}

TEST(HardwareProfiles, BadFieldsNameFileFieldAndValue) {
  EXPECT_NE(errorOf(profileText("intra_node_bandwidth",
                                {{"value", 0}, {"source", "x"}}))
                .find("p.json: field 'profiles.mine.intra_node_bandwidth.value' is 0"),
            std::string::npos)
      << errorOf(profileText("intra_node_bandwidth", {{"value", 0}, {"source", "x"}}));
  EXPECT_NE(errorOf(profileText("inter_node_bandwidth",
                                {{"value", -5e9}, {"source", "x"}}))
                .find("-5000000000"),
            std::string::npos);
  EXPECT_NE(errorOf(profileText("memory_bytes", nullptr)).find("memory_bytes"),
            std::string::npos);
  EXPECT_NE(errorOf(profileText("peak_flops_bf16", {{"value", 1e12}, {"source", ""}}))
                .find("source"),
            std::string::npos);
  EXPECT_NE(errorOf(profileText("peak_flops_bf16", 5)).find("peak_flops_bf16"),
            std::string::npos);
  EXPECT_NE(errorOf("{\"profiles\": {}}").find("profiles"), std::string::npos);
  EXPECT_NE(errorOf("[1]").find("p.json"), std::string::npos);
}

TEST(HardwareProfiles, UnknownNamesListTheKnownOnes) {
  try {
    loadHardwareProfile("h1000");
    FAIL();
  } catch (const BadInput &e) {
    std::string message = e.what();
    EXPECT_NE(message.find("'h1000'"), std::string::npos) << message;
    EXPECT_NE(message.find("h100-sxm"), std::string::npos) << message;
    EXPECT_NE(message.find("cpu-local"), std::string::npos) << message;
  }
}

TEST(HardwareProfiles, WrittenProfilesReadBack) {
  HardwareProfile hw = toyProfile();
  std::vector<HardwareProfile> back =
      parseHardwareProfiles(hardwareProfileToJson(hw, {{"gemm", "measured"}}), "x");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "toy");
  EXPECT_DOUBLE_EQ(back[0].interNode.bandwidth, hw.interNode.bandwidth);
  EXPECT_DOUBLE_EQ(back[0].gemmEfficiency, hw.gemmEfficiency);
}

} // namespace
