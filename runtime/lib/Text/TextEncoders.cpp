//===- TextEncoders.cpp - T5, UMT5 and CLIP text encoders -----------------===//
#include "ditc/Runtime/Text/TextEncoders.h"

#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/IO/Weights.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ditc::runtime {

using text::ClipTextConfig;
using text::T5Config;

namespace {

const at::Tensor &param(const EncoderParameters &parameters, const std::string &name) {
  auto it = parameters.find(name);
  if (it == parameters.end())
    throw std::logic_error("text encoder parameter " + name + " was not loaded");
  return it->second;
}

/// x @ weight^T (+ bias), as nn.Linear.
at::Tensor linear(const at::Tensor &x, const EncoderParameters &p, const std::string &name,
                  bool bias) {
  return bias ? at::linear(x, param(p, name + ".weight"), param(p, name + ".bias"))
              : at::linear(x, param(p, name + ".weight"));
}

/// T5LayerNorm: no mean, no bias; the variance in float32.
at::Tensor rmsNorm(const at::Tensor &x, const at::Tensor &weight, double eps) {
  at::Tensor variance = x.pow(2).mean(-1, /*keepdim=*/true);
  return weight * (x * at::rsqrt(variance + eps));
}

at::Tensor activate(const at::Tensor &x, const std::string &name) {
  if (name == "gelu_new")
    return at::gelu(x, "tanh");
  if (name == "gelu")
    return at::gelu(x);
  if (name == "quick_gelu")
    return x * at::sigmoid(x * 1.702);
  return at::relu(x); // "relu": the config parser allows nothing else
}

/// A row-split linear's output: the partial sums of the group added up,
/// then the bias, once.
at::Tensor rowLinear(const at::Tensor &x, const EncoderParameters &p, const std::string &name,
                     bool bias, const EncoderShard &shard) {
  at::Tensor out = at::linear(x, param(p, name + ".weight"));
  if (shard.size > 1)
    shard.allReduce(out);
  return bias ? out + param(p, name + ".bias") : out;
}

/// [B, L, H * d] -> [B, H, L, d]
at::Tensor heads(const at::Tensor &x, int64_t count) {
  return x.view({x.size(0), x.size(1), count, -1}).transpose(1, 2);
}

EncoderOutputs runT5(const T5Config &c, const EncoderParameters &p, const at::Tensor &ids,
                     const at::Tensor &mask, const EncoderShard &shard) {
  int64_t numHeads = c.numHeads / shard.size, innerDim = c.innerDim() / shard.size;
  int64_t batch = ids.size(0), length = ids.size(1);
  at::Tensor x = at::embedding(param(p, "shared.weight"), ids);
  at::Tensor maskBias;
  if (mask.defined())
    maskBias = (1.0 - mask.to(at::kFloat)).view({batch, 1, 1, length}) *
               std::numeric_limits<float>::lowest();
  at::Tensor bias;
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string block = "encoder.block." + std::to_string(i) + ".";
    std::string attn = block + "layer.0.SelfAttention.";
    if (i == 0 || c.umt5) {
      bias = t5PositionBias(c, param(p, attn + "relative_attention_bias.weight"), length);
      if (maskBias.defined())
        bias = bias + maskBias;
    }
    at::Tensor h = rmsNorm(x, param(p, block + "layer.0.layer_norm.weight"), c.eps);
    at::Tensor q = heads(linear(h, p, attn + "q", false), numHeads);
    at::Tensor k = heads(linear(h, p, attn + "k", false), numHeads);
    at::Tensor v = heads(linear(h, p, attn + "v", false), numHeads);
    at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) + bias;
    at::Tensor out = at::matmul(at::softmax(scores, -1), v)
                         .transpose(1, 2)
                         .reshape({batch, length, innerDim});
    x = x + rowLinear(out, p, attn + "o", false, shard);
    std::string ff = block + "layer.1.DenseReluDense.";
    h = rmsNorm(x, param(p, block + "layer.1.layer_norm.weight"), c.eps);
    at::Tensor inner = c.gated ? activate(linear(h, p, ff + "wi_0", false), c.activation) *
                                     linear(h, p, ff + "wi_1", false)
                               : activate(linear(h, p, ff + "wi", false), c.activation);
    x = x + rowLinear(inner, p, ff + "wo", false, shard);
  }
  return {rmsNorm(x, param(p, "encoder.final_layer_norm.weight"), c.eps), {}, {}};
}

at::Tensor layerNorm(const at::Tensor &x, const EncoderParameters &p, const std::string &name,
                     double eps) {
  return at::layer_norm(x, {x.size(-1)}, param(p, name + ".weight"), param(p, name + ".bias"),
                        eps);
}

