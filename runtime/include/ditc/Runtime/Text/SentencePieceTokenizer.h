//===- SentencePieceTokenizer.h - T5's and UMT5's tokenizer -----*- C++ -*-===//
//
// transformers' T5Tokenizer over the snapshot's spiece.model, through
// Debian's libsentencepiece, run in the dit-sentencepiece helper process
// (that library's own protobuf cannot share a process with libtorch's):
// each piece of the prompt between special
// tokens is encoded by the model (its own normaliser: NFKC, whitespace
// collapsed, a dummy prefix), </s> is appended, and the ids are truncated
// to leave room for it and padded with <pad>. T5TokenizerFast's
// tokenizer.json is converted from the same model; ditc reads the model.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_TEXT_SENTENCEPIECETOKENIZER_H
#define DITC_RUNTIME_TEXT_SENTENCEPIECETOKENIZER_H

#include "ditc/Runtime/Text/SpecialTokens.h"
#include "ditc/Runtime/Text/Tokenizers.h"

#include <map>
#include <memory>

namespace ditc::runtime {

class SentencePieceProcess;

class SentencePieceTokenizer final : public Tokenizer {
public:
  /// Reads spiece.model, tokenizer_config.json and special_tokens_map.json
  /// from `dir`.
  explicit SentencePieceTokenizer(const std::string &dir);
  ~SentencePieceTokenizer() override;

  TokenizedPrompt encode(const std::string &prompt, int64_t maxLength,
                         const std::string &what) const override;
  std::vector<std::string> pieces(const std::string &prompt) const override;
  int64_t modelMaxLength() const override { return special.modelMaxLength; }
  int64_t padId() const override { return pad; }
  int64_t eosId() const override { return eos; }
  const std::string &folder() const override { return dir; }

private:
  std::vector<int64_t> ids(const std::string &prompt) const;

  std::string dir;
  SpecialTokens special;
  std::unique_ptr<SpecialTokenSplitter> splitter;
  std::map<std::string, int64_t> specialIds;
  /// mutable: encoding talks to the helper process.
  std::unique_ptr<SentencePieceProcess> model;
  int64_t eos = 1, pad = 0;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_TEXT_SENTENCEPIECETOKENIZER_H
