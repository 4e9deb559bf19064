//===- SafeTensorsTest.cpp - the safetensors reader on good and bad files -===//
#include "ditc/Checkpoint/SafeTensors.h"
#include "ditc/Support/BadInput.h"

#include "ScratchDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace ditc;
using namespace ditc::checkpoint;

namespace {

/// A file in this process's scratch folder (ScratchDir.h).
std::string scratch(const std::string &name) {
  return ditc::test::scratchRoot("ditc-safetensors-test") + "/" + name;
}

/// Writes a safetensors file: an 8-byte header length, `header`, `data`.
std::string writeFile(const std::string &name, const std::string &header,
                      const std::string &data) {
  std::string path = scratch(name);
  std::string bytes(8, '\0');
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = char((length >> (8 * i)) & 0xff);
  bytes += header + data;
  FILE *f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values)
    out.append(reinterpret_cast<const char *>(&v), 4);
  return out;
}

std::string safeTensorsRefusal(const std::string &path) {
  try {
    SafeTensorsFile file(path);
  } catch (const BadInput &error) {
    return error.what();
  }
  return "";
}

TEST(SafeTensors, ReadsEveryStoredTypeAndSlices) {
  nlohmann::json header = {
      {"__metadata__", {{"format", "pt"}}},
      {"a", {{"dtype", "F32"}, {"shape", {2, 2}}, {"data_offsets", {0, 16}}}},
      {"b", {{"dtype", "F16"}, {"shape", {3}}, {"data_offsets", {16, 22}}}},
      {"c", {{"dtype", "BF16"}, {"shape", {2}}, {"data_offsets", {22, 26}}}}};
  // F16: 1.0 = 0x3c00, -2.5 = 0xc100, smallest subnormal 2^-24 = 0x0001.
  // BF16: 1.5 = 0x3fc0, -0.0 = 0x8000.
  std::string data = floats({1, 2, 3, 4}) +
                     std::string("\x00\x3c\x00\xc1\x01\x00", 6) +
                     std::string("\xc0\x3f\x00\x80", 4);
  std::string path = writeFile("good.safetensors", header.dump(), data);
  SafeTensorsFile file(path);
  ASSERT_EQ(file.tensors().size(), 3u);
  const StoredTensor *a = file.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 2}));
  float out[4];
  file.readFloats(*a, 1, 2, out); // a slice, as a tp rank reads its rows
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 3.0f);
  file.readFloats(*file.find("b"), 0, 3, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.5f);
  EXPECT_EQ(out[2], std::ldexp(1.0f, -24));
  file.readFloats(*file.find("c"), 0, 2, out);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_TRUE(std::signbit(out[1]) && out[1] == 0.0f);
  EXPECT_EQ(file.find("missing"), nullptr);
  EXPECT_THROW(file.readFloats(*a, 3, 2, out), BadInput);
}

TEST(SafeTensors, HalfConversionCoversEveryClass) {
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f); // largest normal
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14)); // smallest normal
  EXPECT_EQ(halfToFloat(0x03ff), 1023 * std::ldexp(1.0f, -24)); // largest subnormal
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
}

