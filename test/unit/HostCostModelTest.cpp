//===- HostCostModelTest.cpp - pricing a CPU host, and calibration fits ---===//
//
// The terms a calibrated CPU host adds to the cost model (HostRates in
// HardwareProfile.h): threads per rank and time-sharing, per-thread-count
// rates, measured collective links, the ranks' skew at blocking
// collectives, the profile's "host" section, and the fits `ditc calibrate`
// makes (Calibration.h).
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/CostModel/Calibration.h"
#include "ditc/CostModel/CostModel.h"
#include "ditc/Support/BadInput.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace ditc;
using nlohmann::json;

namespace {

/// A 4-core host whose rates grow sub-linearly with threads, and whose
/// all-reduce was measured slower than the intra-node (send/recv) link.
HardwareProfile hostProfile() {
  HardwareProfile hw;
  hw.name = "host";
  hw.gpusPerNode = 4;
  hw.peakFlopsBf16 = hw.peakFlopsFp32 = 300e9;
  hw.memoryBytes = 16e9;
  hw.memoryBandwidth = 20e9;
  hw.intraNode = {4e9, 20e-6};
  hw.interNode = {1e9, 100e-6};
  for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                           CollectiveKind::AllToAll, CollectiveKind::SendRecv,
                           CollectiveKind::RingShift})
    hw.collectiveEfficiency[k] = 0.5;
  HostRates host;
  host.cores = 4;
  host.gemmFlops = {{1, 100e9}, {2, 180e9}, {4, 300e9}};
  host.attentionFlops = {{1, 50e9}, {2, 90e9}, {4, 150e9}};
  host.elementwiseBandwidth = {{1, 8e9}, {2, 12e9}, {4, 20e9}};
  host.collectives[CollectiveKind::AllReduce] = {1e9, 200e-6};
  hw.host = host;
  return hw;
}

TEST(HostRates, ThreadsPerRankFollowDitRunsDefault) {
  HostRates host = *hostProfile().host;
  EXPECT_EQ(threadsPerRank(host, 1), 4);
  EXPECT_EQ(threadsPerRank(host, 2), 2);
  EXPECT_EQ(threadsPerRank(host, 3), 1); // 4 / 3 rounds down, as dit-run's
  EXPECT_EQ(threadsPerRank(host, 8), 1); // at least one
}

TEST(HostRates, UnmeasuredThreadCountsScaleTheLargestMeasuredBelow) {
  std::map<int64_t, double> rates = {{1, 10.0}, {2, 18.0}};
  EXPECT_DOUBLE_EQ(hostRate(rates, 2), 18.0);
  EXPECT_DOUBLE_EQ(hostRate(rates, 3), 27.0);
  EXPECT_DOUBLE_EQ(hostRate(rates, 1), 10.0);
}

TEST(AchievedRates, WithoutAHostSectionPeakTimesEfficiency) {
  HardwareProfile hw = hostProfile();
  hw.host.reset();
  hw.gemmEfficiency = 0.5, hw.attentionEfficiency = 0.25;
  hw.elementwiseEfficiency = 0.8;
  AchievedRates r = achievedRates(hw, /*bf16=*/false, 4);
  EXPECT_DOUBLE_EQ(r.flops[size_t(OpClass::Gemm)], 150e9);
  EXPECT_DOUBLE_EQ(r.flops[size_t(OpClass::Attention)], 75e9);
  EXPECT_DOUBLE_EQ(r.bandwidth, 16e9);
}

TEST(AchievedRates, RanksSharingAHostGetTheirThreadsRates) {
  HardwareProfile hw = hostProfile();
  AchievedRates alone = achievedRates(hw, false, 1);
  EXPECT_DOUBLE_EQ(alone.flops[size_t(OpClass::Gemm)], 300e9);
  EXPECT_DOUBLE_EQ(alone.flops[size_t(OpClass::Attention)], 150e9);
  EXPECT_DOUBLE_EQ(alone.bandwidth, 20e9);
  AchievedRates pair = achievedRates(hw, false, 2);
  EXPECT_DOUBLE_EQ(pair.flops[size_t(OpClass::Gemm)], 180e9);
  EXPECT_DOUBLE_EQ(pair.bandwidth, 12e9);
  // bf16 plans run float32 CPU kernels: the same table.
  EXPECT_DOUBLE_EQ(achievedRates(hw, true, 2).flops[0], pair.flops[0]);
}

