//===- RuntimeTest.cpp - the runtime's initializer and .npy files ---------===//
#include "ditc/Runtime/Exec/Kernels.h"
#include "ditc/Runtime/IO/Initializer.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Support/BadInput.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace ditc::runtime;

namespace {

ParamSpec spec(const std::string &name, std::vector<int64_t> shape, int splitDim = -1,
               std::vector<int64_t> segments = {}) {
  ParamSpec p;
  p.name = name;
  p.shape = std::move(shape);
  p.splitDim = splitDim;
  p.segments = std::move(segments);
  return p;
}

// A key mask: padded keys get no weight, in one pass (headAttention) and
// block by block (OnlineAttention, as ring attention absorbs the text, then
// the image blocks). A first block that is all padding must leave the online
// state finite, in float32 and bfloat16 alike.
TEST(Kernels, MaskedKeysGetNoWeightInOnePassAndBlockByBlock) {
  at::manual_seed(3);
  int64_t heads = 2, d = 4, text = 6, image = 5;
  at::Tensor q = at::randn({2, 7, heads * d}, at::kDouble);
  at::Tensor k = at::randn({2, text + image, heads * d}, at::kDouble);
  at::Tensor v = at::randn({2, text + image, heads * d}, at::kDouble);
  // Batch 0 keeps its first 4 text tokens, batch 1 none of them.
  at::Tensor mask = at::ones({2, text}, at::kFloat);
  mask[0].narrow(0, 4, 2).fill_(0);
  mask[1].fill_(0);
  double scale = 1.0 / std::sqrt(double(d));
  // Expected: plain attention over the valid keys only, per batch element.
  std::vector<at::Tensor> expected;
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<int64_t> keep;
    for (int64_t j = 0; j < text; ++j)
      if (mask[b][j].item<float>() > 0.5f)
        keep.push_back(j);
    for (int64_t j = 0; j < image; ++j)
      keep.push_back(text + j);
    at::Tensor idx = at::tensor(keep, at::kLong);
    expected.push_back(headAttention(q.narrow(0, b, 1), k.narrow(0, b, 1).index_select(1, idx),
                                     v.narrow(0, b, 1).index_select(1, idx), heads, scale));
  }
  at::Tensor want = at::cat(expected);
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    at::Tensor qd = q.to(dtype), kd = k.to(dtype), vd = v.to(dtype);
    at::Tensor textBias = keyMaskBias(mask, dtype);
    at::Tensor full = at::cat({textBias, at::zeros({2, image}, textBias.options())}, 1);
    at::Tensor onePass = headAttention(qd, kd, vd, heads, scale, full);
    OnlineAttention online(qd, heads, scale);
    online.absorb(kd.narrow(1, 0, text), vd.narrow(1, 0, text), textBias);
    online.absorb(kd.narrow(1, text, 2), vd.narrow(1, text, 2));
    online.absorb(kd.narrow(1, text + 2, image - 2), vd.narrow(1, text + 2, image - 2));
    at::Tensor blocks = online.result();
    double tolerance = dtype == at::kFloat ? 1e-5 : 5e-2;
    for (const at::Tensor &got : {onePass, blocks}) {
      EXPECT_TRUE(at::isfinite(got).all().item<bool>());
      EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), tolerance)
          << c10::toString(dtype);
    }
  }
  // The padded keys' values never reach the output.
  at::Tensor changed = v.clone();
  changed[0].narrow(0, 4, 2).fill_(1e6);
  at::Tensor bias = at::cat({keyMaskBias(mask, at::kDouble), at::zeros({2, image}, at::kDouble)}, 1);
  EXPECT_TRUE(at::equal(headAttention(q, k, v, heads, scale, bias).narrow(0, 0, 1),
                        headAttention(q, k, changed, heads, scale, bias).narrow(0, 0, 1)));
}

// Every tp slice is bit-identical to the same rows or columns of the whole
// tensor: column-parallel (dim 0), row-parallel (dim 1), and a gated MLP's
// two segments, each split separately.
TEST(Initializer, SlicesAreBitIdenticalToTheWholeTensor) {
  for (int64_t tp : {2, 4}) {
    at::Tensor whole = drawParameter(7, spec("w", {24, 16}), 1, 0);
    for (int64_t t = 0; t < tp; ++t) {
      at::Tensor column = drawParameter(7, spec("w", {24, 16}, 0, {24}), tp, t);
      EXPECT_TRUE(at::equal(column, whole.narrow(0, t * 24 / tp, 24 / tp)));
      at::Tensor row = drawParameter(7, spec("w", {24, 16}, 1, {16}), tp, t);
      EXPECT_TRUE(at::equal(row, whole.narrow(1, t * 16 / tp, 16 / tp)));
      at::Tensor gated = drawParameter(7, spec("w", {24, 16}, 0, {8, 16}), tp, t);
      at::Tensor expected = at::cat({whole.narrow(0, t * 8 / tp, 8 / tp),
                                     whole.narrow(0, 8 + t * 16 / tp, 16 / tp)});
      EXPECT_TRUE(at::equal(gated, expected));
    }
  }
}

TEST(Initializer, ScaleBaseAndKeysFollowTheSpec) {
  at::Tensor norm = drawParameter(0, spec("blocks.0.norm.weight", {4096}), 1, 0);
  EXPECT_NEAR(norm.mean().item<double>(), 1.0, 0.01);
  EXPECT_NEAR(norm.std().item<double>(), 0.1, 0.01);
  at::Tensor matrix = drawParameter(0, spec("m", {256, 1024}), 1, 0);
  EXPECT_NEAR(matrix.std().item<double>(), 0.5 / 32.0, 0.001);
  // Another seed or name is another stream.
  EXPECT_FALSE(at::equal(drawParameter(1, spec("m", {256, 1024}), 1, 0), matrix));
  EXPECT_FALSE(at::equal(drawParameter(0, spec("n", {256, 1024}), 1, 0), matrix));
  // Keys are stable and seed-dependent. (Agreement with NumPy's copy of the
  // formula is checked end to end by test/Runtime/parity-*.test.)
  EXPECT_EQ(streamKey(0, "noise"), streamKey(0, "noise"));
  EXPECT_NE(streamKey(0, "noise"), streamKey(1, "noise"));
  // SHA-256("0:noise") starts 6e 3c 68 3c c3 8d ed 6b: the key is those
  // eight bytes read little-endian.
  EXPECT_EQ(streamKey(0, "noise"), 0x6bed8dc33c683c6eull);
}

TEST(Initializer, RowParallelBiasIsZeroOffCoordinateZero) {
  ParamSpec bias = spec("b", {32});
  bias.onlyOnTpZero = true;
  EXPECT_TRUE(at::equal(drawParameter(0, bias, 2, 0), drawParameter(0, spec("b", {32}), 1, 0)));
  EXPECT_EQ(drawParameter(0, bias, 2, 1).abs().sum().item<float>(), 0.0f);
}

TEST(Npy, RoundTripsAndRefusesBadFiles) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1.0f};
  std::string bytes = encodeNpy({2, 3}, values.data());
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ((bytes.size() - values.size() * 4) % 64, 0u); // header padded to 64
  std::string path = ::testing::TempDir() + "/roundtrip.npy";
  std::ofstream(path, std::ios::binary) << bytes;
  NpyArray array = readNpy(path);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.data, values);

  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  EXPECT_THROW(readNpy(path), ditc::BadInput);
  std::ofstream(path, std::ios::binary) << "plain text";
  EXPECT_THROW(readNpy(path), ditc::BadInput);
  std::remove(path.c_str());
}

} // namespace
