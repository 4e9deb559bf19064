//===- VaeTest.cpp - AutoencoderKL config, parameters and PNG output ------===//
#include "ditc/Runtime/IO/Png.h"
#include "ditc/Runtime/Vae/AutoencoderKL.h"
#include "ditc/Support/BadInput.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

using namespace ditc;
using namespace ditc::runtime;

namespace {

nlohmann::json tinyConfig() {
  return {{"_class_name", "AutoencoderKL"},
          {"latent_channels", 4},
          {"block_out_channels", {8, 16}},
          {"up_block_types", {"UpDecoderBlock2D", "UpDecoderBlock2D"}},
          {"layers_per_block", 1},
          {"norm_num_groups", 4},
          {"use_post_quant_conv", false},
          {"scaling_factor", 0.5},
          {"shift_factor", 0.25}};
}

TEST(Png, ConvertsAsDiffusersImageProcessor) {
  EXPECT_EQ(pixelToByte(-1.0f), 0);
  EXPECT_EQ(pixelToByte(1.0f), 255);
  EXPECT_EQ(pixelToByte(-3.0f), 0);
  EXPECT_EQ(pixelToByte(7.0f), 255);
  EXPECT_EQ(pixelToByte(std::numeric_limits<float>::quiet_NaN()), 0);
  // x = 0 gives exactly 127.5, which NumPy's round takes to the even 128
  // (rounding half away from zero would also give 128; 127.5 is the one
  // exact tie the transform can produce, so test the neighbours too).
  EXPECT_EQ(pixelToByte(0.0f), 128);
  EXPECT_EQ(pixelToByte(2.0f * (127.4f / 255.0f) - 1.0f), 127);
  EXPECT_EQ(pixelToByte(2.0f * (127.6f / 255.0f) - 1.0f), 128);
}

TEST(Png, WritesSignatureHeaderAndEnd) {
  std::string png = encodePngRgb8(2, 3, std::vector<uint8_t>(18, 7));
  ASSERT_GT(png.size(), 8u + 25 + 12);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(png.substr(png.size() - 8, 4), "IEND");
  EXPECT_THROW(encodePngRgb8(2, 3, std::vector<uint8_t>(17)), std::invalid_argument);
  EXPECT_EQ(batchImagePath("a/out.png", 0), "a/out.png");
  EXPECT_EQ(batchImagePath("a/out.png", 2), "a/out-2.png");
}

TEST(AutoencoderKL, ListsEveryDecoderParameterOnce) {
  AutoencoderKLConfig config = parseAutoencoderKLConfig(tinyConfig(), "vae/config.json");
  EXPECT_EQ(config.spatialCompression(), 2);
  std::vector<VaeParameter> params = autoencoderKLDecoderParameters(config);
  std::set<std::string> names;
  for (const VaeParameter &p : params)
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
  EXPECT_EQ(names.count("post_quant_conv.weight"), 0u);
  EXPECT_EQ(names.count("decoder.mid_block.attentions.0.to_out.0.weight"), 1u);
  // Up block 1 narrows 16 -> 8 channels: its first resnet has a shortcut.
  EXPECT_EQ(names.count("decoder.up_blocks.1.resnets.0.conv_shortcut.weight"), 1u);
  EXPECT_EQ(names.count("decoder.up_blocks.1.resnets.1.conv_shortcut.weight"), 0u);
  // Only blocks before the last upsample.
  EXPECT_EQ(names.count("decoder.up_blocks.0.upsamplers.0.conv.weight"), 1u);
  EXPECT_EQ(names.count("decoder.up_blocks.1.upsamplers.0.conv.weight"), 0u);
}

TEST(AutoencoderKL, DecodesSeededWeightsToTheCompressedSize) {
  AutoencoderKLConfig config = parseAutoencoderKLConfig(tinyConfig(), "vae/config.json");
  VaeParameters params =
      seededVaeParameters(autoencoderKLDecoderParameters(config), 3);
  at::Tensor latents = at::zeros({1, 4, 3, 5});
  at::Tensor pixels =
      decodeAutoencoderKL(config, params, denormalizeLatents(config, latents));
  EXPECT_EQ(pixels.sizes().vec(), (std::vector<int64_t>{1, 3, 6, 10}));
  EXPECT_TRUE(at::isfinite(pixels).all().item<bool>());
}

TEST(AutoencoderKL, RefusesImpossibleConfigsNamingTheField) {
  auto refuses = [](nlohmann::json config, const std::string &needle) {
    try {
      parseAutoencoderKLConfig(config, "vae/config.json");
      ADD_FAILURE() << "accepted " << config.dump();
    } catch (const BadInput &error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
          << error.what();
    }
  };
  nlohmann::json c = tinyConfig();
  c["norm_num_groups"] = 3;
  refuses(c, "norm_num_groups 3 does not divide");
  c = tinyConfig();
  c["latent_channels"] = 0;
  refuses(c, "latent_channels");
  c = tinyConfig();
  c["up_block_types"] = {"UpDecoderBlock2D"};
  refuses(c, "up_block_types");
  c = tinyConfig();
  c["up_block_types"][1] = "AttnUpDecoderBlock2D";
  refuses(c, "up_block_types[1]");
  c = tinyConfig();
  c["act_fn"] = "gelu";
  refuses(c, "act_fn");
  c = tinyConfig();
  c["_class_name"] = "AutoencoderKLWan";
  refuses(c, "_class_name");
  c = tinyConfig();
  c["scaling_factor"] = 0.0;
  refuses(c, "scaling_factor");
}

} // namespace