TEST(AchievedRates, MoreRanksThanCoresTimeShare) {
  HardwareProfile hw = hostProfile();
  // 8 ranks of one thread on 4 cores: each gets half a core.
  AchievedRates r = achievedRates(hw, false, 8);
  EXPECT_DOUBLE_EQ(r.flops[size_t(OpClass::Gemm)], 50e9);
  EXPECT_DOUBLE_EQ(r.flops[size_t(OpClass::Attention)], 25e9);
  EXPECT_DOUBLE_EQ(r.bandwidth, 4e9);
  // 3 ranks of one thread on 4 cores: no sharing.
  EXPECT_DOUBLE_EQ(achievedRates(hw, false, 3).flops[0], 100e9);
}

TEST(CollectiveLink, MeasuredHostLinksReplaceTheIntraNodeLink) {
  HardwareProfile hw = hostProfile();
  auto [reduce, reduceEff] = collectiveLink(hw, CollectiveKind::AllReduce, false);
  EXPECT_DOUBLE_EQ(reduce.bandwidth, 1e9);
  EXPECT_DOUBLE_EQ(reduce.latency, 200e-6);
  EXPECT_DOUBLE_EQ(reduceEff, 1.0);
  // A kind the host did not measure keeps the intra-node link and its
  // efficiency; a group across nodes pays the NIC.
  auto [gather, gatherEff] = collectiveLink(hw, CollectiveKind::AllGather, false);
  EXPECT_DOUBLE_EQ(gather.bandwidth, 4e9);
  EXPECT_DOUBLE_EQ(gatherEff, 0.5);
  auto [nic, nicEff] = collectiveLink(hw, CollectiveKind::AllReduce, true);
  EXPECT_DOUBLE_EQ(nic.bandwidth, 1e9);
  EXPECT_DOUBLE_EQ(nic.latency, 100e-6);
  EXPECT_DOUBLE_EQ(nicEff, 0.5);
}

/// One block of 60 GFLOP of GEMM and an all-reduce of 1 MB over tp, in
/// float32, and a configuration on nodes of 4 ranks.
TransformerWork oneBlockWithAnAllReduce() {
  TransformerWork work;
  work.elementBytes = 4;
  BlockWork block;
  block.compute.add(OpClass::Gemm, 60e9, 0);
  block.collectives.push_back({CollectiveKind::AllReduce, {Axis::TP}, 1e6});
  work.blocks.push_back(block);
  return work;
}

Configuration fourRanksPerNode() {
  Configuration config;
  config.meshOrder = MeshLayout::defaultOrder();
  config.gpusPerNode = 4;
  return config;
}

TEST(EstimateStep, AHostPricesComputeAtTheThreadsEachRankGets) {
  HardwareProfile hw = hostProfile();
  TransformerWork work = oneBlockWithAnAllReduce();
  Configuration config = fourRanksPerNode();
  config.degrees[Axis::TP] = 2;
  // Two ranks on the host: 2 threads each, 180 GFLOP/s; the all-reduce on
  // the measured link: 2(n-1)·alpha + 2(n-1)/n·B/beta.
  StepEstimate e = estimateStep(work, config, hw);
  EXPECT_NEAR(e.computeSeconds, 60e9 / 180e9, 1e-12);
  EXPECT_NEAR(e.commSeconds.at(Axis::TP), 2 * 200e-6 + 1e6 / 1e9, 1e-12);
  // Four ranks on the host (dp 2 beside tp 2): one thread each.
  config.degrees[Axis::DP] = 2;
  EXPECT_NEAR(estimateStep(work, config, hw).computeSeconds, 60e9 / 100e9, 1e-12);
  // Eight ranks on the 4-core host: half a core each.
  config.degrees[Axis::DP] = 4;
  config.gpusPerNode = 8;
  EXPECT_NEAR(estimateStep(work, config, hw).computeSeconds, 60e9 / 50e9, 1e-12);
}

TEST(BusyRanks, PipelineStagesTakeTurns) {
  std::vector<Axis> order = MeshLayout::defaultOrder(); // pp outside tp
  Degrees d;
  EXPECT_EQ(busyRanksPerNode(d, order, 4), 1);
  d[Axis::TP] = 4;
  EXPECT_EQ(busyRanksPerNode(d, order, 4), 4);
  d[Axis::TP] = 2, d[Axis::PP] = 2;
  EXPECT_EQ(busyRanksPerNode(d, order, 4), 2);
  d[Axis::TP] = 1, d[Axis::PP] = 4;
  EXPECT_EQ(busyRanksPerNode(d, order, 4), 1);
  // dp replicas compute at once, each with its own stages.
  d[Axis::PP] = 2, d[Axis::DP] = 2;
  EXPECT_EQ(busyRanksPerNode(d, order, 4), 2);
  // One stage per node: every rank of a node is busy at once.
  d[Axis::DP] = 1, d[Axis::PP] = 2, d[Axis::TP] = 4;
  EXPECT_EQ(busyRanksPerNode(d, order, 4), 4);
}

