//===- Tokenizers.h - a prompt to token ids, as the pipeline's tokenizer -*- C++ -*-===//
//
// The tokenizers diffusers loads from a snapshot's tokenizer*/ folders,
// reproduced so that the same prompt gives the same ids:
//
//  - CLIPTokenizer (FLUX's `tokenizer`, SD3's `tokenizer` and
//    `tokenizer_2`): byte-level BPE over vocab.json and merges.txt, with
//    transformers' normalisation when ftfy is not installed (its
//    BasicTokenizer: control characters dropped, CJK ideographs spaced,
//    NFC, lower case, accents kept), the pre-tokenising pattern, <|startoftext|>
//    ... <|endoftext|>, truncation and padding to model_max_length (77).
//  - T5Tokenizer / T5TokenizerFast (T5 and UMT5): SentencePiece over
//    spiece.model (Debian's libsentencepiece), </s> appended, padded with
//    <pad>.
//
// Special tokens (bos, eos, unk, pad and every added token) come from
// tokenizer_config.json and special_tokens_map.json; a special token's text
// inside a prompt is that token, as transformers splits it out before
// tokenising. Every file is untrusted: missing, oversized, malformed or
// inconsistent files throw BadInput naming the file and the field.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_TEXT_TOKENIZERS_H
#define DITC_RUNTIME_TEXT_TOKENIZERS_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ditc::runtime {

/// One prompt's ids, padded to the requested length.
struct TokenizedPrompt {
  std::vector<int64_t> ids;
  /// 1 for the prompt's tokens (special ones included), 0 for padding.
  std::vector<int64_t> mask;
  /// Tokens before padding, special ones included.
  int64_t length = 0;
  /// Tokens the prompt would have had without truncation (specials
  /// included); larger than `length` when it was truncated.
  int64_t untruncatedLength = 0;
  bool truncated() const { return untruncatedLength > length; }
};

/// `body` framed as transformers frames one sequence: `bos` first (none
/// when negative), `eos` last, the body truncated to leave them room in
/// `maxLength`, then padded with `pad`.
TokenizedPrompt frameTokens(const std::vector<int64_t> &body, int64_t bos, int64_t eos,
                            int64_t pad, int64_t maxLength);

class Tokenizer {
public:
  virtual ~Tokenizer() = default;
  /// `prompt` (valid UTF-8, else BadInput naming `what`) as ids with the
  /// start and end tokens, truncated to `maxLength` and padded to it.
  virtual TokenizedPrompt encode(const std::string &prompt, int64_t maxLength,
                                 const std::string &what) const = 0;
  /// The tokens of `prompt` before special tokens, truncation and padding.
  virtual std::vector<std::string> pieces(const std::string &prompt) const = 0;
  /// The tokenizer's own maximum length (tokenizer_config.json's
  /// model_max_length), or 0 when it states none.
  virtual int64_t modelMaxLength() const = 0;
  virtual int64_t padId() const = 0;
  virtual int64_t eosId() const = 0;
  /// The folder it was read from, for messages.
  virtual const std::string &folder() const = 0;
};

/// Opens the tokenizer folder `dir` of the class model_index.json names
/// (`className`: CLIPTokenizer, CLIPTokenizerFast, T5Tokenizer,
/// T5TokenizerFast). Throws BadInput naming the file and the field.
std::unique_ptr<Tokenizer> openTokenizer(const std::string &dir,
                                         const std::string &className);

/// Opens the tokenizer folder `dir` of the class its tokenizer_config.json
/// names (`tokenizer_class`), as `dit-run --tokenize` does.
std::unique_ptr<Tokenizer> openTokenizerFolder(const std::string &dir);

/// The longest prompt ditc tokenizes: far beyond any pipeline's context
/// (T5's 512 tokens), small enough that tokenizing is quick.
constexpr size_t kMaxPromptBytes = size_t(1) << 20;

/// Throws BadInput naming `what` when `text` is longer than
/// kMaxPromptBytes, or is not well-formed UTF-8 (naming the first bad
/// byte's offset).
void requireUtf8(const std::string &text, const std::string &what);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_TEXT_TOKENIZERS_H
