//===- SpecialTokens.cpp - a tokenizer folder's special tokens ------------===//
#include "ditc/Runtime/Text/SpecialTokens.h"

#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Utf8.h"

#include <sys/stat.h>

namespace ditc::runtime {

using nlohmann::json;

namespace {

constexpr size_t kMaxTokenBytes = 256;
constexpr size_t kMaxAddedTokens = 4096;

bool exists(const std::string &path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0;
}

/// A special token's text: a string, or an AddedToken object's "content".
/// Null (transformers' "no such token") gives nothing.
std::optional<std::string> tokenText(const JsonObject &object, const std::string &field,
                                     const json &value) {
  if (value.is_null())
    return std::nullopt;
  const json *text = &value;
  if (value.is_object()) {
    if (!value.contains("content"))
      object.failAt(field, &value, "is an object without \"content\"; expected "
                                   "the token's text or {\"content\": text}");
    text = &value.at("content");
  }
  if (!text->is_string())
    object.failAt(field, &value, "is " + describeJson(value) +
                                     "; expected the token's text or {\"content\": text}");
  std::string out = text->get<std::string>();
  if (out.empty() || out.size() > kMaxTokenBytes ||
      escapeInvalidUtf8(out).size() != out.size())
    object.failAt(field, &value, "must be 1 to " + std::to_string(kMaxTokenBytes) +
                                     " bytes of UTF-8 text without control characters");
  return out;
}

void readRoles(const JsonObject &object, SpecialTokens &tokens) {
  for (const char *role : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    if (!object.raw().contains(role))
      continue;
    std::optional<std::string> text = tokenText(object, role, object.raw().at(role));
    std::string name = std::string(role).substr(0, 3);
    if (text) {
      tokens.byRole[name] = *text;
      tokens.added.emplace(*text, std::nullopt);
    }
  }
  if (object.raw().contains("additional_special_tokens")) {
    const json &list = object.raw().at("additional_special_tokens");
    if (!list.is_array() || list.size() > kMaxAddedTokens)
      object.fail("additional_special_tokens",
                  "must be a list of at most " + std::to_string(kMaxAddedTokens) + " tokens");
    for (size_t i = 0; i < list.size(); ++i)
      if (auto text = tokenText(object, "additional_special_tokens[" + std::to_string(i) + "]",
                                list[i]))
        tokens.added.emplace(*text, std::nullopt);
  }
}

} // namespace

SpecialTokens readSpecialTokens(const std::string &dir,
                                const std::map<std::string, std::string> &defaults) {
  SpecialTokens tokens;
  tokens.byRole = defaults;
  tokens.configPath = dir + "/tokenizer_config.json";
  std::string shown = escapeInvalidUtf8(tokens.configPath);
  json config = JsonObject::parseFile(tokens.configPath);
  JsonObject object(shown, &config);
  readRoles(object, tokens);
  if (config.contains("model_max_length")) {
    const json &value = config.at("model_max_length");
    if (!value.is_number() || !(value.get<double>() >= 1))
      object.fail("model_max_length", "must be a positive number");
    double length = value.get<double>();
    // transformers writes a huge value (1e30) for "no limit".
    tokens.modelMaxLength = length <= 1 << 20 ? int64_t(length) : 0;
  }
  if (config.contains("added_tokens_decoder")) {
    JsonObject decoder = object.getObject("added_tokens_decoder");
    if (decoder.raw().size() > kMaxAddedTokens)
      decoder.fail("", "lists more than " + std::to_string(kMaxAddedTokens) + " tokens");
    for (auto it = decoder.raw().begin(); it != decoder.raw().end(); ++it) {
      int64_t id = -1;
      try {
        size_t used = 0;
        id = std::stoll(it.key(), &used);
        if (used != it.key().size())
          id = -1;
      } catch (const std::exception &) {
        id = -1;
      }
      if (id < 0 || id >= (int64_t(1) << 31))
        decoder.fail(it.key(), "is not a token id (a non-negative integer below 2^31)");
      std::optional<std::string> text = tokenText(decoder, it.key(), it.value());
      if (text)
        tokens.added[*text] = id;
    }
  }
  std::string map = dir + "/special_tokens_map.json";
  if (exists(map)) {
    json special = JsonObject::parseFile(map);
    readRoles(JsonObject(escapeInvalidUtf8(map), &special), tokens);
  }
  for (const auto &role : tokens.byRole)
    tokens.added.emplace(role.second, std::nullopt);
  return tokens;
}

SpecialTokenSplitter::SpecialTokenSplitter(const std::vector<std::string> &special) {
  nodes.emplace_back();
  for (const std::string &token : special) {
    int32_t at = 0;
    for (unsigned char byte : token) {
      auto it = nodes[size_t(at)].next.find(byte);
      if (it == nodes[size_t(at)].next.end()) {
        nodes.emplace_back();
        int32_t created = int32_t(nodes.size() - 1);
        nodes[size_t(at)].next.emplace(byte, created);
        at = created;
      } else {
        at = it->second;
      }
    }
    if (!token.empty())
      nodes[size_t(at)].end = true;
  }
}

std::vector<PromptPiece> SpecialTokenSplitter::split(const std::string &prompt) const {
  std::vector<PromptPiece> pieces;
  size_t start = 0, at = 0;
  while (at < prompt.size()) {
    // The longest special token starting at `at`.
    size_t longest = 0;
    int32_t node = 0;
    for (size_t k = at; k < prompt.size(); ++k) {
      auto it = nodes[size_t(node)].next.find((unsigned char)prompt[k]);
      if (it == nodes[size_t(node)].next.end())
        break;
      node = it->second;
      if (nodes[size_t(node)].end)
        longest = k - at + 1;
    }
    if (longest == 0) {
      ++at;
      continue;
    }
    if (at > start)
      pieces.push_back({prompt.substr(start, at - start), false});
    pieces.push_back({prompt.substr(at, longest), true});
    at += longest;
    start = at;
  }
  if (start < prompt.size())
    pieces.push_back({prompt.substr(start), false});
  return pieces;
}

std::vector<PromptPiece> splitOnSpecialTokens(const std::string &prompt,
                                              const std::vector<std::string> &special) {
  return SpecialTokenSplitter(special).split(prompt);
}

} // namespace ditc::runtime