/// Four blocks of 10 GFLOP of GEMM, on four ranks of a 2-core host.
TransformerWork fourBlocks() {
  TransformerWork work;
  work.elementBytes = 4;
  for (int i = 0; i < 4; ++i) {
    BlockWork block;
    block.compute.add(OpClass::Gemm, 10e9, 0);
    work.blocks.push_back(block);
  }
  return work;
}

TEST(EstimateStep, IdleStagesLeaveTheirCoresToTheBusyOnes) {
  HardwareProfile hw = hostProfile();
  hw.host->cores = 2;
  TransformerWork work = fourBlocks();
  Configuration config = fourRanksPerNode();
  // pp 4 on 2 cores: one stage computes at a time, so each rank gets both
  // cores' threads, as dit-run's default gives them (180 GFLOP/s); 4 blocks
  // in turn, and 4 empty sends (3 cuts, the latents back) at the send/recv
  // latency.
  config.degrees[Axis::PP] = 4;
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds,
              4 * 10e9 / 180e9 + 4 * 20e-6, 1e-12);
  // dp 4 on 2 cores: four ranks at once, half a core each.
  config.degrees[Axis::PP] = 1, config.degrees[Axis::DP] = 4;
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds, 4 * 10e9 / 50e9, 1e-12);
}

TEST(EstimateStep, OverlappingStagesShareTheHostsCores) {
  HardwareProfile hw = hostProfile();
  hw.host->cores = 2;
  TransformerWork work = fourBlocks();
  Configuration config = fourRanksPerNode();
  config.branchCalls = 2;
  double send = 20e-6; // empty cuts and latents: the send/recv latency
  // pp 4, two calls: two threads per rank (one stage's ranks on the host),
  // per-call stage time 10/180 s; the pipeline would take 4 + 1 stage
  // times, but while two stages overlap their four threads share 2 cores,
  // so the cores' share of the work (8 stage-calls of two threads on 2
  // cores) bounds the step; 7 sends (3 cuts per call, the latents once).
  config.degrees[Axis::PP] = 4;
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds,
              8 * 10e9 / 180e9 + 7 * send, 1e-12);
  // pp 2 x tp 2: a stage's two ranks fill both cores, so the stages cannot
  // overlap: 2 stages x 2 calls x 2 blocks x 0.1 s of two ranks on 2 cores,
  // not the pipeline's 3 x 0.2 s.
  config.degrees[Axis::PP] = 2, config.degrees[Axis::TP] = 2;
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds, 0.8 + 3 * send, 1e-12);
}

// Each blocking collective waits out the ranks' skew: the profile's wait
// per collective, plus its fraction of the compute since the last one; a
// lone rank, and dp replicas that never meet, wait for nobody.
TEST(EstimateStep, BlockingCollectivesWaitOutTheRanksSkew) {
  HardwareProfile plain = hostProfile();
  HardwareProfile hw = hostProfile();
  double perSync = 1e-3, fraction = 0.1;
  hw.host->skew[2] = {perSync, fraction};
  hw.host->skew[4] = {2 * perSync, 2 * fraction};
  TransformerWork work = oneBlockWithAnAllReduce();
  Configuration config = fourRanksPerNode();
  // tp 2: two ranks, 2 threads each (180 GFLOP/s); one all-reduce after
  // the block's compute.
  config.degrees[Axis::TP] = 2;
  double compute = 60e9 / 180e9;
  StepEstimate e = estimateStep(work, config, hw);
  EXPECT_NEAR(e.commSeconds.at(Axis::TP),
              estimateStep(work, config, plain).commSeconds.at(Axis::TP) +
                  perSync + fraction * compute,
              1e-12);
  EXPECT_NEAR(e.stepSeconds - estimateStep(work, config, plain).stepSeconds,
              perSync + fraction * compute, 1e-12);
  // The same all-reduce issued in 3 row chunks: a barrier, and so a wait,
  // per chunk; the compute's fraction once.
  TransformerWork chunked = work;
  chunked.blocks[0].collectives[0].rowChunks = 3;
  chunked.blocks[0].collectives[0].rowsPerItem = 3 * 256;
  EXPECT_NEAR(estimateStep(chunked, config, hw).stepSeconds -
                  estimateStep(chunked, config, plain).stepSeconds,
              3 * perSync + fraction * compute, 1e-12);
  // tp 2 x dp 2: four ranks on the host, the figures measured for four.
  config.degrees[Axis::DP] = 2;
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds -
                  estimateStep(work, config, plain).stepSeconds,
              2 * perSync + 2 * fraction * 60e9 / 100e9, 1e-12);
  // Three ranks: the largest measured count below, two.
  config.degrees[Axis::DP] = 1, config.degrees[Axis::TP] = 3;
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds -
                  estimateStep(work, config, plain).stepSeconds,
              perSync + fraction * estimateStep(work, config, plain).computeSeconds,
              1e-12);
  // One rank; and dp 2, whose replicas never meet: no wait.
  config.degrees[Axis::TP] = 1;
  EXPECT_DOUBLE_EQ(estimateStep(work, config, hw).stepSeconds,
                   estimateStep(work, config, plain).stepSeconds);
  config.degrees[Axis::DP] = 2;
  EXPECT_DOUBLE_EQ(estimateStep(work, config, hw).stepSeconds,
                   estimateStep(work, config, plain).stepSeconds);
  // A ring shift waits at each of its hops; the compute's fraction once.
  BlockWork ring = work.blocks[0];
  ring.collectives.clear();
  CollectiveWork shift{CollectiveKind::RingShift, {Axis::Ring}, 1e3, 3};
  ring.collectives.push_back(shift);
  TransformerWork ringWork = work;
  ringWork.blocks = {ring};
  config.degrees[Axis::DP] = 1, config.degrees[Axis::Ring] = 2;
  EXPECT_NEAR(estimateStep(ringWork, config, hw).stepSeconds -
                  estimateStep(ringWork, config, plain).stepSeconds,
              3 * perSync + fraction * compute, 1e-12);
  // cfg 2 without other collectives: the step's one gather waits out the
  // skew of the whole step's compute (each rank one branch).
  TransformerWork noComm = work;
  noComm.blocks[0].collectives.clear();
  config.degrees[Axis::Ring] = 1, config.degrees[Axis::CFG] = 2;
  config.branchCalls = 2;
  EXPECT_NEAR(estimateStep(noComm, config, hw).stepSeconds -
                  estimateStep(noComm, config, plain).stepSeconds,
              perSync + fraction * compute, 1e-12);
  // cfg 2 x tp 2 (four ranks): the block's all-reduce already waited out
  // the compute's skew, so the gather adds only its wait per collective.
  config.degrees[Axis::TP] = 2;
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds -
                  estimateStep(work, config, plain).stepSeconds,
              2 * perSync + 2 * fraction * 60e9 / 100e9 + 2 * perSync, 1e-12);
}

