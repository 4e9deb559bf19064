//===- PipelinePrompts.cpp - a prompt to the transformer's text inputs ----===//
#include "ditc/Runtime/Text/PipelinePrompts.h"

#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Runtime/Text/HtmlUnescape.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Utf8.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <map>
#include <utility>

namespace ditc::runtime {

namespace {

/// CLIP's context in every pipeline that uses it (tokenizer.model_max_length).
constexpr int64_t kClipTokens = 77;

struct Component {
  const char *encoder, *tokenizer;
};

std::vector<Component> componentsOf(const std::string &family) {
  if (family == "flux")
    return {{"text_encoder", "tokenizer"}, {"text_encoder_2", "tokenizer_2"}};
  if (family == "sd3")
    return {{"text_encoder", "tokenizer"},
            {"text_encoder_2", "tokenizer_2"},
            {"text_encoder_3", "tokenizer_3"}};
  if (family == "wan")
    return {{"text_encoder", "tokenizer"}};
  return {};
}

/// model_index.json's class for `component`: ["library", "Class"].
std::string componentClass(const JsonObject &index, const std::string &component) {
  if (!index.raw().contains(component))
    index.fail(component, "is missing; the pipeline needs it to encode a prompt");
  const nlohmann::json &entry = index.raw().at(component);
  if (!entry.is_array() || entry.size() != 2 || !entry[1].is_string())
    index.fail(component, "must be [library, class name]");
  return entry[1].get<std::string>();
}

/// Unicode White_Space: the `regex` module's \s, which diffusers'
/// whitespace_clean collapses.
bool isWhiteSpace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/// Python's str.isspace, which str.strip() trims: White_Space and the
/// information separators U+001C..U+001F.
bool isPythonSpace(uint32_t cp) { return isWhiteSpace(cp) || (cp >= 0x1C && cp <= 0x1F); }

/// Python's str.strip().
std::string pythonStrip(const std::string &text) {
  size_t begin = 0, end = text.size();
  while (begin < end) {
    auto [cp, length] = decodeUtf8At(text, begin);
    if (!length || !isPythonSpace(cp))
      break;
    begin += length;
  }
  // Scan forward for the last character that is not a space.
  size_t last = begin;
  for (size_t i = begin; i < end;) {
    auto [cp, length] = decodeUtf8At(text, i);
    length = length ? length : 1;
    if (!isPythonSpace(cp))
      last = i + length;
    i += length;
  }
  return text.substr(begin, last - begin);
}

} // namespace

std::string PipelinePrompts::wanPromptClean(const std::string &prompt) {
  // basic_clean: html.unescape twice, strip; whitespace_clean: \s+ to one
  // space, strip.
  std::string text = pythonStrip(htmlUnescape(htmlUnescape(prompt)));
  std::string out;
  for (size_t i = 0; i < text.size();) {
    auto [cp, length] = decodeUtf8At(text, i);
    length = length ? length : 1;
    if (isWhiteSpace(cp)) {
      size_t end = i;
      while (end < text.size()) {
        auto [next, nextLength] = decodeUtf8At(text, end);
        if (!nextLength || !isWhiteSpace(next))
          break;
        end += nextLength;
      }
      out += ' ';
      i = end;
      continue;
    }
    out.append(text, i, length);
    i += length;
  }
  return pythonStrip(out);
}

std::string promptUnsupportedReason(const Manifest &m) {
  if (!componentsOf(m.family).empty())
    return "";
  return m.modelName + " (family " + m.family +
         "): ditc cannot run this pipeline's text encoder yet (it runs FLUX's, SD3's "
         "and Wan's: CLIP, T5 and UMT5); encode the prompt elsewhere and pass "
         "--text-embeds" +
         std::string(m.pooledDim ? " and --pooled-embeds" : "");
}

PipelinePrompts::PipelinePrompts(const std::string &snapshot, const Manifest &m,
                                 bool readParameters, const EncoderShard &shard)
    : family(m.family), shard(shard), textTokens(m.textTokens), width(m.textEmbedDim),
      pooledDim(m.pooledDim) {
  std::string reason = promptUnsupportedReason(m);
  if (!reason.empty())
    throw BadInput("--prompt: " + reason);
  std::string indexPath = snapshot + "/model_index.json";
  std::string shownIndex = escapeInvalidUtf8(indexPath);
  nlohmann::json indexJson = JsonObject::parseFile(indexPath);
  JsonObject index(shownIndex, &indexJson);
  for (const Component &component : componentsOf(family)) {
    Encoder encoder;
    encoder.name = component.encoder;
    std::string folder = snapshot + "/" + component.encoder;
    checkpoint::TransformerWeights weights(folder, component.encoder,
                                           checkpoint::kTransformersWeightsStem);
    encoder.config = text::parseTextEncoderConfig(
        weights.config(), componentClass(index, component.encoder),
        escapeInvalidUtf8(weights.configPath()));
    encoder.tokenizer = openTokenizer(snapshot + "/" + component.tokenizer,
                                      componentClass(index, component.tokenizer));
    if (shard.size > 1) {
      // The plan's split, against this encoder: a plan compiled for
      // another encoder (or edited) is refused before any rank splits it.
      std::string why = encoderShardRefusal(encoder.config, shard.size);
      if (!why.empty())
        throw BadInput(m.path + ": text_encoder.tp_size " + std::to_string(shard.size) +
                       " cannot split " + escapeInvalidUtf8(encoder.config.path()) + ": " +
                       why);
      int64_t layers = encoder.config.isT5() ? encoder.config.t5.numLayers
                                             : encoder.config.clip.numLayers;
      auto planned = m.textEncoderAllReduces.find(encoder.name);
      int64_t expected = layers * kEncoderAllReducesPerLayer;
      if (planned == m.textEncoderAllReduces.end() || planned->second != expected)
        throw BadInput(m.path + ": text_encoder.encoders: the plan's TP program of " +
                       encoder.name + " has " +
                       (planned == m.textEncoderAllReduces.end()
                            ? std::string("no entry")
                            : std::to_string(planned->second) + " all-reduces") +
                       ", but " + escapeInvalidUtf8(encoder.config.path()) + "'s " +
                       std::to_string(layers) + " layers need " + std::to_string(expected) +
                       " (2 per layer); the plan was compiled for another encoder");
    }
    if (readParameters)
      encoder.parameters = loadEncoderParameters(encoder.config, weights, shard);
    else
      checkEncoderParameters(encoder.config, weights);
    encoders.push_back(std::move(encoder));
  }

  // The encoders' outputs against the plan's text inputs.
  auto mismatch = [&](const Encoder &encoder, const std::string &what,
                      const std::string &planField, int64_t planValue) {
    throw BadInput(escapeInvalidUtf8(encoder.config.path()) +
                   ": " + what + ", but the plan's " + planField + " is " +
                   std::to_string(planValue) +
                   " (the plan was compiled for another text encoder)");
  };
  const Encoder &t5 = encoders.back();
  if (family == "flux") {
    const Encoder &clip = encoders[0];
    if (clip.config.kind != text::EncoderClass::Clip || !t5.config.isT5())
      throw BadInput(shownIndex + ": FluxPipeline needs a CLIPTextModel text_encoder and a "
                                  "T5EncoderModel text_encoder_2");
    if (clip.config.clip.hidden != pooledDim)
      mismatch(clip, "hidden_size is " + std::to_string(clip.config.clip.hidden),
               "pooled_dim", pooledDim);
  } else if (family == "sd3") {
    int64_t clipWidth = 0, pooled = 0;
    for (size_t i = 0; i < 2; ++i) {
      if (encoders[i].config.kind != text::EncoderClass::ClipWithProjection)
        throw BadInput(shownIndex + ": StableDiffusion3Pipeline needs "
                                    "CLIPTextModelWithProjection text encoders 1 and 2");
      clipWidth += encoders[i].config.clip.hidden;
      pooled += encoders[i].config.clip.projectionDim;
    }
    if (!t5.config.isT5())
      throw BadInput(shownIndex + ": text_encoder_3 must be a T5EncoderModel");
    if (clipWidth > t5.config.width())
      mismatch(t5, "d_model " + std::to_string(t5.config.width()) +
                       " is narrower than the two CLIPs' " + std::to_string(clipWidth),
               "text_embed_dim", width);
    if (pooled != pooledDim)
      mismatch(encoders[1], "the CLIPs' projections give " + std::to_string(pooled) +
                                " pooled channels",
               "pooled_dim", pooledDim);
    if (textTokens <= kClipTokens)
      throw BadInput(m.path + ": SD3's text_tokens (" + std::to_string(textTokens) +
                     ") must exceed CLIP's 77, the T5 tokens following them");
  } else if (!t5.config.isT5() || !t5.config.t5.umt5) {
    throw BadInput(shownIndex + ": WanPipeline needs a UMT5EncoderModel text_encoder");
  }
  if (t5.config.width() != width)
    mismatch(t5, "d_model is " + std::to_string(t5.config.width()), "text_embed_dim", width);
  for (const Encoder &encoder : encoders) {
    int64_t vocab = encoder.config.vocabSize();
    for (int64_t id : {encoder.tokenizer->padId(), encoder.tokenizer->eosId()})
      if (id >= vocab)
        throw BadInput(escapeInvalidUtf8(encoder.tokenizer->folder()) + ": token id " +
                       std::to_string(id) + " is outside " + encoder.name +
                       "'s vocab_size " + std::to_string(vocab));
  }
}

PipelinePrompts::~PipelinePrompts() = default;

void PipelinePrompts::setAllReduce(std::function<void(at::Tensor &)> allReduce) {
  shard.allReduce = std::move(allReduce);
}

void PipelinePrompts::release() {
  for (Encoder &encoder : encoders)
    EncoderParameters().swap(encoder.parameters);
  released = true;
}

int64_t PipelinePrompts::parameterBytes() const {
  int64_t bytes = 0;
  for (const Encoder &encoder : encoders)
    bytes += text::encoderParameterBytes(encoder.config, shard.size);
  return bytes;
}

int64_t PipelinePrompts::tokensOf(const Encoder &encoder) const {
  if (!encoder.config.isT5())
    return kClipTokens;
  return family == "sd3" ? textTokens - kClipTokens : textTokens;
}

int64_t PipelinePrompts::encodePeakBytes(int64_t batch) const {
  int64_t peak = 0;
  for (const Encoder &encoder : encoders) {
    const text::TextEncoderConfig &c = encoder.config;
    int64_t length = tokensOf(encoder);
    // Under TP a rank holds its share of the heads and inner widths.
    int64_t parts = std::max<int64_t>(shard.size, 1);
    int64_t width = c.width(), inner = (c.isT5() ? c.t5.innerDim() : c.clip.hidden) / parts;
    int64_t ff = (c.isT5() ? c.t5.dFf * (c.t5.gated ? 2 : 1) : c.clip.intermediate) / parts;
    int64_t heads = (c.isT5() ? c.t5.numHeads : c.clip.numHeads) / parts;
    // Residual, normed and penultimate states; Q, K, V and the attention
    // output; the feed-forward's inner states; scores and probabilities
    // (with T5's position bias).
    int64_t elements = batch * length * (3 * width + 4 * inner + ff) +
                       3 * batch * heads * length * length;
    peak = std::max(peak, elements * 4);
  }
  return peak;
}

EncoderOutputs PipelinePrompts::run(const Encoder &encoder,
                                    const std::vector<std::string> &prompts, bool masked,
                                    const std::string &what, at::Tensor *mask) const {
  int64_t batch = int64_t(prompts.size()), maxLength = tokensOf(encoder);
  at::Tensor ids = at::empty({batch, maxLength}, at::kLong);
  at::Tensor attention = at::empty({batch, maxLength}, at::kLong);
  auto idsAt = ids.accessor<int64_t, 2>();
  auto attentionAt = attention.accessor<int64_t, 2>();
  int64_t vocab = encoder.config.vocabSize();
  for (int64_t b = 0; b < batch; ++b) {
    TokenizedPrompt tokens = encoder.tokenizer->encode(prompts[size_t(b)], maxLength, what);
    if (tokens.truncated())
      std::cerr << "dit-run: warning: " << what << " is "
                << tokens.untruncatedLength << " tokens for "
                << escapeInvalidUtf8(encoder.tokenizer->folder()) << "; only the first "
                << maxLength << " are kept (the pipeline truncates at " << maxLength
                << ")\n";
    for (int64_t t = 0; t < maxLength; ++t) {
      int64_t id = tokens.ids[size_t(t)];
      if (id < 0 || id >= vocab)
        throw BadInput(escapeInvalidUtf8(encoder.tokenizer->folder()) + ": " + what +
                       " gives token id " + std::to_string(id) + ", outside " +
                       encoder.name + "'s vocab_size " + std::to_string(vocab));
      idsAt[b][t] = id;
      attentionAt[b][t] = tokens.mask[size_t(t)];
    }
  }
  if (mask)
    *mask = attention;
  if (released)
    throw std::logic_error("the text encoders were released before " + what + " was encoded");
  return runTextEncoder(encoder.config, encoder.parameters, ids,
                        masked ? attention : at::Tensor(), shard);
}

PromptEmbeddings PipelinePrompts::encode(const std::vector<std::string> &prompts,
                                         const std::string &what) const {
  at::NoGradGuard noGrad;
  PromptEmbeddings out;
  if (family == "flux") {
    out.pooled = run(encoders[0], prompts, false, what, nullptr).pooled;
    out.text = run(encoders[1], prompts, false, what, nullptr).last;
  } else if (family == "sd3") {
    EncoderOutputs large = run(encoders[0], prompts, false, what, nullptr);
    EncoderOutputs big = run(encoders[1], prompts, false, what, nullptr);
    at::Tensor clip = at::cat({large.penultimate, big.penultimate}, -1);
    clip = at::constant_pad_nd(clip, {0, width - clip.size(-1)});
    at::Tensor t5 = run(encoders[2], prompts, false, what, nullptr).last;
    out.text = at::cat({clip, t5}, -2);
    out.pooled = at::cat({large.pooled, big.pooled}, -1);
  } else {
    std::vector<std::string> cleaned;
    for (const std::string &prompt : prompts) {
      requireUtf8(prompt, what);
      cleaned.push_back(wanPromptClean(prompt));
    }
    at::Tensor mask;
    at::Tensor states = run(encoders[0], cleaned, true, what, &mask).last;
    // The pipeline keeps each prompt's states up to its length and pads
    // with zeros: the padded rows are zero, not the encoder's output there.
    out.text = states.masked_fill(mask.unsqueeze(-1) == 0, 0.0);
  }
  return out;
}

} // namespace ditc::runtime
