//===- TextTest.cpp - text encoder configs, tokenizers, encoders ----------===//
#include "ditc/Runtime/Text/ClipTokenizer.h"
#include "ditc/Runtime/Text/PipelinePrompts.h"
#include "ditc/Runtime/Text/SpecialTokens.h"
#include "ditc/Runtime/Text/TextEncoders.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Text/EncoderConfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace ditc;
using namespace ditc::runtime;

namespace {

nlohmann::json t5Json() {
  return {{"model_type", "t5"}, {"vocab_size", 50}, {"d_model", 8}, {"d_kv", 3},
          {"d_ff", 12},         {"num_layers", 2},  {"num_heads", 2},
          {"feed_forward_proj", "gated-gelu"}};
}

nlohmann::json clipJson() {
  return {{"model_type", "clip_text_model"}, {"vocab_size", 40}, {"hidden_size", 8},
          {"intermediate_size", 16}, {"num_hidden_layers", 2}, {"num_attention_heads", 2},
          {"max_position_embeddings", 10}, {"projection_dim", 6}, {"eos_token_id", 39}};
}

/// The bucket as transformers computes it, in float32 tensors (a second
/// transcription, through ATen's log rather than libm's).
int64_t torchBucket(int64_t key, int64_t query, int64_t buckets, int64_t maxDistance) {
  int64_t half = buckets / 2, exact = half / 2;
  int64_t relative = key - query;
  int64_t out = relative > 0 ? half : 0;
  int64_t distance = std::llabs(relative);
  if (distance < exact)
    return out + distance;
  at::Tensor d = at::full({1}, float(distance));
  at::Tensor large = (at::log(d / float(exact)) / std::log(double(maxDistance) / exact) *
                      float(half - exact))
                         .to(at::kLong) +
                     exact;
  return out + std::min(large.item<int64_t>(), half - 1);
}

} // namespace

TEST(TextEncoderConfig, ListsTransformersNamesAndShapes) {
  text::TextEncoderConfig t5 =
      text::parseTextEncoderConfig(t5Json(), "T5EncoderModel", "t5/config.json");
  EXPECT_TRUE(t5.t5.gated);
  EXPECT_EQ(t5.t5.activation, "gelu_new");
  std::set<std::string> names;
  for (const auto &p : text::encoderParameters(t5))
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
  // T5 keeps one bias table, in the first layer; UMT5 one per layer.
  EXPECT_TRUE(names.count("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"));
  EXPECT_FALSE(names.count("encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"));
  nlohmann::json umt5 = t5Json();
  umt5["model_type"] = "umt5";
  text::TextEncoderConfig u =
      text::parseTextEncoderConfig(umt5, "UMT5EncoderModel", "u/config.json");
  int biases = 0;
  for (const auto &p : text::encoderParameters(u))
    biases += p.name.find("relative_attention_bias") != std::string::npos;
  EXPECT_EQ(biases, 2);
  text::TextEncoderConfig clip =
      text::parseTextEncoderConfig(clipJson(), "CLIPTextModelWithProjection", "c/config.json");
  EXPECT_EQ(text::encoderParameters(clip).back().name, "text_projection.weight");
  EXPECT_EQ(text::encoderParameters(clip).back().shape, (std::vector<int64_t>{6, 8}));
}

TEST(TextEncoderConfig, RefusesWhatItCannotRun) {
  auto refused = [](nlohmann::json config, const std::string &cls, const std::string &needle) {
    try {
      text::parseTextEncoderConfig(config, cls, "x/config.json");
      ADD_FAILURE() << "accepted " << config.dump();
    } catch (const BadInput &error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("x/config.json"), std::string::npos);
    }
  };
  refused(t5Json(), "UMT5EncoderModel", "model_type");
  refused(t5Json(), "Qwen2_5_VLForConditionalGeneration", "cannot run");
  nlohmann::json c = t5Json();
  c["feed_forward_proj"] = "gated-silu";
  refused(c, "T5EncoderModel", "feed_forward_proj");
  c = t5Json();
  c["d_model"] = -1;
  refused(c, "T5EncoderModel", "d_model");
  c = clipJson();
  c["num_attention_heads"] = 3;
  refused(c, "CLIPTextModel", "num_attention_heads");
  c = clipJson();
  c["eos_token_id"] = 40;
  refused(c, "CLIPTextModel", "eos_token_id");
}

TEST(TextEncoderConfig, RelativeBucketsMatchTheFloat32Formula) {
  for (auto [buckets, distance] : {std::pair<int64_t, int64_t>{32, 128}, {16, 64}, {8, 32}, {32, 64}})
    for (int64_t key = 0; key < 600; key += 1)
      for (int64_t query : {int64_t(0), int64_t(300)})
        ASSERT_EQ(text::t5RelativeBucket(key, query, buckets, distance),
                  torchBucket(key, query, buckets, distance))
            << buckets << " " << distance << " key " << key << " query " << query;
  // Exact buckets near the diagonal, one direction per half.
  EXPECT_EQ(text::t5RelativeBucket(3, 0, 32, 128), 16 + 3);
  EXPECT_EQ(text::t5RelativeBucket(0, 3, 32, 128), 3);
  EXPECT_EQ(text::t5RelativeBucket(1000, 0, 32, 128), 31);
}

