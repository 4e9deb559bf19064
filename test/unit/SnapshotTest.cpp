//===- SnapshotTest.cpp - snapshot layouts, shard indexes and slices ------===//
#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Support/BadInput.h"

#include "ScratchDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace ditc;
using namespace ditc::checkpoint;
using nlohmann::json;

namespace {

std::string freshDir() {
  std::string pattern = ditc::test::scratchRoot("ditc-snapshot-test") + "/case.XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

void writeText(const std::string &path, const std::string &text) {
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

/// A safetensors file of F32 tensors, each filled with `base + i`.
void writeTensors(const std::string &path,
                  const std::vector<std::pair<std::string, std::vector<int64_t>>> &tensors,
                  float base = 0) {
  json header = json::object();
  std::string data;
  for (const auto &[name, shape] : tensors) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    header[name] = {{"dtype", "F32"}, {"shape", shape},
                    {"data_offsets", {data.size(), data.size() + 4 * n}}};
    for (int64_t i = 0; i < n; ++i) {
      float v = base + float(i);
      data.append(reinterpret_cast<const char *>(&v), 4);
    }
  }
  std::string text = header.dump();
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = char((uint64_t(text.size()) >> (8 * i)) & 0xff);
  writeText(path, bytes + text + data);
}

std::string snapshotRefusal(const std::string &dir) {
  try {
    Snapshot snapshot(dir);
  } catch (const BadInput &error) {
    return error.what();
  }
  return "";
}

/// A pipeline folder whose transformer/ is sharded over two files and whose
/// transformer_2/ is one file.
std::string pipeline() {
  std::string dir = freshDir();
  writeText(dir + "/model_index.json", R"({"_class_name": "WanPipeline"})");
  ::mkdir((dir + "/transformer").c_str(), 0755);
  ::mkdir((dir + "/transformer_2").c_str(), 0755);
  writeText(dir + "/transformer/config.json", R"({"num_layers": 2})");
  writeText(dir + "/transformer_2/config.json", R"({"num_layers": 2})");
  writeTensors(dir + "/transformer/a.safetensors", {{"w", {4, 6}}});
  writeTensors(dir + "/transformer/b.safetensors", {{"v", {3}}, {"u", {2}}}, 100);
  writeText(dir + "/transformer/" + kWeightsIndexFile,
            R"({"metadata": {"total_size": 116},
                "weight_map": {"w": "a.safetensors", "v": "b.safetensors",
                               "u": "b.safetensors"}})");
  writeTensors(dir + "/transformer_2/" + kWeightsFile, {{"w", {4, 6}}}, 1000);
  return dir;
}

TEST(Snapshot, ReadsAPipelineWithShardsAndTwoExperts) {
  std::string dir = pipeline();
  Snapshot snapshot(dir);
  EXPECT_EQ(snapshot.layout(), Snapshot::Layout::Pipeline);
  EXPECT_EQ(snapshot.components(),
            (std::vector<std::string>{"transformer", "transformer_2"}));
  const TransformerWeights &first = snapshot.component("transformer");
  EXPECT_EQ(first.config().at("num_layers"), 2);
  EXPECT_EQ(first.names(), (std::vector<std::string>{"u", "v", "w"}));
  EXPECT_EQ(first.files().size(), 2u);
  EXPECT_EQ(first.dataBytes(), 4 * (24 + 3 + 2));
  int64_t headers = first.bytesRead();
  EXPECT_EQ(headers, first.headerBytes());
  float out[3];
  readSpans(first.locate("v"), {{1, 2}}, out);
  EXPECT_EQ(out[0], 101.0f);
  EXPECT_EQ(out[1], 102.0f);
  EXPECT_EQ(first.bytesRead() - headers, 8);
  readSpans(snapshot.component("transformer_2").locate("w"), {{5, 1}}, out);
  EXPECT_EQ(out[0], 1005.0f);
  EXPECT_EQ(first.find("missing").tensor, nullptr);
  try {
    first.locate("missing");
    FAIL() << "a missing tensor was located";
  } catch (const BadInput &error) {
    EXPECT_NE(std::string(error.what()).find(kWeightsIndexFile), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("no tensor 'missing'"), std::string::npos);
  }
}

TEST(Snapshot, ReadsATransformerFolderAlone) {
  std::string dir = freshDir();
  writeText(dir + "/config.json", "{}");
  writeTensors(dir + "/" + kWeightsFile, {{"w", {2, 2}}});
  Snapshot snapshot(dir);
  EXPECT_EQ(snapshot.layout(), Snapshot::Layout::Transformer);
  EXPECT_TRUE(snapshot.has("transformer"));
  EXPECT_FALSE(snapshot.has("transformer_2"));
  try {
    snapshot.component("transformer_2");
    FAIL() << "a second expert was found in a transformer folder";
  } catch (const BadInput &error) {
    EXPECT_NE(std::string(error.what()).find("transformer folder alone"),
              std::string::npos);
  }
}

// huggingface_hub's cache links every file of a snapshot into its blobs/
// folder; such links are followed, and what they reach must be a regular
// file (a link to a folder is refused like the folder itself).
TEST(Snapshot, FollowsHubCacheLinks) {
  std::string dir = freshDir();
  ::mkdir((dir + "/blobs").c_str(), 0755);
  ::mkdir((dir + "/snapshot").c_str(), 0755);
  writeText(dir + "/blobs/config", "{}");
  writeTensors(dir + "/blobs/weights", {{"w", {2, 3}}});
  ASSERT_EQ(::symlink("../blobs/config", (dir + "/snapshot/config.json").c_str()), 0);
  ASSERT_EQ(::symlink("../blobs/weights", (dir + "/snapshot/" + kWeightsFile).c_str()), 0);
  Snapshot snapshot(dir + "/snapshot");
  float out[6];
  readSpans(snapshot.component("transformer").locate("w"), {{0, 6}}, out);
  EXPECT_EQ(out[5], 5.0f);
  ::unlink((dir + "/snapshot/" + kWeightsFile).c_str());
  ASSERT_EQ(::symlink("../blobs", (dir + "/snapshot/" + kWeightsFile).c_str()), 0);
  EXPECT_NE(snapshotRefusal(dir + "/snapshot")
                .find("is a folder, expected a regular safetensors file"),
            std::string::npos)
      << snapshotRefusal(dir + "/snapshot");
}

TEST(Snapshot, RefusesBrokenLayouts) {
  std::string empty = freshDir();
  EXPECT_NE(snapshotRefusal(empty).find("neither model_index.json"),
            std::string::npos);
  EXPECT_NE(snapshotRefusal(empty + "/nothing").find("is not a folder"),
            std::string::npos);

  // A transformer folder without weights.
  std::string bare = freshDir();
  writeText(bare + "/config.json", "{}");
  EXPECT_NE(snapshotRefusal(bare).find(
                "holds neither diffusion_pytorch_model.safetensors"),
            std::string::npos);

  // A missing shard names the shard file.
  std::string dir = pipeline();
  ::unlink((dir + "/transformer/b.safetensors").c_str());
  std::string message = snapshotRefusal(dir);
  EXPECT_NE(message.find("b.safetensors: no such file"), std::string::npos) << message;

  // An index entry whose shard lacks the tensor names the entry and the shard.
  dir = pipeline();
  writeTensors(dir + "/transformer/b.safetensors", {{"v", {3}}}, 100);
  message = snapshotRefusal(dir);
  EXPECT_NE(message.find("weight_map.u"), std::string::npos) << message;
  EXPECT_NE(message.find("which holds no tensor of that name"), std::string::npos)
      << message;

  // An index may not point out of its folder.
  dir = pipeline();
  writeText(dir + "/transformer/" + kWeightsIndexFile,
            R"({"weight_map": {"w": "../transformer_2/diffusion_pytorch_model.safetensors"}})");
  message = snapshotRefusal(dir);
  EXPECT_NE(message.find("must be a plain file name"), std::string::npos) << message;

  // An index without a weight_map, and a config that is not an object.
  dir = pipeline();
  writeText(dir + "/transformer/" + kWeightsIndexFile, R"({"metadata": {}})");
  EXPECT_NE(snapshotRefusal(dir).find("weight_map"), std::string::npos);
  dir = pipeline();
  writeText(dir + "/transformer_2/config.json", "[1]");
  EXPECT_NE(
      snapshotRefusal(dir).find("transformer_2/config.json: top level is"),
      std::string::npos);

  // A pipeline folder needs its transformer/.
  std::string noTransformer = freshDir();
  writeText(noTransformer + "/model_index.json", "{}");
  EXPECT_NE(snapshotRefusal(noTransformer).find("no transformer/ folder"),
            std::string::npos);
}

TEST(Snapshot, SliceSpansFollowTheTpSplit) {
  // Unsplit: one span of the whole tensor.
  EXPECT_EQ(sliceSpans({4, 6}, -1, {}, 2, 1),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 24}}));
  // Rows (column-parallel weight [out, in], split dim 0): one contiguous range.
  EXPECT_EQ(sliceSpans({4, 6}, 0, {4}, 2, 1),
            (std::vector<std::pair<int64_t, int64_t>>{{12, 12}}));
  // Two segments of 2 rows each (a gated MLP): piece 1 of each.
  EXPECT_EQ(sliceSpans({4, 6}, 0, {2, 2}, 2, 1),
            (std::vector<std::pair<int64_t, int64_t>>{{6, 6}, {18, 6}}));
  // Columns (row-parallel weight, split dim 1): one strided span per row.
  EXPECT_EQ(sliceSpans({2, 6}, 1, {6}, 2, 0),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {6, 3}}));
  // A vector split over tp (a column-parallel bias).
  EXPECT_EQ(sliceSpans({8}, 0, {8}, 4, 3),
            (std::vector<std::pair<int64_t, int64_t>>{{6, 2}}));
}

} // namespace