// A pipeline's sends wait out the sending stage's skew per call.
TEST(EstimateStep, PipelineSendsWaitOutTheStagesSkew) {
  HardwareProfile plain = hostProfile();
  plain.host->cores = 2;
  HardwareProfile hw = plain;
  hw.host->skew[2] = {1e-3, 0.1};
  TransformerWork work = fourBlocks();
  Configuration config = fourRanksPerNode();
  config.degrees[Axis::PP] = 2;
  // One call: stage 0 (2 blocks at 180 GFLOP/s) then one send.
  EXPECT_NEAR(estimateStep(work, config, hw).stepSeconds -
                  estimateStep(work, config, plain).stepSeconds,
              1e-3 + 0.1 * 2 * 10e9 / 180e9, 1e-12);
}

// --- the profile's "host" section ---

json hostSection() {
  auto n = [](double v) { return json{{"value", v}, {"source", "test"}}; };
  return {{"cores", n(2)},
          {"threads",
           {{"1", {{"gemm_flops", n(1e11)}, {"attention_flops", n(5e10)},
                   {"elementwise_bandwidth", n(1e10)}}},
            {"2", {{"gemm_flops", n(1.8e11)}, {"attention_flops", n(9e10)},
                   {"elementwise_bandwidth", n(1.5e10)}}}}},
          {"collectives",
           {{"all_to_all", {{"bandwidth", n(2e9)}, {"latency", n(1e-4)}}}}}};
}

std::string withHost(const json &host) {
  HardwareProfile hw = hostProfile();
  hw.host.reset();
  json doc = json::parse(hardwareProfileToJson(hw, {}));
  doc["profiles"]["host"]["host"] = host;
  return doc.dump();
}

std::string hostError(const json &host) {
  try {
    parseHardwareProfiles(withHost(host), "p.json");
  } catch (const BadInput &e) {
    return e.what();
  }
  return "";
}