TEST(SafeTensors, RefusesBrokenFiles) {
  nlohmann::json one = {
      {"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}}};
  std::string good = writeFile("one.safetensors", one.dump(), floats({1, 2}));
  EXPECT_EQ(safeTensorsRefusal(good), "");

  // Truncated: the data is shorter than the header says.
  EXPECT_NE(safeTensorsRefusal(
                writeFile("truncated.safetensors", one.dump(), floats({1})))
                .find("ends at 8, past the 4 data bytes"),
            std::string::npos);
  // A header length past the end of the file.
  std::string path = writeFile("long-header.safetensors", "", "");
  {
    FILE *f = std::fopen(path.c_str(), "wb");
    std::fwrite("\xff\xff\x00\x00\x00\x00\x00\x00{}", 1, 10, f);
    std::fclose(f);
  }
  EXPECT_NE(safeTensorsRefusal(path).find("runs past the end"),
            std::string::npos);
  // Shorter than a header length.
  {
    FILE *f = std::fopen(path.c_str(), "wb");
    std::fwrite("\x01\x02", 1, 2, f);
    std::fclose(f);
  }
  EXPECT_NE(
      safeTensorsRefusal(path).find("shorter than the 8-byte header length"),
      std::string::npos);
  // A header that is not JSON.
  EXPECT_NE(
      safeTensorsRefusal(writeFile("not-json.safetensors", "{not json", ""))
          .find("malformed JSON"),
      std::string::npos);
  // Overlapping offsets.
  nlohmann::json overlap = {
      {"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}},
      {"b", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4, 8}}}}};
  EXPECT_NE(
      safeTensorsRefusal(
          writeFile("overlap.safetensors", overlap.dump(), floats({1, 2})))
          .find("tensor 'b' starts at data byte 4, inside tensor 'a' (data "
                "bytes 0 to 8): offsets overlap"),
      std::string::npos);
  // An overlap that also leaves a hole is reported as the overlap.
  nlohmann::json both = {
      {"a", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4, 8}}}},
      {"b", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4, 8}}}}};
  EXPECT_NE(safeTensorsRefusal(
                writeFile("both.safetensors", both.dump(), floats({1, 2})))
                .find("offsets overlap"),
            std::string::npos);
  // A hole between tensors.
  nlohmann::json hole = {
      {"a", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {0, 4}}}},
      {"b", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {8, 12}}}}};
  EXPECT_NE(safeTensorsRefusal(
                writeFile("hole.safetensors", hole.dump(), floats({1, 2, 3})))
                .find("data bytes 4 to 8, between tensor 'a' and tensor 'b', "
                      "belong to no tensor"),
            std::string::npos);
  // An unknown dtype names the tensor.
  nlohmann::json i64 = {
      {"a", {{"dtype", "I64"}, {"shape", {1}}, {"data_offsets", {0, 8}}}}};
  std::string message = safeTensorsRefusal(
      writeFile("i64.safetensors", i64.dump(), floats({1, 2})));
  EXPECT_NE(message.find("tensor 'a'"), std::string::npos);
  EXPECT_NE(message.find("'I64'"), std::string::npos);
  // A size that disagrees with the shape.
  nlohmann::json size = {
      {"a", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 8}}}}};
  EXPECT_NE(safeTensorsRefusal(
                writeFile("size.safetensors", size.dump(), floats({1, 2})))
                .find("needs 12"),
            std::string::npos);
  // A regular file only.
  EXPECT_NE(safeTensorsRefusal("/dev/zero").find("character device"),
            std::string::npos);
}

// The header is a JSON object from its first byte, padded at the end with
// spaces only: what other safetensors readers accept, and nothing else.
TEST(SafeTensors, HeaderPaddingIsSpacesOnly) {
  nlohmann::json one = {
      {"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}}};
  std::string data = floats({1, 2});
  EXPECT_EQ(safeTensorsRefusal(
                writeFile("spaces.safetensors", one.dump() + "      ", data)),
            "");
  EXPECT_NE(
      safeTensorsRefusal(
          writeFile("nul.safetensors", one.dump() + std::string(6, '\0'), data))
          .find("holds a NUL byte"),
      std::string::npos);
  EXPECT_NE(safeTensorsRefusal(
                writeFile("bom.safetensors", "\xEF\xBB\xBF" + one.dump(), data))
                .find("starts with byte 0xef"),
            std::string::npos);
  EXPECT_NE(
      safeTensorsRefusal(writeFile("lead.safetensors", " " + one.dump(), data))
          .find("starts with byte 0x20"),
      std::string::npos);
  EXPECT_NE(
      safeTensorsRefusal(writeFile("tab.safetensors", one.dump() + "\t", data))
          .find("does not end with '}'"),
      std::string::npos);
}

} // namespace

namespace {
// Two-byte types widen in place in the caller's buffer, a 4096-element chunk
// at a time; every element of a read spanning three chunks, at any offset,
// must come out as the scalar conversion says.
TEST(SafeTensors, WidensLongTwoByteReadsInPlace) {
  std::string data;
  for (int i = 0; i < 10000; ++i) {
    uint16_t half = uint16_t(0x3c00 + i), bf = uint16_t(0x3f80 + i);
    data.append(reinterpret_cast<const char *>(&half), 2);
    data.append(reinterpret_cast<const char *>(&bf), 2);
  }
  std::string halves, bfloats;
  for (int i = 0; i < 10000; ++i) {
    halves += data.substr(4 * i, 2);
    bfloats += data.substr(4 * i + 2, 2);
  }
  nlohmann::json header = {
      {"h", {{"dtype", "F16"}, {"shape", {10000}}, {"data_offsets", {0, 20000}}}},
      {"b", {{"dtype", "BF16"}, {"shape", {10000}}, {"data_offsets", {20000, 40000}}}}};
  SafeTensorsFile file(writeFile("long.safetensors", header.dump(), halves + bfloats));
  std::vector<float> out(9997);
  file.readFloats(*file.find("h"), 3, 9997, out.data());
  for (int i = 0; i < 9997; ++i)
    ASSERT_EQ(out[size_t(i)], halfToFloat(uint16_t(0x3c00 + 3 + i))) << i;
  file.readFloats(*file.find("b"), 3, 9997, out.data());
  for (int i = 0; i < 9997; ++i)
    ASSERT_EQ(out[size_t(i)], bfloat16ToFloat(uint16_t(0x3f80 + 3 + i))) << i;
  EXPECT_EQ(file.bytesRead(), 8 + int64_t(header.dump().size()) + 2 * 9997 * 2);
}
} // namespace