TEST(ClipTokenizer, NormalizesAsTransformersBasicTokenizer) {
  EXPECT_EQ(ClipTokenizer::normalize("  A  Photo\tOF\nA CAT  "), "a photo of a cat");
  // Control and format characters dropped; NFC composes; CJK spaced.
  EXPECT_EQ(ClipTokenizer::normalize("a\x07" "b\xe2\x80\x8b" "c"), "abc");
  EXPECT_EQ(ClipTokenizer::normalize(std::string("a\0b\xef\xbf\xbd" "c", 7)), "abc");
  EXPECT_EQ(ClipTokenizer::normalize("cafe\xcc\x81"), "caf\xc3\xa9");
  EXPECT_EQ(ClipTokenizer::normalize("\xe6\x9d\xb1\xe4\xba\xac"), "\xe6\x9d\xb1 \xe4\xba\xac");
  // Full lower-case mapping, final sigma included.
  EXPECT_EQ(ClipTokenizer::normalize("\xce\xa3\xce\x9f\xce\xa3"), "\xcf\x83\xce\xbf\xcf\x82");
}

TEST(SpecialTokens, SplitLongestFirstLeftmost) {
  auto pieces = splitOnSpecialTokens("a<|end|>b<|endoftext|>", {"<|end|>", "<|endoftext|>", "<|e"});
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[1].text, "<|end|>");
  EXPECT_TRUE(pieces[1].special);
  EXPECT_EQ(pieces[3].text, "<|endoftext|>");
  EXPECT_TRUE(splitOnSpecialTokens("", {"x"}).empty());
}

TEST(TextEncoders, T5MaskKeepsPaddingOutOfRealTokens) {
  // A masked run's real rows must not depend on what the padding holds.
  text::TextEncoderConfig config =
      text::parseTextEncoderConfig(t5Json(), "T5EncoderModel", "t5/config.json");
  EncoderParameters params;
  at::manual_seed(0);
  for (const auto &p : text::encoderParameters(config))
    params[p.name] = at::randn(p.shape) * 0.3;
  at::Tensor ids = at::tensor({5, 9, 1, 0, 0}, at::kLong).view({1, 5});
  at::Tensor other = at::tensor({5, 9, 1, 7, 3}, at::kLong).view({1, 5});
  at::Tensor mask = at::tensor({1, 1, 1, 0, 0}, at::kLong).view({1, 5});
  at::Tensor a = runTextEncoder(config, params, ids, mask).last;
  at::Tensor b = runTextEncoder(config, params, other, mask).last;
  EXPECT_TRUE(at::equal(a.narrow(1, 0, 3), b.narrow(1, 0, 3)));
  // Unmasked (FLUX, SD3), the padding is attended to.
  at::Tensor c = runTextEncoder(config, params, ids, at::Tensor()).last;
  at::Tensor d = runTextEncoder(config, params, other, at::Tensor()).last;
  EXPECT_FALSE(at::allclose(c.narrow(1, 0, 3), d.narrow(1, 0, 3)));
}

TEST(TextEncoders, ClipPoolsAtTheEosToken) {
  text::TextEncoderConfig config =
      text::parseTextEncoderConfig(clipJson(), "CLIPTextModel", "c/config.json");
  EncoderParameters params;
  at::manual_seed(1);
  for (const auto &p : text::encoderParameters(config))
    params[p.name] = at::randn(p.shape) * 0.3;
  // eos_token_id 39: the first 39, not the largest id.
  at::Tensor ids = at::tensor({38, 4, 39, 39, 12}, at::kLong).view({1, 5});
  EncoderOutputs out = runTextEncoder(config, params, ids, at::Tensor());
  EXPECT_TRUE(at::equal(out.pooled[0], out.last[0][2]));
  // The legacy eos_token_id 2 pools at the largest id.
  nlohmann::json legacy = clipJson();
  legacy["eos_token_id"] = 2;
  config = text::parseTextEncoderConfig(legacy, "CLIPTextModel", "c/config.json");
  ids = at::tensor({38, 4, 2, 39, 12}, at::kLong).view({1, 5});
  out = runTextEncoder(config, params, ids, at::Tensor());
  EXPECT_TRUE(at::equal(out.pooled[0], out.last[0][3]));
}

TEST(PipelinePrompts, WanCleansAsThePipeline) {
  // Expected values from Python: html.unescape twice, strip, regex's \s+
  // to one space, strip (diffusers' prompt_clean without ftfy).
  EXPECT_EQ(PipelinePrompts::wanPromptClean("  a &amp;amp; b\011\012 c &#39;d&#x27; "),
            "a & b c 'd'");
  EXPECT_EQ(PipelinePrompts::wanPromptClean("caf&eacute; &amp &#150; &#x1; &notit; &#1234567890; &#0; &#x80; &#13;x"),
            "caf\303\251 & \342\200\223 \302\254it; \357\277\275 \357\277\275 \342\202\254 x");
  EXPECT_EQ(PipelinePrompts::wanPromptClean("&#x; &#; &; && &amp;amp;lt; &AElig &lt"),
            "&#x; &#; &; && &lt; \303\206 <");
  EXPECT_EQ(PipelinePrompts::wanPromptClean("\034 a\034b \343\200\200c\342\201\237d\037"),
            "a\034b c d");
  EXPECT_EQ(PipelinePrompts::wanPromptClean("&Aacute;&aacute;&NotNestedGreaterGreater;&supsetneqq;"),
            "\303\201\303\241\342\252\242\314\270\342\253\214");
  EXPECT_EQ(PipelinePrompts::wanPromptClean("&thetasym;&thetasymx &emsp13; &zzzz;"),
            "\317\221&thetasymx &zzzz;");
  EXPECT_EQ(PipelinePrompts::wanPromptClean(""),
            "");
}