// The element-wise rate, where a profile has one, prices the element-wise
// FLOPs (one per output element) and round-trips; a profile that gives it
// for some thread counts only is refused.
TEST(HostSection, ElementwiseOpsAtTheirOwnRate) {
  json host = hostSection();
  auto n = [](double v) { return json{{"value", v}, {"source", "test"}}; };
  host["threads"]["1"]["elementwise_flops"] = n(1e9);
  host["threads"]["2"]["elementwise_flops"] = n(1.6e9);
  HardwareProfile hw = parseHardwareProfiles(withHost(host), "p.json")[0];
  ASSERT_TRUE(hw.host);
  EXPECT_DOUBLE_EQ(hw.host->elementwiseFlops.at(2), 1.6e9);
  HardwareProfile back =
      parseHardwareProfiles(hardwareProfileToJson(hw, {}), "q")[0];
  EXPECT_EQ(back.host->elementwiseFlops, hw.host->elementwiseFlops);
  // One rank on 2 cores (2 threads): 1e9 elements at 1.6e9/s, not their
  // 8e9 bytes at 1.5e10 B/s, nor at the GEMM rate.
  AchievedRates rates = achievedRates(hw, false, 1);
  EXPECT_DOUBLE_EQ(rates.flops[size_t(OpClass::Elementwise)], 1.6e9);
  ComputeWork work;
  work.add(OpClass::Elementwise, 1e9, 8e9);
  EXPECT_DOUBLE_EQ(computeSeconds(work, hw, rates), 1e9 / 1.6e9);
  // Without the rate, as before: the larger of the bytes and the GEMM rate.
  HardwareProfile plain = parseHardwareProfiles(withHost(hostSection()), "p.json")[0];
  AchievedRates old = achievedRates(plain, false, 1);
  EXPECT_DOUBLE_EQ(old.flops[size_t(OpClass::Elementwise)], 1.8e11);
  EXPECT_DOUBLE_EQ(computeSeconds(work, plain, old), 8e9 / 1.5e10);
  host["threads"]["1"].erase("elementwise_flops");
  EXPECT_NE(hostError(host).find("gives elementwise_flops for some thread counts "
                                 "but not for 1"),
            std::string::npos)
      << hostError(host);
}

TEST(HostSection, ParsesAndRoundTrips) {
  HardwareProfile hw = parseHardwareProfiles(withHost(hostSection()), "p.json")[0];
  ASSERT_TRUE(hw.host);
  EXPECT_EQ(hw.host->cores, 2);
  EXPECT_DOUBLE_EQ(hw.host->gemmFlops.at(2), 1.8e11);
  EXPECT_DOUBLE_EQ(hw.host->elementwiseBandwidth.at(1), 1e10);
  EXPECT_DOUBLE_EQ(hw.host->collectives.at(CollectiveKind::AllToAll).latency, 1e-4);
  EXPECT_EQ(hw.host->collectives.count(CollectiveKind::AllReduce), 0u);
  HardwareProfile back = parseHardwareProfiles(
      hardwareProfileToJson(hw, {{"host.threads.2.gemm_flops", "measured"}}), "q")[0];
  ASSERT_TRUE(back.host);
  EXPECT_EQ(back.host->gemmFlops, hw.host->gemmFlops);
  EXPECT_EQ(back.host->attentionFlops, hw.host->attentionFlops);
  EXPECT_DOUBLE_EQ(back.host->collectives.at(CollectiveKind::AllToAll).bandwidth, 2e9);
  // A profile without the section has none.
  HardwareProfile plain = hostProfile();
  plain.host.reset();
  EXPECT_FALSE(parseHardwareProfiles(hardwareProfileToJson(plain, {}), "r")[0].host);
}

TEST(HostSection, SkewParsesRoundTripsAndRefusesBadValues) {
  auto n = [](double v) { return json{{"value", v}, {"source", "test"}}; };
  json host = hostSection();
  host["skew"] = {{"2", {{"wait_per_sync", n(2e-4)}, {"wait_fraction", n(0.05)}}},
                  {"4", {{"wait_per_sync", n(1e-3)}, {"wait_fraction", n(0.2)}}}};
  HardwareProfile hw = parseHardwareProfiles(withHost(host), "p.json")[0];
  ASSERT_TRUE(hw.host);
  EXPECT_DOUBLE_EQ(hw.host->skew.at(4).fraction, 0.2);
  HardwareProfile back =
      parseHardwareProfiles(hardwareProfileToJson(hw, {}), "q")[0];
  EXPECT_DOUBLE_EQ(back.host->skew.at(2).perSync, 2e-4);
  EXPECT_DOUBLE_EQ(back.host->skew.at(4).fraction, 0.2);
  // The largest measured count at or below the ranks; none below 2.
  EXPECT_DOUBLE_EQ(skewOfRanks(*hw.host, 3).fraction, 0.05);
  EXPECT_DOUBLE_EQ(skewOfRanks(*hw.host, 8).fraction, 0.2);
  EXPECT_DOUBLE_EQ(skewOfRanks(*hw.host, 1).perSync, 0);
  json bad = host;
  bad["skew"]["1"] = bad["skew"]["2"];
  EXPECT_NE(hostError(bad).find("'profiles.host.host.skew.1' is not a rank count"),
            std::string::npos) << hostError(bad);
  bad = host;
  bad["skew"]["2"]["wait_fraction"]["value"] = -0.1;
  EXPECT_NE(hostError(bad).find("skew.2.wait_fraction.value' is -0.1"),
            std::string::npos) << hostError(bad);
  bad = host;
  bad["skew"]["4"].erase("wait_per_sync");
  EXPECT_NE(hostError(bad).find("skew.4.wait_per_sync"), std::string::npos)
      << hostError(bad);
  EXPECT_EQ(hostError(host), "");
}

