//===- TextGraph.cpp - @text_encoder's encoders as dit graphs -------------===//
//
// T5EncoderModel, UMT5EncoderModel, CLIPTextModel and
// CLIPTextModelWithProjection op by op, as transformers builds them, from
// the config ditc/Text/EncoderConfig.h validates (the one dit-run encodes
// with), and the pipelines' assembly of their outputs (diffusers'
// encode_prompt for FLUX, SD3 and Wan). Each op names its module, and takes
// that name as its location, so a verifier error points at the module.
//
//===----------------------------------------------------------------------===//
#include "TextGraph.h"

#include "ditc/Support/BadInput.h"
#include "ditc/Text/EncoderConfig.h"

#include "dit/IR/DitOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {

namespace {

/// CLIP's context in every pipeline that uses it (tokenizer.model_max_length).
constexpr int64_t kClipTokens = 77;

/// The pipelines whose encode_prompt the graph assembles.
enum class PromptFamily { None, Flux, SD3, Wan };

PromptFamily promptFamily(const ModelSpec &spec) {
  std::string name = spec.info().name;
  if (name == "flux")
    return PromptFamily::Flux;
  if (name == "sd3")
    return PromptFamily::SD3;
  if (name == "wan")
    return PromptFamily::Wan;
  return PromptFamily::None;
}

size_t encodersNeeded(PromptFamily family) {
  switch (family) {
  case PromptFamily::Flux:
    return 2;
  case PromptFamily::SD3:
    return 3;
  case PromptFamily::Wan:
    return 1;
  case PromptFamily::None:
    break;
  }
  return 0;
}

/// The tokens each encoder reads: CLIP's 77, T5's the pipeline's
/// max_sequence_length (the text stream less CLIP's 77 for SD3).
int64_t tokensOf(const ModelSpec &spec, const Workload &w, size_t index) {
  const ModelSpec::TextEncoderSpec &e = spec.textEncoders[index];
  bool clip = e.className.rfind("CLIP", 0) == 0;
  if (clip)
    return kClipTokens;
  return promptFamily(spec) == PromptFamily::SD3 ? w.textTokens - kClipTokens : w.textTokens;
}

ActivationKind activationKind(const std::string &name) {
  if (name == "gelu_new")
    return ActivationKind::GeluTanh;
  if (name == "relu")
    return ActivationKind::Relu;
  if (name == "quick_gelu")
    return ActivationKind::QuickGelu;
  return ActivationKind::Gelu;
}

/// Builds one encoder's body.
class EncoderGraph {
public:
  EncoderGraph(OpBuilder &b, Type element) : b(b), element(element) {}

