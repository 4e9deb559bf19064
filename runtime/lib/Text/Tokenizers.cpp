//===- Tokenizers.cpp - a prompt to token ids, as the pipeline's tokenizer ===//
#include "ditc/Runtime/Text/Tokenizers.h"

#include "ditc/Runtime/Text/ClipTokenizer.h"
#include "ditc/Runtime/Text/SentencePieceTokenizer.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>

namespace ditc::runtime {

void requireUtf8(const std::string &text, const std::string &what) {
  if (text.size() > kMaxPromptBytes)
    throw BadInput(what + " is " + std::to_string(text.size()) + " bytes; a prompt may have at most " +
                   std::to_string(kMaxPromptBytes) + " (1 MiB)");
  for (size_t i = 0; i < text.size();) {
    size_t length = utf8SequenceLength(text, i);
    if (length == 0)
      throw BadInput(what + " is not valid UTF-8: byte " + std::to_string(i) + " (\\x" +
                     "0123456789abcdef"[(unsigned char)text[i] >> 4] +
                     "0123456789abcdef"[(unsigned char)text[i] & 15] +
                     ") starts no well-formed sequence; prompts are UTF-8 text");
    i += length;
  }
}

TokenizedPrompt frameTokens(const std::vector<int64_t> &body, int64_t bos, int64_t eos,
                            int64_t pad, int64_t maxLength) {
  size_t specials = bos >= 0 ? 2 : 1;
  if (maxLength < int64_t(specials))
    throw std::invalid_argument("frameTokens: maxLength below the special tokens");
  TokenizedPrompt out;
  out.untruncatedLength = int64_t(body.size() + specials);
  if (bos >= 0)
    out.ids.push_back(bos);
  size_t kept = std::min(body.size(), size_t(maxLength) - specials);
  out.ids.insert(out.ids.end(), body.begin(), body.begin() + kept);
  out.ids.push_back(eos);
  out.length = int64_t(out.ids.size());
  out.mask.assign(out.ids.size(), 1);
  out.ids.resize(size_t(maxLength), pad);
  out.mask.resize(size_t(maxLength), 0);
  return out;
}

std::unique_ptr<Tokenizer> openTokenizer(const std::string &dir,
                                         const std::string &className) {
  if (className == "CLIPTokenizer")
    return std::make_unique<ClipTokenizer>(dir);
  // The fast class normalises differently (no CJK spacing, no control
  // characters dropped): refused rather than tokenized another way.
  if (className == "CLIPTokenizerFast")
    throw BadInput(escapeInvalidUtf8(dir) + ": tokenizer class CLIPTokenizerFast is not "
                   "supported: ditc reproduces CLIPTokenizer, the class the FLUX and SD3 "
                   "pipelines name, and the fast class normalises differently");
  if (className == "T5Tokenizer" || className == "T5TokenizerFast")
    return std::make_unique<SentencePieceTokenizer>(dir);
  throw BadInput(escapeInvalidUtf8(dir) + ": tokenizer class '" +
                 escapeInvalidUtf8(className) +
                 "' is not supported; ditc reads CLIPTokenizer, T5Tokenizer and "
                 "T5TokenizerFast");
}

std::unique_ptr<Tokenizer> openTokenizerFolder(const std::string &dir) {
  std::string path = dir + "/tokenizer_config.json";
  nlohmann::json config = JsonObject::parseFile(path);
  JsonObject object(escapeInvalidUtf8(path), &config);
  return openTokenizer(dir, object.getString("tokenizer_class"));
}

} // namespace ditc::runtime