EncoderOutputs runClip(const ClipTextConfig &c, const EncoderParameters &p,
                       const at::Tensor &ids, const EncoderShard &shard) {
  int64_t numHeads = c.numHeads / shard.size, inner = c.hidden / shard.size;
  int64_t batch = ids.size(0), length = ids.size(1);
  at::Tensor x = at::embedding(param(p, "text_model.embeddings.token_embedding.weight"), ids) +
                 param(p, "text_model.embeddings.position_embedding.weight").narrow(0, 0, length);
  // The causal mask as transformers builds it: the float32 minimum above
  // the diagonal.
  at::Tensor causal = at::full({length, length}, std::numeric_limits<float>::lowest())
                          .triu(1)
                          .view({1, 1, length, length});
  double scale = 1.0 / std::sqrt(double(c.headDim()));
  at::Tensor penultimate;
  for (int64_t i = 0; i < c.numLayers; ++i) {
    if (i == c.numLayers - 1)
      penultimate = x;
    std::string layer = "text_model.encoder.layers." + std::to_string(i) + ".";
    at::Tensor h = layerNorm(x, p, layer + "layer_norm1", c.eps);
    at::Tensor q = heads(linear(h, p, layer + "self_attn.q_proj", true), numHeads);
    at::Tensor k = heads(linear(h, p, layer + "self_attn.k_proj", true), numHeads);
    at::Tensor v = heads(linear(h, p, layer + "self_attn.v_proj", true), numHeads);
    at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) * scale + causal;
    at::Tensor out = at::matmul(at::softmax(scores, -1), v)
                         .transpose(1, 2)
                         .reshape({batch, length, inner});
    x = x + rowLinear(out, p, layer + "self_attn.out_proj", true, shard);
    h = layerNorm(x, p, layer + "layer_norm2", c.eps);
    h = rowLinear(activate(linear(h, p, layer + "mlp.fc1", true), c.activation), p,
                  layer + "mlp.fc2", true, shard);
    x = x + h;
  }
  at::Tensor last = layerNorm(x, p, "text_model.final_layer_norm", c.eps);
  // transformers' pooling: the legacy eos_token_id 2 pools at the largest
  // id (CLIP's <|endoftext|> is its vocabulary's last); otherwise at the
  // first eos_token_id (argmax of a 0/1 row gives the first 1).
  at::Tensor where = c.eosTokenId == 2 ? ids.argmax(-1)
                                       : (ids == c.eosTokenId).to(at::kInt).argmax(-1);
  at::Tensor pooled = last.index({at::arange(batch), where});
  if (c.withProjection)
    pooled = at::linear(pooled, param(p, "text_projection.weight"));
  return {last, penultimate, pooled};
}

} // namespace

/// Where `wanted` is stored; throws BadInput naming the weights file and the
/// tensor when it is missing or has another shape.
static checkpoint::TensorLocation locateParameter(const checkpoint::TransformerWeights &weights,
                                                  const text::EncoderParameter &wanted) {
  checkpoint::TensorLocation where = weights.find(wanted.name);
  // T5's embedding is tied: a checkpoint stores shared.weight,
  // encoder.embed_tokens.weight, or both.
  if (!where.tensor && wanted.name == "shared.weight")
    where = weights.find("encoder.embed_tokens.weight");
  if (!where.tensor)
    where = weights.locate(wanted.name); // throws, naming the tensor
  checkStoredShape(where, wanted.name, wanted.shape, escapeInvalidUtf8(weights.configPath()));
  return where;
}

void checkEncoderParameters(const text::TextEncoderConfig &config,
                            const checkpoint::TransformerWeights &weights) {
  for (const text::EncoderParameter &wanted : text::encoderParameters(config))
    locateParameter(weights, wanted);
}

std::string encoderShardRefusal(const text::TextEncoderConfig &config, int64_t size) {
  if (size <= 1)
    return "";
  auto refuse = [&](const std::string &what, int64_t value) {
    return value % size == 0 ? std::string()
                             : what + " " + std::to_string(value) +
                                   " is not divisible by the text encoder's tp_size " +
                                   std::to_string(size);
  };
  std::string why;
  if (config.isT5()) {
    why = refuse("num_heads", config.t5.numHeads);
    if (why.empty())
      why = refuse("d_ff", config.t5.dFf);
  } else {
    why = refuse("num_attention_heads", config.clip.numHeads);
    if (why.empty())
      why = refuse("intermediate_size", config.clip.intermediate);
  }
  return why;
}

EncoderParameters loadEncoderParameters(const text::TextEncoderConfig &config,
                                        const checkpoint::TransformerWeights &weights,
                                        const EncoderShard &shard) {
  EncoderParameters out;
  for (const text::EncoderParameter &wanted : text::encoderParameters(config)) {
    at::Tensor whole = readWholeTensor(locateParameter(weights, wanted), wanted.name,
                                       wanted.shape, escapeInvalidUtf8(weights.configPath()));
    int dim = text::encoderShardDim(wanted.name);
    if (shard.size > 1 && dim >= 0) {
      int64_t part = whole.size(dim) / shard.size;
      whole = whole.narrow(dim, shard.index * part, part).clone();
    }
    out.emplace(wanted.name, std::move(whole));
  }
  return out;
}

at::Tensor t5PositionBias(const T5Config &c, const at::Tensor &table, int64_t length) {
  std::vector<int64_t> buckets(size_t(length * length));
  for (int64_t q = 0; q < length; ++q)
    for (int64_t k = 0; k < length; ++k)
      buckets[size_t(q * length + k)] = text::t5RelativeBucket(k, q, c.buckets, c.maxDistance);
  at::Tensor index = at::from_blob(buckets.data(), {length, length}, at::kLong).clone();
  // [L, L, heads] -> [1, heads, L, L]
  return at::embedding(table, index).permute({2, 0, 1}).unsqueeze(0);
}

EncoderOutputs runTextEncoder(const text::TextEncoderConfig &config,
                              const EncoderParameters &parameters, const at::Tensor &ids,
                              const at::Tensor &mask, const EncoderShard &shard) {
  if (config.isT5())
    return runT5(config.t5, parameters, ids, mask, shard);
  if (ids.size(1) > config.clip.maxPositions)
    throw BadInput(escapeInvalidUtf8(config.path()) + ": " + std::to_string(ids.size(1)) +
                   " tokens exceed max_position_embeddings " +
                   std::to_string(config.clip.maxPositions));
  return runClip(config.clip, parameters, ids, shard);
}

} // namespace ditc::runtime
