//===- TokenizerFuzzer.cpp - fuzz CLIP's tokenizer folder and a prompt ----===//
//
// The input is a JSON object {"vocab": V, "merges": M, "tokenizer_config":
// C, "special_tokens_map": S?, "prompt": P, "max_length": N?}: each part is
// written as the file of a tokenizer folder (a JSON value, or a string
// written verbatim), the folder is opened as dit-run opens it, and the
// prompt is encoded. Anything that is not such an object is the prompt, for
// the seed tokenizer in corpus/tokenizer-folder. A folder or prompt must end
// in ids or BadInput, never in a crash, a hang or unbounded memory.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "ditc/Runtime/Text/ClipTokenizer.h"
#include "ditc/Support/BadInput.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sys/stat.h>

using nlohmann::json;

namespace {

void writePart(const std::string &path, const json &value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  ditc::fuzz::writeBytes(path, reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

/// A small valid folder: the byte alphabet, two merges, CLIP's specials.
void writeSeedFolder(const std::string &dir) {
  json vocab = json::object();
  for (int c = '!'; c <= '~'; ++c) {
    vocab[std::string(1, char(c))] = vocab.size();
    vocab[std::string(1, char(c)) + "</w>"] = vocab.size();
  }
  vocab["ca"] = vocab.size();
  vocab["cat</w>"] = vocab.size();
  vocab["<|startoftext|>"] = vocab.size();
  vocab["<|endoftext|>"] = vocab.size();
  writePart(dir + "/vocab.json", vocab);
  writePart(dir + "/merges.txt", std::string("#version: 0.2\nc a\nca t</w>\n"));
  writePart(dir + "/tokenizer_config.json", json{{"model_max_length", 77}});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string dir = ditc::fuzz::scratchDir() + "/tokenizer";
  ::mkdir(dir.c_str(), 0700);
  std::string bytes(reinterpret_cast<const char *>(data), size);
  json input = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  std::string prompt = bytes;
  int64_t maxLength = 77;
  std::remove((dir + "/special_tokens_map.json").c_str());
  if (input.is_object() && input.contains("vocab") && input.contains("merges") &&
      input.contains("tokenizer_config")) {
    writePart(dir + "/vocab.json", input["vocab"]);
    writePart(dir + "/merges.txt", input["merges"]);
    writePart(dir + "/tokenizer_config.json", input["tokenizer_config"]);
    if (input.contains("special_tokens_map"))
      writePart(dir + "/special_tokens_map.json", input["special_tokens_map"]);
    prompt = input.value("prompt", json("")).is_string() ? input.value("prompt", std::string())
                                                         : std::string();
    if (input.contains("max_length") && input["max_length"].is_number_integer())
      maxLength = std::clamp<int64_t>(input["max_length"].get<int64_t>(), 2, 4096);
  } else {
    writeSeedFolder(dir);
  }
  try {
    ditc::runtime::ClipTokenizer tokenizer(dir);
    ditc::runtime::TokenizedPrompt out = tokenizer.encode(prompt, maxLength, "the prompt");
    if (int64_t(out.ids.size()) != maxLength || out.length > maxLength ||
        out.untruncatedLength < out.length)
      std::abort();
  } catch (const ditc::BadInput &error) {
    ditc::fuzz::noteRefusal(error.what());
  }
  return 0;
}
