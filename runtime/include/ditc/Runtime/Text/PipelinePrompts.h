//===- PipelinePrompts.h - a prompt to the transformer's text inputs -*- C++ -*-===//
//
// diffusers' encode_prompt for the pipelines whose encoders ditc runs,
// reading model_index.json's tokenizers and text encoders from a pipeline
// folder:
//
//  - FluxPipeline: CLIP's pooled output (the EOS token after the final
//    norm), and T5's states for the prompt padded to max_sequence_length,
//    unmasked.
//  - StableDiffusion3Pipeline: CLIP-L's and CLIP-G's penultimate states
//    concatenated on channels and zero-padded to T5's width, then T5's
//    tokens after them; the pooled output is both CLIPs' projections
//    concatenated.
//  - WanPipeline: the prompt cleaned (HTML character references unescaped
//    twice as Python's html.unescape does, whitespace collapsed), UMT5 run with its attention mask, the states past the true
//    length zeroed.
//
// max_sequence_length is the plan's text tokens (less CLIP's 77 for SD3),
// so the embeddings have exactly the shape the plan's transformer reads.
// Other pipelines exit 2 and point to --text-embeds.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_TEXT_PIPELINEPROMPTS_H
#define DITC_RUNTIME_TEXT_PIPELINEPROMPTS_H

#include "ditc/Runtime/Text/TextEncoders.h"
#include "ditc/Runtime/Text/Tokenizers.h"

#include <memory>
#include <string>
#include <vector>

namespace ditc::checkpoint {
class TransformerWeights;
}

namespace ditc::runtime {

struct Manifest;

/// One prompt per batch item, encoded.
struct PromptEmbeddings {
  at::Tensor text;   // [B, text_tokens, text_embed_dim]
  at::Tensor pooled; // [B, pooled_dim]; undefined for Wan
};

class PipelinePrompts {
public:
  /// Opens `snapshot`'s tokenizers and text encoders for the plan `m`: the
  /// pipeline class must be one ditc encodes for, and the encoders' widths
  /// and lengths must give the plan's text_embed_dim, pooled_dim and
  /// text_tokens. With `readParameters`, reads every encoder's parameters
  /// (else only configs and tokenizers: a check). Throws BadInput naming
  /// the file, the field and the plan's value. Under a `shard` (the plan's
  /// text_encoder tp_size, this rank's index in its group) each encoder is
  /// read split, after its head counts and widths are checked against the
  /// split and its layers against the plan's all-reduce count.
  PipelinePrompts(const std::string &snapshot, const Manifest &m, bool readParameters,
                  const EncoderShard &shard = {});
  ~PipelinePrompts();

  /// Encodes `prompts` (one per batch item); `what` names them in messages
  /// ("--prompt", "--negative-prompt", "FILE line 3: prompt"). A prompt
  /// that needs truncation is truncated as the pipeline truncates it, with
  /// a warning on stderr naming the tokenizer and the tokens dropped.
  PromptEmbeddings encode(const std::vector<std::string> &prompts,
                          const std::string &what) const;

  /// Sets how a split encoder sums its partial outputs over its group
  /// (once the process groups exist).
  void setAllReduce(std::function<void(at::Tensor &)> allReduce);
  /// Frees every encoder's parameters (the plan's text_encoder offload):
  /// encode may not be called again.
  void release();

  /// Float32 bytes of this rank's share of every encoder's parameters.
  int64_t parameterBytes() const;
  /// An upper estimate of one encode's float32 activations for `batch`
  /// prompts: per encoder, its hidden states, Q, K, V and the feed-forward's
  /// inner states at its length, and one layer's attention scores and
  /// probabilities; the largest encoder's.
  int64_t encodePeakBytes(int64_t batch) const;

  /// Wan's prompt_clean without ftfy: Python's html.unescape twice, strip,
  /// runs of Unicode White_Space to one space, strip.
  static std::string wanPromptClean(const std::string &prompt);

  struct Encoder {
    std::string name; // "text_encoder", "text_encoder_2", ...
    text::TextEncoderConfig config;
    EncoderParameters parameters;
    std::unique_ptr<Tokenizer> tokenizer;
  };

private:
  /// The tokens `encoder` reads: CLIP's 77; T5's the plan's text tokens,
  /// less CLIP's 77 for SD3.
  int64_t tokensOf(const Encoder &encoder) const;
  /// Tokenizes `prompts` for `encoder` at tokensOf(encoder) and runs it.
  EncoderOutputs run(const Encoder &encoder, const std::vector<std::string> &prompts,
                     bool masked, const std::string &what, at::Tensor *mask) const;

  std::string family; // "flux", "sd3", "wan"
  std::vector<Encoder> encoders;
  EncoderShard shard;
  bool released = false;
  int64_t textTokens = 0, width = 0, pooledDim = 0;
};

/// Whether --prompt can work for the plan's family; the message when not.
std::string promptUnsupportedReason(const Manifest &m);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_TEXT_PIPELINEPROMPTS_H
