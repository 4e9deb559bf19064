//===- DeploymentTest.cpp - layout groups, pipeline split, flag resolution ===//
#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/Support/BadInput.h"

#include <gtest/gtest.h>

using namespace ditc;

namespace {

Degrees degrees(std::initializer_list<std::pair<Axis, int64_t>> sizes) {
  Degrees d;
  for (auto [axis, size] : sizes)
    d[axis] = size;
  return d;
}

using Groups = std::vector<std::vector<int64_t>>;

TEST(MeshLayout, TPIsContiguousUlyssesInsideTheTPStrideRingStrided) {
  MeshLayout layout(degrees({{Axis::Ring, 2}, {Axis::Ulysses, 2}, {Axis::TP, 2}}));
  EXPECT_EQ(layout.size(), 8);
  EXPECT_EQ(layout.groups(Axis::TP), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(layout.groups(Axis::Ulysses), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(layout.groups(Axis::Ring), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(layout.groups(Axis::CFG), (Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
}

TEST(MeshLayout, CFGAndPPAreOutermost) {
  MeshLayout layout(degrees({{Axis::CFG, 2}, {Axis::PP, 2}, {Axis::TP, 2}}));
  EXPECT_EQ(layout.groups(Axis::CFG), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(layout.groups(Axis::PP), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(layout.coordinate(6, Axis::CFG), 1);
  EXPECT_EQ(layout.coordinate(6, Axis::PP), 1);
  EXPECT_EQ(layout.coordinate(6, Axis::TP), 0);
}

TEST(MeshLayout, OrderOverride) {
  MeshLayout layout(degrees({{Axis::Ulysses, 2}, {Axis::TP, 2}}),
                    {Axis::TP, Axis::Ulysses});
  EXPECT_EQ(layout.groups(Axis::Ulysses), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(layout.groups(Axis::TP), (Groups{{0, 2}, {1, 3}}));
}

TEST(PipelinePartition, RemainderGoesToTheMiddleStages) {
  EXPECT_EQ(defaultPipelinePartition(30, 4), (std::vector<int64_t>{7, 8, 8, 7}));
  EXPECT_EQ(defaultPipelinePartition(40, 4), (std::vector<int64_t>{10, 10, 10, 10}));
  EXPECT_EQ(defaultPipelinePartition(11, 4), (std::vector<int64_t>{3, 3, 3, 2}));
  EXPECT_EQ(defaultPipelinePartition(57, 2), (std::vector<int64_t>{29, 28}));
  EXPECT_TRUE(defaultPipelinePartition(3, 4).empty());
}

TEST(DeploymentFromFlags, SpDegreeResolution) {
  ParallelFlags two;
  two.sp = 2;
  Deployment d2 = deploymentFromFlags(two);
  EXPECT_EQ(d2.placements[0].degrees[Axis::KVGather], 2);
  EXPECT_EQ(d2.numGpus, 2);
  ASSERT_EQ(d2.notes.size(), 1u);

  ParallelFlags eight;
  eight.sp = 8;
  eight.tp = 2;
  Deployment d8 = deploymentFromFlags(eight);
  EXPECT_EQ(d8.placements[0].degrees[Axis::Ulysses], 8);
  EXPECT_EQ(d8.numGpus, 16);

  ParallelFlags clash;
  clash.sp = 8;
  clash.ring = 2;
  EXPECT_THROW(deploymentFromFlags(clash), BadInput);
}

TEST(DeploymentFromFlags, DataParallelReplicasAreContiguousBlocks) {
  ParallelFlags flags;
  flags.dp = 2;
  flags.tp = 2;
  Deployment d = deploymentFromFlags(flags);
  EXPECT_EQ(d.placements[0].instances, (Groups{{0, 1}, {2, 3}}));
}

} // namespace