TEST(HostSection, BadFieldsNameTheFieldAndValue) {
  json h = hostSection();
  h["threads"].erase("1");
  EXPECT_NE(hostError(h).find("field 'profiles.host.host.threads'"),
            std::string::npos) << hostError(h);
  h = hostSection();
  h["threads"]["two"] = h["threads"]["2"];
  EXPECT_NE(hostError(h).find("'profiles.host.host.threads.two'"), std::string::npos)
      << hostError(h);
  h = hostSection();
  h["threads"]["2"]["gemm_flops"]["value"] = 0;
  EXPECT_NE(hostError(h).find("'profiles.host.host.threads.2.gemm_flops.value' is 0"),
            std::string::npos) << hostError(h);
  h = hostSection();
  h["threads"]["1"].erase("attention_flops");
  EXPECT_NE(hostError(h).find("threads.1.attention_flops"), std::string::npos)
      << hostError(h);
  h = hostSection();
  h["collectives"]["broadcast"] = h["collectives"]["all_to_all"];
  EXPECT_NE(hostError(h).find("collectives.broadcast"), std::string::npos)
      << hostError(h);
  h = hostSection();
  h["collectives"]["all_to_all"]["bandwidth"]["source"] = "";
  EXPECT_NE(hostError(h).find("all_to_all.bandwidth.source"), std::string::npos)
      << hostError(h);
  h = hostSection();
  h["cores"]["value"] = 1.5;
  EXPECT_NE(hostError(h).find("cores"), std::string::npos) << hostError(h);
  EXPECT_EQ(hostError(hostSection()), "");
}

// --- calibration fits ---

TEST(FitCollective, RecoversTheLatencyAndBandwidthOfItsFormula) {
  LinkClass truth{2e9, 50e-6};
  for (CollectiveKind kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                              CollectiveKind::AllToAll, CollectiveKind::SendRecv}) {
    std::vector<TimedCollective> samples;
    for (int64_t ranks : {2, 4})
      for (double bytes : {4e3, 64e3, 512e3, 4e6})
        samples.push_back({kind, ranks, bytes,
                           collectiveSeconds(kind, bytes, ranks, truth, 1.0)});
    double error = 1;
    LinkClass fit = fitCollective(kind, samples, &error);
    EXPECT_NEAR(fit.bandwidth / truth.bandwidth, 1, 1e-9) << collectiveKindName(kind);
    EXPECT_NEAR(fit.latency / truth.latency, 1, 1e-9) << collectiveKindName(kind);
    EXPECT_LT(error, 1e-9);
  }
}

TEST(FitCollective, NegativeLatencyIsClampedAndFlatTimesRefused) {
  // Times exactly proportional to bytes minus a little: the unconstrained
  // fit's latency is negative.
  std::vector<TimedCollective> samples = {
      {CollectiveKind::SendRecv, 2, 1e3, 0.5e-6},
      {CollectiveKind::SendRecv, 2, 1e6, 1e-3}};
  LinkClass fit = fitCollective(CollectiveKind::SendRecv, samples);
  EXPECT_EQ(fit.latency, 0);
  EXPECT_GT(fit.bandwidth, 0);
  // Scattered small-message times leave the relative fit no positive slope;
  // the absolute fit, which the 4 MB message dominates, still has one (and
  // a negative latency again clamped to 0).
  std::vector<TimedCollective> scattered = {
      {CollectiveKind::SendRecv, 2, 4e3, 1e-4},
      {CollectiveKind::SendRecv, 2, 64e3, 1e-4},
      {CollectiveKind::SendRecv, 2, 500e3, 5e-5},
      {CollectiveKind::SendRecv, 2, 4e6, 1e-2}};
  LinkClass rescued = fitCollective(CollectiveKind::SendRecv, scattered);
  EXPECT_EQ(rescued.latency, 0);
  double gamma = (4e3 * 1e-4 + 64e3 * 1e-4 + 500e3 * 5e-5 + 4e6 * 1e-2) /
                 (4e3 * 4e3 + 64e3 * 64e3 + 500e3 * 500e3 + 4e6 * 4e6);
  EXPECT_NEAR(rescued.bandwidth * gamma, 1, 1e-9);
  // Times that fall as messages grow fit no bandwidth.
  std::vector<TimedCollective> falling = {
      {CollectiveKind::AllReduce, 2, 1e3, 1e-3},
      {CollectiveKind::AllReduce, 2, 1e6, 1e-6}};
  EXPECT_THROW(fitCollective(CollectiveKind::AllReduce, falling), BadInput);
}

