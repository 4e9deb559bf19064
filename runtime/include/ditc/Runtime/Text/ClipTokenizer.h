//===- ClipTokenizer.h - CLIP's byte-level BPE ------------------*- C++ -*-===//
//
// transformers' CLIPTokenizer, as diffusers loads it for FLUX and SD3 (the
// slow class model_index.json names) in an environment without ftfy:
//
//  1. normalise as its BasicTokenizer(strip_accents=False,
//     do_split_on_punc=False) does: drop NUL, U+FFFD and control or format
//     characters, turn whitespace into spaces, put spaces around CJK
//     ideographs, NFC, split on whitespace, lower-case each word (full case
//     mapping, ICU's root locale), join with single spaces;
//  2. split with CLIP's pattern: <|startoftext|>, <|endoftext|>, the
//     contractions 's 't 're 've 'm 'll 'd, a run of letters, one digit, or
//     a run of anything else that is not whitespace;
//  3. map each piece's UTF-8 bytes to GPT-2's printable characters and apply
//     merges.txt's merges by rank, the last symbol marked with </w>;
//  4. look each token up in vocab.json, unknown tokens as unk.
//
// Merging by rank runs on a heap, one rank at a time, so a long word costs
// O(n log n) and gives the merges the quadratic reference loop gives.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_TEXT_CLIPTOKENIZER_H
#define DITC_RUNTIME_TEXT_CLIPTOKENIZER_H

#include "ditc/Runtime/Text/SpecialTokens.h"
#include "ditc/Runtime/Text/Tokenizers.h"

#include <memory>
#include <optional>
#include <unordered_map>

namespace ditc::runtime {

class ClipTokenizer final : public Tokenizer {
public:
  /// Reads vocab.json, merges.txt, tokenizer_config.json and
  /// special_tokens_map.json from `dir`.
  explicit ClipTokenizer(const std::string &dir);

  TokenizedPrompt encode(const std::string &prompt, int64_t maxLength,
                         const std::string &what) const override;
  std::vector<std::string> pieces(const std::string &prompt) const override;
  int64_t modelMaxLength() const override { return special.modelMaxLength; }
  int64_t padId() const override { return pad; }
  int64_t eosId() const override { return eos; }
  const std::string &folder() const override { return dir; }

  /// Step 1 alone, for tests: the text the pattern sees.
  static std::string normalize(const std::string &text);

private:
  /// The BPE tokens of one pattern match (already byte-mapped).
  std::vector<std::string> bpe(const std::string &word) const;
  /// Every token of `prompt`, special ones included, in order.
  std::vector<std::string> tokens(const std::string &prompt) const;
  /// A token's id: an added token's, else the vocabulary's; none when
  /// neither holds it.
  std::optional<int64_t> lookup(const std::string &token) const;
  /// lookup, or unk.
  int64_t idOf(const std::string &token) const;

  std::string dir;
  SpecialTokens special;
  std::unique_ptr<SpecialTokenSplitter> splitter;
  std::unordered_map<std::string, int64_t> vocab;
  /// "first second" -> rank (merges.txt's line order).
  std::unordered_map<std::string, int64_t> ranks;
  int64_t bos = 0, eos = 0, unk = 0, pad = 0;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_TEXT_CLIPTOKENIZER_H
