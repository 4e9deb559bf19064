//===- SpecialTokens.h - a tokenizer folder's special tokens ----*- C++ -*-===//
//
// tokenizer_config.json and special_tokens_map.json, as transformers reads
// them: bos, eos, unk and pad (a string or an AddedToken object, {"content":
// ...}), additional_special_tokens, added_tokens_decoder and
// model_max_length; special_tokens_map.json's values win. And the split of
// a prompt around the special tokens' text, which transformers does before
// tokenising: "a </s> b" is "a ", the token </s>, " b".
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_TEXT_SPECIALTOKENS_H
#define DITC_RUNTIME_TEXT_SPECIALTOKENS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

struct SpecialTokens {
  std::string configPath; // tokenizer_config.json, for messages
  /// bos, eos, unk, pad by role; a role the files leave out keeps the
  /// class's default (given to readSpecialTokens).
  std::map<std::string, std::string> byRole;
  /// Every special token's text with its id where the files state one
  /// (added_tokens_decoder); the tokenizer resolves the rest.
  std::map<std::string, std::optional<int64_t>> added;
  /// model_max_length, or 0 when absent or absurd (transformers writes
  /// 1e30 for "no limit").
  int64_t modelMaxLength = 0;

  const std::string &role(const std::string &name) const { return byRole.at(name); }
};

/// Reads `dir`/tokenizer_config.json (required) and
/// `dir`/special_tokens_map.json (optional); `defaults` gives each role's
/// text when neither file states it. Throws BadInput naming the file and
/// the field.
SpecialTokens readSpecialTokens(const std::string &dir,
                                const std::map<std::string, std::string> &defaults);

/// One piece of a prompt: plain text, or the text of a special token.
struct PromptPiece {
  std::string text;
  bool special = false;
};

/// Splits prompts around every occurrence of special tokens' texts, the
/// longest match at the leftmost position; empty plain pieces are dropped.
/// A byte trie: a prompt costs at most its bytes times the longest token's
/// (256), whatever the number of tokens.
class SpecialTokenSplitter {
public:
  explicit SpecialTokenSplitter(const std::vector<std::string> &special);
  std::vector<PromptPiece> split(const std::string &prompt) const;

private:
  struct Node {
    std::map<unsigned char, int32_t> next;
    bool end = false;
  };
  std::vector<Node> nodes;
};

/// SpecialTokenSplitter(special).split(prompt).
std::vector<PromptPiece> splitOnSpecialTokens(const std::string &prompt,
                                              const std::vector<std::string> &special);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_TEXT_SPECIALTOKENS_H