  Location at(const std::string &module) {
    return NameLoc::get(b.getStringAttr(module));
  }
  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, element);
  }
  static int64_t dim(Value x, int64_t i) { return cast<RankedTensorType>(x.getType()).getDimSize(i); }

  Value linear(Value x, const std::string &name, int64_t out, bool bias) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = out;
    return LinearOp::create(b, at(name), type.clone(shape), x, b.getStringAttr(name),
                            b.getBoolAttr(bias));
  }
  Value rmsNorm(Value x, const std::string &name, double eps) {
    return RMSNormOp::create(b, at(name), x.getType(), x, b.getBoolAttr(true),
                             b.getF64FloatAttr(eps), b.getStringAttr(name), IntegerAttr());
  }
  Value layerNorm(Value x, const std::string &name, double eps) {
    return LayerNormOp::create(b, at(name), x.getType(), x, b.getBoolAttr(true),
                               b.getF64FloatAttr(eps), b.getStringAttr(name), IntegerAttr());
  }
  Value add(Value x, Value y) { return AddOp::create(b, x.getLoc(), x.getType(), x, y); }
  Value activation(ActivationKind kind, Value x) {
    return ActivationOp::create(b, x.getLoc(), x.getType(),
                                ActivationKindAttr::get(b.getContext(), kind), x);
  }
  Value attention(const std::string &name, Value q, Value k, Value v, Value bias,
                  int64_t heads, int64_t headDim, std::optional<double> scale, bool causal) {
    SmallVector<Value> inputs{q, k, v};
    if (bias)
      inputs.push_back(bias);
    return AttentionOp::create(
        b, at(name), q.getType(), AttentionKindAttr::get(b.getContext(), AttentionKind::Self),
        inputs, b.getI64IntegerAttr(heads), b.getI64IntegerAttr(headDim),
        QKVLayoutAttr::get(b.getContext(), QKVLayout::Separate), b.getI64IntegerAttr(0),
        TextPositionAttr::get(b.getContext(), TextPosition::Prefix), b.getBoolAttr(false),
        KVCacheAttr::get(b.getContext(), KVCache::None), StringAttr(), b.getBoolAttr(false),
        UnitAttr(), scale ? b.getF64FloatAttr(*scale) : FloatAttr(),
        causal ? b.getUnitAttr() : UnitAttr());
  }

  /// T5's and UMT5's encoder stack: the final norm's states [B, L, d_model].
  Value t5(const text::T5Config &c, Value ids, Value mask) {
    int64_t batch = dim(ids, 0), length = dim(ids, 1);
    Value h = TokenEmbeddingOp::create(b, at("shared"), tensor({batch, length, c.dModel}), ids,
                                       b.getStringAttr("shared"),
                                       b.getI64IntegerAttr(c.vocabSize), StringAttr(),
                                       IntegerAttr());
    Value bias;
    auto positionBias = [&](int64_t layer) {
      std::string name = "encoder.block." + std::to_string(layer) +
                         ".layer.0.SelfAttention.relative_attention_bias";
      return RelativePositionBiasOp::create(
          b, at(name), tensor({mask ? batch : 1, c.numHeads, length, length}), mask,
          b.getStringAttr(name), b.getI64IntegerAttr(c.buckets),
          b.getI64IntegerAttr(c.maxDistance));
    };
    for (int64_t i = 0; i < c.numLayers; ++i) {
      std::string block = "encoder.block." + std::to_string(i) + ".";
      std::string attn = block + "layer.0.SelfAttention.";
      // T5 computes the bias in its first layer and shares it; UMT5 has
      // one per layer.
      if (i == 0 || c.umt5)
        bias = positionBias(i);
      Value n = rmsNorm(h, block + "layer.0.layer_norm", c.eps);
      Value q = linear(n, attn + "q", c.innerDim(), false);
      Value k = linear(n, attn + "k", c.innerDim(), false);
      Value v = linear(n, attn + "v", c.innerDim(), false);
      // T5 folds the 1/sqrt(d) into its initialisation: scores are unscaled.
      Value a = attention(block + "layer.0.SelfAttention", q, k, v, bias, c.numHeads, c.dKv,
                          1.0, false);
      h = add(h, linear(a, attn + "o", c.dModel, false));
      std::string ff = block + "layer.1.DenseReluDense.";
      n = rmsNorm(h, block + "layer.1.layer_norm", c.eps);
      ActivationKind act = activationKind(c.activation);
      Value inner;
      if (c.gated) {
        Value gate = activation(act, linear(n, ff + "wi_0", c.dFf, false));
        Value up = linear(n, ff + "wi_1", c.dFf, false);
        inner = MulOp::create(b, at(ff + "wi_1"), gate.getType(), gate, up);
      } else {
        inner = activation(act, linear(n, ff + "wi", c.dFf, false));
      }
      h = add(h, linear(inner, ff + "wo", c.dModel, false));
    }
    return rmsNorm(h, "encoder.final_layer_norm", c.eps);
  }

  /// CLIP's text transformer: the penultimate states (the last layer's
  /// input) and the pooled output (projected with a projection).
  std::pair<Value, Value> clip(const text::ClipTextConfig &c, Value ids) {
    int64_t batch = dim(ids, 0), length = dim(ids, 1);
    std::string embeddings = "text_model.embeddings.";
    Value h = TokenEmbeddingOp::create(
        b, at(embeddings + "token_embedding"), tensor({batch, length, c.hidden}), ids,
        b.getStringAttr(embeddings + "token_embedding"), b.getI64IntegerAttr(c.vocabSize),
        b.getStringAttr(embeddings + "position_embedding"),
        b.getI64IntegerAttr(c.maxPositions));
    Value penultimate = h;
    for (int64_t i = 0; i < c.numLayers; ++i) {
      std::string layer = "text_model.encoder.layers." + std::to_string(i) + ".";
      penultimate = h;
      Value n = layerNorm(h, layer + "layer_norm1", c.eps);
      Value q = linear(n, layer + "self_attn.q_proj", c.hidden, true);
      Value k = linear(n, layer + "self_attn.k_proj", c.hidden, true);
      Value v = linear(n, layer + "self_attn.v_proj", c.hidden, true);
      Value a = attention(layer + "self_attn", q, k, v, Value(), c.numHeads, c.headDim(),
                          std::nullopt, /*causal=*/true);
      h = add(h, linear(a, layer + "self_attn.out_proj", c.hidden, true));
      n = layerNorm(h, layer + "layer_norm2", c.eps);
      Value f = activation(activationKind(c.activation),
                           linear(n, layer + "mlp.fc1", c.intermediate, true));
      h = add(h, linear(f, layer + "mlp.fc2", c.hidden, true));
    }
    Value last = layerNorm(h, "text_model.final_layer_norm", c.eps);
    Value pooled = EosPoolOp::create(b, at("text_model.pooler"),
                                     RankedTensorType::get({batch, c.hidden}, element), last,
                                     ids, b.getI64IntegerAttr(c.eosTokenId));
    if (c.withProjection)
      pooled = linear(pooled, "text_projection", c.projectionDim, false);
    return {penultimate, pooled};
  }

