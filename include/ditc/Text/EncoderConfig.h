//===- EncoderConfig.h - a text encoder's config.json -----------*- C++ -*-===//
//
// What ditc knows of a pipeline's text encoder before any tensor is read:
// its transformers config.json, validated, and every parameter its encoder
// stack reads under transformers' state-dict names. No torch and no MLIR, so
// the importer, the cost model and dit-run's encoders (runtime/lib/Text)
// read one description of each encoder, as they do the VAE's
// (ditc/Vae/DecoderConfig.h).
//
// Classes: T5EncoderModel (FLUX's text_encoder_2, SD3's text_encoder_3,
// LTX-Video, CogVideoX, Mochi), UMT5EncoderModel (Wan), CLIPTextModel
// (FLUX's text_encoder) and CLIPTextModelWithProjection (SD3's two CLIPs).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TEXT_ENCODERCONFIG_H
#define DITC_TEXT_ENCODERCONFIG_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::text {

/// One encoder parameter under its transformers name, with its shape.
struct EncoderParameter {
  std::string name;
  std::vector<int64_t> shape;
};

enum class EncoderClass { T5, UMT5, Clip, ClipWithProjection };

/// The class name as model_index.json and config.json's `architectures`
/// spell it.
const char *encoderClassName(EncoderClass kind);

/// T5's and UMT5's encoder stack.
struct T5Config {
  std::string path; // config.json, for messages
  bool umt5 = false; // a relative position bias in every layer, not only the first
  int64_t vocabSize = 0, dModel = 0, dKv = 0, dFf = 0, numLayers = 0, numHeads = 0;
  int64_t buckets = 32, maxDistance = 128;
  double eps = 1e-6;
  /// feed_forward_proj "gated-ACT" (wi_0, wi_1) or "ACT" (wi).
  bool gated = true;
  /// The feed-forward activation: "gelu_new" (tanh), "gelu" (erf) or "relu".
  std::string activation = "gelu_new";

  int64_t innerDim() const { return numHeads * dKv; }
};

/// CLIP's text transformer, with or without the pooled projection.
struct ClipTextConfig {
  std::string path;
  bool withProjection = false;
  int64_t vocabSize = 0, hidden = 0, intermediate = 0, numLayers = 0, numHeads = 0;
  int64_t maxPositions = 0, projectionDim = 0;
  /// transformers pools at the first `eos_token_id`, except for the legacy
  /// value 2 (configs written before the tokenizer's EOS was recorded),
  /// where it pools at the largest token id: CLIP's <|endoftext|> is the
  /// last id of its vocabulary.
  int64_t eosTokenId = 49407;
  double eps = 1e-5;
  /// "quick_gelu" (CLIP-L), "gelu" (erf; CLIP-G) or "gelu_new" (tanh).
  std::string activation = "quick_gelu";

  int64_t headDim() const { return hidden / numHeads; }
};

/// Whether `className` is one of the four classes above.
bool isModeledTextEncoderClass(const std::string &className);

/// A text encoder folder's config, of whichever class.
struct TextEncoderConfig {
  EncoderClass kind = EncoderClass::T5;
  T5Config t5;     // T5, UMT5
  ClipTextConfig clip; // Clip, ClipWithProjection

  bool isT5() const { return kind == EncoderClass::T5 || kind == EncoderClass::UMT5; }
  /// Channels of the hidden states the encoder hands the transformer.
  int64_t width() const { return isT5() ? t5.dModel : clip.hidden; }
  int64_t vocabSize() const { return isT5() ? t5.vocabSize : clip.vocabSize; }
  /// The config.json it was read from, for messages.
  const std::string &path() const { return isT5() ? t5.path : clip.path; }
};

/// Reads and checks the config.json of a text encoder whose class
/// model_index.json names `className`; `path` names the file in messages.
/// The config's own `model_type` must agree with the class (t5, umt5,
/// clip_text_model). Throws BadInput naming the file, the field, the value
/// and what is allowed.
TextEncoderConfig parseTextEncoderConfig(const nlohmann::json &config,
                                         const std::string &className,
                                         const std::string &path);

/// Every parameter the encoder reads, in the order it reads them. T5's
/// token embedding is listed as `shared.weight` (stored once and tied to
/// `encoder.embed_tokens.weight`, which a checkpoint may hold instead).
std::vector<EncoderParameter> encoderParameters(const TextEncoderConfig &config);

/// The dimension tensor parallelism splits parameter `name` along, as
/// ditc's dit-partition-text-encoder pass splits the graph: 0 for the
/// column-split linears (q, k, v and the feed-forward's input, with their
/// biases), 1 for the row-split ones (the attention output, the
/// feed-forward's output) and T5's relative bias table [buckets, heads];
/// -1 for a parameter every rank holds whole.
int encoderShardDim(const std::string &name);

/// Float32 bytes of one rank's share of the parameters when tensor
/// parallelism splits the encoder `tpSize` ways (1: every parameter).
int64_t encoderParameterBytes(const TextEncoderConfig &config, int64_t tpSize = 1);

/// T5's relative position bucket of key position `key` seen from query
/// position `query`, bidirectional as the encoder uses it: half the buckets
/// for keys after the query; the first half of each half exact, the rest
/// logarithmic up to `maxDistance`.
int64_t t5RelativeBucket(int64_t key, int64_t query, int64_t buckets,
                         int64_t maxDistance);

} // namespace ditc::text

#endif // DITC_TEXT_ENCODERCONFIG_H