TEST(FitSkew, SeparatesAWaitPerBarrierFromAFractionOfTheCompute) {
  // lockstep = free + barrier + 2e-4 + 0.05·free, at two chunk lengths.
  auto sample = [](double free, double perSync, double fraction) {
    return TimedSkew{2, free, free + 1e-5 + perSync + fraction * free, 1e-5};
  };
  HostRates::Skew fit = fitSkew({sample(3e-3, 2e-4, 0.05), sample(25e-3, 2e-4, 0.05)});
  EXPECT_NEAR(fit.perSync, 2e-4, 1e-12);
  EXPECT_NEAR(fit.fraction, 0.05, 1e-9);
  // A wait that shrinks with longer chunks fits no fraction: the mean wait.
  fit = fitSkew({{2, 3e-3, 3.5e-3, 0}, {2, 25e-3, 25.1e-3, 0}});
  EXPECT_EQ(fit.fraction, 0);
  EXPECT_NEAR(fit.perSync, 0.5 * (0.5e-3 + 0.1e-3), 1e-12);
  // A wait proportional to the compute with a negative intercept: no wait
  // per barrier, the fraction through the origin.
  fit = fitSkew({{2, 10e-3, 10.5e-3, 0}, {2, 20e-3, 22e-3, 0}});
  EXPECT_EQ(fit.perSync, 0);
  EXPECT_NEAR(fit.fraction, (10e-3 * 0.5e-3 + 20e-3 * 2e-3) / (1e-4 + 4e-4), 1e-9);
  // Lockstep faster than free-running (noise) waits nothing.
  fit = fitSkew({{2, 10e-3, 9e-3, 1e-5}, {2, 20e-3, 19e-3, 1e-5}});
  EXPECT_EQ(fit.perSync, 0);
  EXPECT_EQ(fit.fraction, 0);
}

json measurements() {
  json collectives = json::array();
  LinkClass link{1e9, 1e-4};
  for (CollectiveKind kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                              CollectiveKind::AllToAll, CollectiveKind::SendRecv,
                              CollectiveKind::RingShift})
    for (double bytes : {4096.0, 4194304.0})
      collectives.push_back({{"kind", collectiveKindName(kind)}, {"ranks", 2},
                             {"bytes", bytes},
                             {"seconds", collectiveSeconds(kind, bytes, 2, link, 1)}});
  return {{"format", "ditc-calibration/1"}, {"host", "box"},
          {"time", "2026-12-01T00:00:00Z"}, {"cores", 2},
          {"memory_bytes", 8e9}, {"method", "a test"},
          {"compute",
           {{{"threads", 1}, {"gemm_flops_per_s", 1e11},
             {"attention_flops_per_s", 4e10}, {"elementwise_bytes_per_s", 1e10}},
            {{"threads", 2}, {"gemm_flops_per_s", 1.6e11},
             {"attention_flops_per_s", 7e10}, {"elementwise_bytes_per_s", 1.2e10}}}},
          {"collectives", collectives}};
}

std::string calibrationError(const json &raw) {
  try {
    profileFromCalibration(raw.dump(), "raw.json", "mine");
  } catch (const BadInput &e) {
    return e.what();
  }
  return "";
}

TEST(ProfileFromCalibration, EveryNumberIsMeasuredOrSaysWhyNot) {
  CalibratedProfile c = profileFromCalibration(measurements().dump(), "raw.json", "mine");
  const HardwareProfile &p = c.profile;
  EXPECT_EQ(p.name, "mine");
  ASSERT_TRUE(p.host);
  EXPECT_EQ(p.host->cores, 2);
  EXPECT_DOUBLE_EQ(p.host->gemmFlops.at(2), 1.6e11);
  EXPECT_DOUBLE_EQ(p.peakFlopsFp32, 1.6e11);
  EXPECT_DOUBLE_EQ(p.attentionEfficiency, 7e10 / 1.6e11);
  EXPECT_DOUBLE_EQ(p.memoryBytes, 8e9);
  EXPECT_NEAR(p.host->collectives.at(CollectiveKind::AllReduce).bandwidth, 1e9, 1);
  EXPECT_NEAR(p.host->collectives.at(CollectiveKind::RingShift).latency, 1e-4, 1e-12);
  EXPECT_DOUBLE_EQ(p.intraNode.bandwidth,
                   p.host->collectives.at(CollectiveKind::SendRecv).bandwidth);
  // Written out, every number has a source naming the host and the time,
  // or saying it is an assumption; and it reads back.
  std::string text = hardwareProfileToJson(p, c.sources);
  json doc = json::parse(text);
  std::function<void(const json &, const std::string &)> check =
      [&](const json &j, const std::string &at) {
        if (j.is_object() && j.contains("value")) {
          std::string source = j.at("source");
          EXPECT_TRUE(source.find("measured by ditc calibrate on box at "
                                  "2026-12-01T00:00:00Z") != std::string::npos ||
                      source.rfind("measured:", 0) == 0 ||
                      source.rfind("assumption", 0) == 0)
              << at << ": " << source;
          return;
        }
        if (j.is_object())
          for (auto &[k, v] : j.items())
            check(v, at + "." + k);
      };
  check(doc["profiles"]["mine"], "mine");
  EXPECT_EQ(parseHardwareProfiles(text, "out.json")[0].host->gemmFlops,
            p.host->gemmFlops);
  // Measurements without skew timings (kept before dit-calibrate took
  // them) give no skew.
  EXPECT_TRUE(p.host->skew.empty());
}

