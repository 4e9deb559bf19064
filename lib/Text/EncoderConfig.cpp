//===- EncoderConfig.cpp - a text encoder's config.json -------------------===//
#include "ditc/Text/EncoderConfig.h"

#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>

namespace ditc::text {

namespace {

// Bounds that keep a hostile config from asking for absurd allocations
// before a single tensor is read. UMT5-XXL's vocabulary is 256384 and its
// d_ff 10240; CLIP-G's width 1280.
constexpr int64_t kMaxVocab = 1 << 20;
constexpr int64_t kMaxWidth = 1 << 16;
constexpr int64_t kMaxLayers = 256;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxPositions = 1 << 16;

void expectModelType(const JsonObject &object, const std::string &className,
                     std::initializer_list<const char *> allowed) {
  std::string type = object.getString("model_type");
  std::string list;
  for (const char *name : allowed) {
    if (type == name)
      return;
    list += std::string(list.empty() ? "" : " or ") + name;
  }
  object.fail("model_type", "does not match the class " + className +
                                " that model_index.json names; expected " + list);
}

T5Config parseT5(const JsonObject &object, bool umt5) {
  T5Config config;
  config.path = object.file();
  config.umt5 = umt5;
  config.vocabSize = object.getInt("vocab_size", 1, kMaxVocab);
  config.dModel = object.getInt("d_model", 1, kMaxWidth);
  config.dKv = object.getInt("d_kv", 1, kMaxWidth);
  config.dFf = object.getInt("d_ff", 1, kMaxWidth * 4);
  config.numLayers = object.getInt("num_layers", 1, kMaxLayers);
  config.numHeads = object.getInt("num_heads", 1, kMaxHeads);
  config.buckets =
      object.getOptionalInt("relative_attention_num_buckets", 2, 4096).value_or(32);
  if (config.buckets % 4 != 0)
    object.fail("relative_attention_num_buckets",
                "must divide by 4 (half the buckets per direction, half of "
                "those exact)");
  config.maxDistance =
      object.getOptionalInt("relative_attention_max_distance", 1, kMaxPositions)
          .value_or(128);
  if (config.maxDistance <= config.buckets / 4)
    object.fail("relative_attention_max_distance",
                "must exceed the exact buckets per direction (" +
                    std::to_string(config.buckets / 4) + ")");
  config.eps = object.getOptionalDouble("layer_norm_epsilon", 1e-6, 1e-30, 1.0);
  // transformers' defaults: T5Config "relu", UMT5Config "gated-gelu".
  std::string proj =
      object.getOptionalString("feed_forward_proj").value_or(umt5 ? "gated-gelu" : "relu");
  std::string act = proj;
  config.gated = proj.rfind("gated-", 0) == 0;
  if (config.gated)
    act = proj.substr(6);
  // transformers maps "gated-gelu" to the tanh GELU for backward
  // compatibility with the original T5 v1.1 code.
  if (proj == "gated-gelu")
    act = "gelu_new";
  if (act != "gelu_new" && act != "gelu" && act != "relu")
    object.fail("feed_forward_proj",
                "is not supported; expected relu, gated-gelu, gated-gelu_new, "
                "gated-relu or gelu");
  config.activation = act;
  return config;
}

ClipTextConfig parseClip(const JsonObject &object, bool withProjection) {
  ClipTextConfig config;
  config.path = object.file();
  config.withProjection = withProjection;
  config.vocabSize = object.getInt("vocab_size", 1, kMaxVocab);
  config.hidden = object.getInt("hidden_size", 1, kMaxWidth);
  config.intermediate = object.getInt("intermediate_size", 1, kMaxWidth * 4);
  config.numLayers = object.getInt("num_hidden_layers", 1, kMaxLayers);
  config.numHeads = object.getInt("num_attention_heads", 1, kMaxHeads);
  if (config.hidden % config.numHeads != 0)
    object.fail("num_attention_heads",
                "does not divide hidden_size " + std::to_string(config.hidden));
  config.maxPositions =
      object.getOptionalInt("max_position_embeddings", 1, kMaxPositions).value_or(77);
  config.projectionDim =
      object.getOptionalInt("projection_dim", 1, kMaxWidth).value_or(512);
  // CLIPTextConfig's default is 49407, CLIP's <|endoftext|>.
  config.eosTokenId =
      object.getOptionalInt("eos_token_id", 0, kMaxVocab - 1).value_or(49407);
  if (config.eosTokenId >= config.vocabSize)
    object.fail("eos_token_id",
                "is not below vocab_size " + std::to_string(config.vocabSize));
  config.eps = object.getOptionalDouble("layer_norm_eps", 1e-5, 1e-30, 1.0);
  config.activation = object.getOptionalString("hidden_act").value_or("quick_gelu");
  if (config.activation != "quick_gelu" && config.activation != "gelu" &&
      config.activation != "gelu_new")
    object.fail("hidden_act", "is not supported; expected quick_gelu, gelu or gelu_new");
  return config;
}

} // namespace

const char *encoderClassName(EncoderClass kind) {
  switch (kind) {
  case EncoderClass::T5:
    return "T5EncoderModel";
  case EncoderClass::UMT5:
    return "UMT5EncoderModel";
  case EncoderClass::Clip:
    return "CLIPTextModel";
  case EncoderClass::ClipWithProjection:
    return "CLIPTextModelWithProjection";
  }
  return "?";
}

bool isModeledTextEncoderClass(const std::string &className) {
  for (EncoderClass kind : {EncoderClass::T5, EncoderClass::UMT5, EncoderClass::Clip,
                            EncoderClass::ClipWithProjection})
    if (className == encoderClassName(kind))
      return true;
  return false;
}

TextEncoderConfig parseTextEncoderConfig(const nlohmann::json &json,
                                         const std::string &className,
                                         const std::string &path) {
  if (!json.is_object())
    badFile(path, "is not a JSON object");
  JsonObject object(path, &json);
  TextEncoderConfig config;
  if (className == "T5EncoderModel") {
    expectModelType(object, className, {"t5"});
    config.kind = EncoderClass::T5;
    config.t5 = parseT5(object, false);
  } else if (className == "UMT5EncoderModel") {
    expectModelType(object, className, {"umt5"});
    config.kind = EncoderClass::UMT5;
    config.t5 = parseT5(object, true);
  } else if (className == "CLIPTextModel" || className == "CLIPTextModelWithProjection") {
    expectModelType(object, className, {"clip_text_model"});
    config.kind = className == "CLIPTextModel" ? EncoderClass::Clip
                                                : EncoderClass::ClipWithProjection;
    config.clip = parseClip(object, config.kind == EncoderClass::ClipWithProjection);
  } else {
    badFile(path, "belongs to a text encoder of class '" + escapeInvalidUtf8(className) +
                      "', which ditc cannot run; supported: T5EncoderModel, "
                      "UMT5EncoderModel, CLIPTextModel, CLIPTextModelWithProjection");
  }
  return config;
}

std::vector<EncoderParameter> encoderParameters(const TextEncoderConfig &config) {
  std::vector<EncoderParameter> list;
  if (config.isT5()) {
    const T5Config &c = config.t5;
    list.push_back({"shared.weight", {c.vocabSize, c.dModel}});
    for (int64_t i = 0; i < c.numLayers; ++i) {
      std::string block = "encoder.block." + std::to_string(i) + ".";
      std::string attn = block + "layer.0.SelfAttention.";
      list.push_back({block + "layer.0.layer_norm.weight", {c.dModel}});
      for (const char *proj : {"q", "k", "v"})
        list.push_back({attn + proj + ".weight", {c.innerDim(), c.dModel}});
      list.push_back({attn + "o.weight", {c.dModel, c.innerDim()}});
      if (i == 0 || c.umt5)
        list.push_back({attn + "relative_attention_bias.weight", {c.buckets, c.numHeads}});
      std::string ff = block + "layer.1.DenseReluDense.";
      list.push_back({block + "layer.1.layer_norm.weight", {c.dModel}});
      if (c.gated) {
        list.push_back({ff + "wi_0.weight", {c.dFf, c.dModel}});
        list.push_back({ff + "wi_1.weight", {c.dFf, c.dModel}});
      } else {
        list.push_back({ff + "wi.weight", {c.dFf, c.dModel}});
      }
      list.push_back({ff + "wo.weight", {c.dModel, c.dFf}});
    }
    list.push_back({"encoder.final_layer_norm.weight", {c.dModel}});
    return list;
  }
  const ClipTextConfig &c = config.clip;
  auto linear = [&](const std::string &name, int64_t out, int64_t in) {
    list.push_back({name + ".weight", {out, in}});
    list.push_back({name + ".bias", {out}});
  };
  auto norm = [&](const std::string &name) {
    list.push_back({name + ".weight", {c.hidden}});
    list.push_back({name + ".bias", {c.hidden}});
  };
  list.push_back({"text_model.embeddings.token_embedding.weight", {c.vocabSize, c.hidden}});
  list.push_back({"text_model.embeddings.position_embedding.weight", {c.maxPositions, c.hidden}});
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string layer = "text_model.encoder.layers." + std::to_string(i) + ".";
    norm(layer + "layer_norm1");
    for (const char *proj : {"q_proj", "k_proj", "v_proj", "out_proj"})
      linear(layer + "self_attn." + proj, c.hidden, c.hidden);
    norm(layer + "layer_norm2");
    linear(layer + "mlp.fc1", c.intermediate, c.hidden);
    linear(layer + "mlp.fc2", c.hidden, c.intermediate);
  }
  norm("text_model.final_layer_norm");
  if (c.withProjection)
    list.push_back({"text_projection.weight", {c.projectionDim, c.hidden}});
  return list;
}

