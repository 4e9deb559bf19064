//===- TextEncoders.h - T5, UMT5 and CLIP text encoders ---------*- C++ -*-===//
//
// The encoder stacks of transformers' T5EncoderModel, UMT5EncoderModel,
// CLIPTextModel and CLIPTextModelWithProjection in float32 on libtorch,
// under their state-dict names (ditc/Text/EncoderConfig.h lists them):
//
//  - T5/UMT5: token embedding; per layer an RMS-normed self-attention
//    without score scaling, plus a relative position bias (the first layer's,
//    shared by all, for T5; each layer's own for UMT5) and the padding mask,
//    then an RMS-normed gated-GELU (or ReLU) feed-forward; a final RMS norm.
//  - CLIP: token and position embeddings; per layer a pre-LayerNorm causal
//    self-attention and MLP (quick GELU or GELU); a final LayerNorm. The
//    pooled output is the final states at the EOS token (the first
//    `eos_token_id`, or the largest id for the legacy value 2), projected
//    for the WithProjection class; the penultimate states are the input of
//    the last layer, before the final norm (SD3 reads those).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_TEXT_TEXTENCODERS_H
#define DITC_RUNTIME_TEXT_TEXTENCODERS_H

#include "ditc/Text/EncoderConfig.h"

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <string>

namespace ditc::checkpoint {
class TransformerWeights;
}

namespace ditc::runtime {

/// The encoder's parameters as float32 tensors, by name.
using EncoderParameters = std::map<std::string, at::Tensor>;

/// A rank's share of an encoder under tensor parallelism (the plan's
/// text_encoder tp_size), as ditc's dit-partition-text-encoder pass splits
/// it: the heads and the feed-forward's inner width `size` ways, this rank
/// holding the `index`-th part; `allReduce` sums the partial outputs of a
/// row-split linear over the group, in place. The default is whole.
struct EncoderShard {
  int64_t size = 1, index = 0;
  std::function<void(at::Tensor &)> allReduce;
};

/// The all-reduces one encoder layer makes under TP (after the attention
/// output and after the feed-forward), as the plan counts them.
constexpr int64_t kEncoderAllReducesPerLayer = 2;

/// Why `config` cannot be split `size` ways (a head count or width it does
/// not divide), or "".
std::string encoderShardRefusal(const text::TextEncoderConfig &config, int64_t size);

/// Reads every parameter of `config` from a text encoder folder's weights
/// (F32, F16 or BF16, widened to float32); T5's embedding from
/// shared.weight or, when only that is stored, encoder.embed_tokens.weight.
/// Throws BadInput naming the weights file and the tensor when one is
/// missing, has another shape or holds a NaN.
/// Under a `shard`, keeps this rank's part of each split parameter.
EncoderParameters loadEncoderParameters(const text::TextEncoderConfig &config,
                                        const checkpoint::TransformerWeights &weights,
                                        const EncoderShard &shard = {});

/// The names and shapes of loadEncoderParameters alone, nothing read.
void checkEncoderParameters(const text::TextEncoderConfig &config,
                            const checkpoint::TransformerWeights &weights);

struct EncoderOutputs {
  at::Tensor last;        // [B, L, width]: after the final norm
  at::Tensor penultimate; // [B, L, width]: CLIP only, the last layer's input
  at::Tensor pooled;      // [B, width or projection_dim]: CLIP only
};

/// Runs the encoder on `ids` [B, L] (int64). `mask` [B, L] (1 for tokens,
/// 0 for padding) is T5's attention mask; undefined runs unmasked, as FLUX
/// and SD3 run T5. CLIP ignores it (the pipelines pass none). `parameters`
/// are `shard`'s part, loaded with it.
EncoderOutputs runTextEncoder(const text::TextEncoderConfig &config,
                              const EncoderParameters &parameters, const at::Tensor &ids,
                              const at::Tensor &mask, const EncoderShard &shard = {});

/// T5's bias table for `length` tokens: [1, heads, L, L] from a layer's
/// relative_attention_bias [buckets, heads].
at::Tensor t5PositionBias(const text::T5Config &config, const at::Tensor &table,
                          int64_t length);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_TEXT_TEXTENCODERS_H