TEST(ProfileFromCalibration, SkewIsFittedPerRankCount) {
  json raw = measurements();
  auto skew = [](int64_t ranks, double free, double lockstep) {
    return json{{"ranks", ranks}, {"rows", 128}, {"iterations", 48},
                {"free_seconds", free}, {"lockstep_seconds", lockstep},
                {"barrier_seconds", 1e-5}};
  };
  raw["skew"] = {skew(2, 3e-3, 3e-3 + 1e-5 + 2e-4 + 0.05 * 3e-3),
                 skew(2, 25e-3, 25e-3 + 1e-5 + 2e-4 + 0.05 * 25e-3),
                 skew(4, 6e-3, 6e-3 + 1e-5 + 1e-3),
                 skew(4, 50e-3, 50e-3 + 1e-5 + 1e-3)};
  CalibratedProfile c = profileFromCalibration(raw.dump(), "raw.json", "mine");
  ASSERT_EQ(c.profile.host->skew.size(), 2u);
  EXPECT_NEAR(c.profile.host->skew.at(2).perSync, 2e-4, 1e-12);
  EXPECT_NEAR(c.profile.host->skew.at(2).fraction, 0.05, 1e-9);
  EXPECT_NEAR(c.profile.host->skew.at(4).perSync, 1e-3, 1e-12);
  EXPECT_NEAR(c.profile.host->skew.at(4).fraction, 0, 1e-9);
  EXPECT_NE(c.sources.at("host.skew.4.wait_fraction").find("2 chunk lengths"),
            std::string::npos);
  HardwareProfile back = parseHardwareProfiles(
      hardwareProfileToJson(c.profile, c.sources), "out.json")[0];
  EXPECT_NEAR(back.host->skew.at(2).fraction, 0.05, 1e-9);
  json bad = raw;
  bad["skew"][1]["lockstep_seconds"] = 0;
  EXPECT_NE(calibrationError(bad).find("skew[1].lockstep_seconds"),
            std::string::npos) << calibrationError(bad);
  bad = raw;
  bad["skew"][0]["ranks"] = 1;
  EXPECT_NE(calibrationError(bad).find("skew[0].ranks"), std::string::npos)
      << calibrationError(bad);
  bad = raw;
  bad["skew"][2]["lockstep_seconds"] = 1.0, bad["skew"][3]["lockstep_seconds"] = 5.0;
  EXPECT_NE(calibrationError(bad).find("quieter host"), std::string::npos)
      << calibrationError(bad);
}

TEST(ProfileFromCalibration, BadMeasurementsNameTheFieldAndValue) {
  json raw = measurements();
  raw["format"] = "other/1";
  EXPECT_NE(calibrationError(raw).find("field 'format' is 'other/1'"),
            std::string::npos) << calibrationError(raw);
  raw = measurements();
  raw["compute"].erase(0);
  EXPECT_NE(calibrationError(raw).find("no entry for 1 thread"), std::string::npos)
      << calibrationError(raw);
  raw = measurements();
  raw["compute"][1]["gemm_flops_per_s"] = -1;
  EXPECT_NE(calibrationError(raw).find("compute[1].gemm_flops_per_s"),
            std::string::npos) << calibrationError(raw);
  raw = measurements();
  raw["collectives"][0]["kind"] = "broadcast";
  EXPECT_NE(calibrationError(raw).find("'broadcast'"), std::string::npos)
      << calibrationError(raw);
  raw = measurements();
  raw["collectives"].erase(0);
  EXPECT_NE(calibrationError(raw).find("fewer than two timings of all_reduce"),
            std::string::npos) << calibrationError(raw);
  raw = measurements();
  raw.erase("memory_bytes");
  EXPECT_NE(calibrationError(raw).find("memory_bytes"), std::string::npos);
  EXPECT_EQ(calibrationError(measurements()), "");
}

} // namespace