private:
  OpBuilder &b;
  Type element;
};

/// A width mismatch between an encoder and the transformer it feeds.
[[noreturn]] void mismatch(const ModelSpec::TextEncoderSpec &e, const std::string &what,
                           const std::string &field, int64_t value) {
  throw BadInput(e.configPath + ": " + what + ", but the transformer's " + field + " is " +
                 std::to_string(value));
}

} // namespace

bool hasTextEncoderGraphs(const ModelSpec &spec) {
  size_t needed = encodersNeeded(promptFamily(spec));
  return needed != 0 && spec.textEncoders.size() == needed;
}

SmallVector<Type> textEncoderInputs(Builder &b, const ModelSpec &spec, const Workload &w) {
  SmallVector<Type> inputs;
  for (size_t i = 0; i < spec.textEncoders.size(); ++i)
    inputs.push_back(RankedTensorType::get({w.batch, tokensOf(spec, w, i)}, b.getI64Type()));
  if (promptFamily(spec) == PromptFamily::Wan)
    inputs.push_back(inputs.front());
  return inputs;
}

void buildTextEncoderGraphs(OpBuilder &b, func::FuncOp fn, const ModelSpec &spec,
                            const Workload &w, Type element) {
  PromptFamily family = promptFamily(spec);
  MLIRContext *context = b.getContext();
  Location loc = fn.getLoc();
  auto kind = ComponentKindAttr::get(context, ComponentKind::TextEncoder);
  std::vector<text::TextEncoderConfig> configs;
  for (const ModelSpec::TextEncoderSpec &e : spec.textEncoders)
    configs.push_back(text::parseTextEncoderConfig(nlohmann::json::parse(e.config),
                                                   e.className, e.configPath));
  Value mask = family == PromptFamily::Wan ? fn.getArgument(1) : Value();

  // One component per encoder: (ids [, mask]) -> its outputs.
  auto component = [&](size_t index, SmallVector<Type> outputs) -> SmallVector<Value> {
    const text::TextEncoderConfig &config = configs[index];
    SmallVector<Value> inputs{fn.getArgument(index)};
    if (mask)
      inputs.push_back(mask);
    auto op = ComponentOp::create(b, loc, outputs, kind,
                                  b.getStringAttr(spec.textEncoders[index].className), inputs);
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Location> locs(inputs.size(), loc);
    Block *body = b.createBlock(&op.getBody(), {}, ValueRange(inputs).getTypes(), locs);
    EncoderGraph graph(b, element);
    SmallVector<Value> results;
    if (config.isT5()) {
      results.push_back(graph.t5(config.t5, body->getArgument(0),
                                 mask ? body->getArgument(1) : Value()));
    } else {
      auto [penultimate, pooled] = graph.clip(config.clip, body->getArgument(0));
      if (outputs.size() == 2)
        results.push_back(penultimate);
      results.push_back(pooled);
    }
    YieldOp::create(b, loc, results);
    return SmallVector<Value>(op.getOutputs());
  };
  auto type = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, element); };
  int64_t B = w.batch;

  // The transformer's inputs, which the assembly must give exactly.
  auto textType = cast<RankedTensorType>(fn.getResultTypes()[0]);
  int64_t width = textType.getDimSize(2);
  const ModelSpec::TextEncoderSpec &t5Spec = spec.textEncoders.back();
  const text::TextEncoderConfig &t5 = configs.back();
  if (!t5.isT5() || (family == PromptFamily::Wan) != (t5.kind == text::EncoderClass::UMT5))
    throw BadInput(t5Spec.configPath + ": " + spec.info().className + "'s pipeline needs a " +
                   (family == PromptFamily::Wan ? "UMT5EncoderModel" : "T5EncoderModel") +
                   " as " + t5Spec.component + ", got " + t5Spec.className);
  if (t5.width() != width)
    mismatch(t5Spec, "d_model is " + std::to_string(t5.width()), "text width", width);
  int64_t t5Tokens = tokensOf(spec, w, configs.size() - 1);

  SmallVector<Value> results;
  if (family == PromptFamily::Flux) {
    if (configs[0].kind != text::EncoderClass::Clip)
      throw BadInput(spec.textEncoders[0].configPath +
                     ": FluxPipeline's text_encoder must be a CLIPTextModel");
    int64_t pooledDim = cast<RankedTensorType>(fn.getResultTypes()[1]).getDimSize(1);
    if (configs[0].clip.hidden != pooledDim)
      mismatch(spec.textEncoders[0], "hidden_size is " + std::to_string(configs[0].clip.hidden),
               "pooled width", pooledDim);
    Value pooled = component(0, {type({B, pooledDim})})[0];
    Value text = component(1, {type({B, t5Tokens, width})})[0];
    results = {text, pooled};
  } else if (family == PromptFamily::SD3) {
    SmallVector<Value> penultimates, pooleds;
    int64_t clipWidth = 0, pooledWidth = 0;
    for (size_t i = 0; i < 2; ++i) {
      const text::ClipTextConfig &c = configs[i].clip;
      if (configs[i].kind != text::EncoderClass::ClipWithProjection)
        throw BadInput(spec.textEncoders[i].configPath +
                       ": StableDiffusion3Pipeline's text encoders 1 and 2 must be "
                       "CLIPTextModelWithProjection");
      SmallVector<Value> out =
          component(i, {type({B, kClipTokens, c.hidden}), type({B, c.projectionDim})});
      penultimates.push_back(out[0]);
      pooleds.push_back(out[1]);
      clipWidth += c.hidden;
      pooledWidth += c.projectionDim;
    }
    int64_t pooledDim = cast<RankedTensorType>(fn.getResultTypes()[1]).getDimSize(1);
    if (pooledWidth != pooledDim)
      mismatch(spec.textEncoders[1],
               "the CLIPs' projections give " + std::to_string(pooledWidth) + " channels",
               "pooled width", pooledDim);
    if (clipWidth > width)
      mismatch(spec.textEncoders[1],
               "the CLIPs' states are " + std::to_string(clipWidth) + " channels wide",
               "text width", width);
    Value t5Out = component(2, {type({B, t5Tokens, width})})[0];
    // CLIP-L and CLIP-G on channels, zero-padded to T5's width, then T5's
    // tokens after them; the pooled outputs side by side.
    Value clips = tensor::ConcatOp::create(b, loc, 2, penultimates);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
    SmallVector<OpFoldResult> low(3, b.getIndexAttr(0)), high(3, b.getIndexAttr(0));
    high[2] = b.getIndexAttr(width - clipWidth);
    Value padded = tensor::PadOp::create(b, loc, type({B, kClipTokens, width}), clips, low,
                                         high, zero);
    results = {tensor::ConcatOp::create(b, loc, 1, ValueRange{padded, t5Out}),
               tensor::ConcatOp::create(b, loc, 1, pooleds)};
  } else {
    // Wan: UMT5 under its attention mask, the states past each prompt's
    // length zeroed.
    Value text = component(0, {type({B, t5Tokens, width})})[0];
    results = {MaskRowsOp::create(b, loc, text.getType(), text, mask)};
  }
  func::ReturnOp::create(b, loc, results);
}

} // namespace ditc