static bool endsWith(const std::string &name, const char *suffix) {
  size_t n = std::strlen(suffix);
  return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
}

int encoderShardDim(const std::string &name) {
  for (const char *column :
       {"SelfAttention.q.weight", "SelfAttention.k.weight", "SelfAttention.v.weight",
        "DenseReluDense.wi.weight", "DenseReluDense.wi_0.weight", "DenseReluDense.wi_1.weight",
        "self_attn.q_proj.weight", "self_attn.q_proj.bias", "self_attn.k_proj.weight",
        "self_attn.k_proj.bias", "self_attn.v_proj.weight", "self_attn.v_proj.bias",
        "mlp.fc1.weight", "mlp.fc1.bias"})
    if (endsWith(name, column))
      return 0;
  for (const char *row : {"SelfAttention.o.weight", "DenseReluDense.wo.weight",
                          "self_attn.out_proj.weight", "mlp.fc2.weight",
                          "relative_attention_bias.weight"})
    if (endsWith(name, row))
      return 1;
  return -1;
}

int64_t encoderParameterBytes(const TextEncoderConfig &config, int64_t tpSize) {
  int64_t bytes = 0;
  for (const EncoderParameter &p : encoderParameters(config)) {
    int64_t count = 1;
    for (int64_t d : p.shape)
      count *= d;
    bytes += (encoderShardDim(p.name) < 0 ? count : count / std::max<int64_t>(tpSize, 1)) * 4;
  }
  return bytes;
}

int64_t t5RelativeBucket(int64_t key, int64_t query, int64_t buckets,
                         int64_t maxDistance) {
  int64_t half = buckets / 2;
  int64_t relative = key - query;
  int64_t bucket = relative > 0 ? half : 0;
  int64_t distance = std::llabs(relative);
  int64_t maxExact = half / 2;
  if (distance < maxExact)
    return bucket + distance;
  // In float32, step by step, as transformers computes it on a float32
  // tensor: a bucket edge (distance 16, 32, 64 with the defaults) is an
  // exact power of two whose float32 quotient must truncate the same way.
  float ratio = float(distance) / float(maxExact);
  float scaled = std::log(ratio) / float(std::log(double(maxDistance) / double(maxExact)));
  int64_t large = maxExact + int64_t(scaled * float(half - maxExact));
  return bucket + std::min(large, half - 1);
}

} // namespace ditc::text
