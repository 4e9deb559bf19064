//===- WorkloadTest.cpp - token counts from resolution and VAE ------------===//
#include "ditc/Importer/LoadModel.h"
#include "ditc/Support/BadInput.h"

#include <gtest/gtest.h>

using namespace ditc;

namespace {

ModelSpec bundled(const std::string &name) {
  return loadModel(std::string(DITC_TEST_MODELS_DIR) + "/" + name);
}

TEST(Workload, WanTokensAt832x480x81) {
  Workload w = resolveWorkload(bundled("wan2.1-t2v-14b"),
                               {480, 832, 81, std::nullopt, std::nullopt, std::nullopt});
  EXPECT_EQ(w.latentFrames, 21);
  EXPECT_EQ(w.grid[1], 30);
  EXPECT_EQ(w.grid[2], 52);
  EXPECT_EQ(w.imageTokens, 32760);
  EXPECT_EQ(w.textTokens, 512);
  EXPECT_EQ(w.branches, 2);
}

TEST(Workload, FluxDevIsGuidanceDistilled) {
  Workload w = resolveWorkload(bundled("flux.1-dev"), {});
  EXPECT_EQ(w.imageTokens, 4096);
  EXPECT_EQ(w.branches, 1);
}

TEST(Workload, SnapshotVaeOverridesFamilyCompression) {
  ModelSpec spec = bundled("wan2.2-ti2v-5b");
  EXPECT_EQ(spec.vaeSpatial, 16);
  EXPECT_NE(spec.vaeSource.find("vae/config.json"), std::string::npos);
  Workload w = resolveWorkload(spec, {704, 1280, 121, std::nullopt,
                                      std::nullopt, std::nullopt});
  EXPECT_EQ(w.imageTokens, 31 * 22 * 40);
}

TEST(Workload, TransformerConfigAloneUsesFamilyCompression) {
  ModelSpec spec = loadModel(std::string(DITC_TEST_MODELS_DIR) +
                             "/ltx-video/transformer/config.json");
  EXPECT_EQ(spec.vaeSpatial, 32);
  EXPECT_EQ(spec.vaeTemporal, 8);
  EXPECT_EQ(spec.vaeSource, "family default");
}

TEST(Workload, RejectsIndivisibleResolutionWithNearestValues) {
  try {
    resolveWorkload(bundled("wan2.1-t2v-14b"),
                    {481, std::nullopt, std::nullopt, std::nullopt,
                     std::nullopt, std::nullopt});
    FAIL() << "expected BadInput";
  } catch (const BadInput &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("--height 481 is not divisible by 16"),
              std::string::npos) << message;
    EXPECT_NE(message.find("480 or 496"), std::string::npos) << message;
  }
}

TEST(Workload, RejectsActivationOverflow) {
  EXPECT_THROW(resolveWorkload(bundled("wan2.1-t2v-14b"),
                               {65536, 65536, 99997, 4096, std::nullopt,
                                std::nullopt}),
               BadInput);
}

} // namespace
