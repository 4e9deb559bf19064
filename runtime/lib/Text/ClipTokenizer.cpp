//===- ClipTokenizer.cpp - CLIP's byte-level BPE --------------------------===//
#include "ditc/Runtime/Text/ClipTokenizer.h"

#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Utf8.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <queue>

namespace ditc::runtime {

namespace {

constexpr int64_t kMaxVocabBytes = int64_t(64) << 20;
constexpr int64_t kMaxMergesBytes = int64_t(64) << 20;
/// transformers reads merges.txt's lines 1 to 49152 - 256 - 2 (CLIP's
/// vocabulary less the 256 byte tokens and the two special ones).
constexpr size_t kMaxMerges = 49152 - 256 - 2;

/// `text` (valid UTF-8) as code points.
std::vector<UChar32> codePoints(const std::string &text) {
  std::vector<UChar32> out;
  for (size_t i = 0; i < text.size();) {
    auto [cp, length] = decodeUtf8At(text, i);
    out.push_back(UChar32(cp));
    i += length ? length : 1;
  }
  return out;
}

std::u16string toUtf16(const std::vector<UChar32> &cps) {
  std::u16string out;
  for (UChar32 cp : cps) {
    if (cp >= 0x10000) {
      out += char16_t(U16_LEAD(cp));
      out += char16_t(U16_TRAIL(cp));
    } else {
      out += char16_t(cp);
    }
  }
  return out;
}

std::vector<UChar32> fromUtf16(const std::u16string &text) {
  std::vector<UChar32> out;
  for (size_t i = 0; i < text.size();) {
    UChar32 cp;
    U16_NEXT(text.data(), i, text.size(), cp);
    out.push_back(cp);
  }
  return out;
}

/// Runs an ICU string transform that may need a larger buffer.
template <typename Transform>
std::u16string icuTransform(const std::u16string &in, Transform transform) {
  std::u16string out(in.size() * 3 + 16, u'\0');
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = transform(in, out, status);
  if (status == U_BUFFER_OVERFLOW_ERROR) {
    out.assign(size_t(length) + 1, u'\0');
    status = U_ZERO_ERROR;
    length = transform(in, out, status);
  }
  if (U_FAILURE(status))
    throw std::runtime_error(std::string("ICU: ") + u_errorName(status));
  out.resize(size_t(length));
  return out;
}

/// transformers' _is_control: categories C*, except tab, newline and return.
bool isControl(UChar32 cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r')
    return false;
  switch (u_charType(cp)) {
  case U_CONTROL_CHAR:
  case U_FORMAT_CHAR:
  case U_UNASSIGNED:
  case U_PRIVATE_USE_CHAR:
  case U_SURROGATE:
    return true;
  default:
    return false;
  }
}

/// transformers' _is_whitespace: space, tab, newline, return, or Zs.
bool isBertWhitespace(UChar32 cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' ||
         u_charType(cp) == U_SPACE_SEPARATOR;
}

/// Python's str.isspace (what str.split() splits on): bidirectional class
/// WS, B or S, or category Zs.
bool isPythonSpace(UChar32 cp) {
  UCharDirection direction = u_charDirection(cp);
  return direction == U_WHITE_SPACE_NEUTRAL || direction == U_BLOCK_SEPARATOR ||
         direction == U_SEGMENT_SEPARATOR || u_charType(cp) == U_SPACE_SEPARATOR;
}

/// BasicTokenizer's "Chinese character": the CJK Unified Ideographs blocks.
bool isCjkIdeograph(UChar32 cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool isLetter(UChar32 cp) {
  switch (u_charType(cp)) {
  case U_UPPERCASE_LETTER:
  case U_LOWERCASE_LETTER:
  case U_TITLECASE_LETTER:
  case U_MODIFIER_LETTER:
  case U_OTHER_LETTER:
    return true;
  default:
    return false;
  }
}

bool isNumber(UChar32 cp) {
  switch (u_charType(cp)) {
  case U_DECIMAL_DIGIT_NUMBER:
  case U_LETTER_NUMBER:
  case U_OTHER_NUMBER:
    return true;
  default:
    return false;
  }
}

/// The pattern's \s: Unicode White_Space.
bool isPatternSpace(UChar32 cp) { return u_isUWhiteSpace(cp); }

/// GPT-2's byte to printable character map: the printable Latin-1 bytes map
/// to themselves, the others to 256, 257, ... in byte order.
const std::vector<std::string> &byteCharacters() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> out(256);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      appendUtf8(out[b], printable ? b : next++);
    }
    return out;
  }();
  return table;
}

/// Splits `text` (code points) with CLIP's pattern.
std::vector<std::string> patternPieces(const std::vector<UChar32> &text) {
  static const std::vector<std::vector<UChar32>> literals = [] {
    std::vector<std::vector<UChar32>> out;
    for (const char *literal : {"<|startoftext|>", "<|endoftext|>", "'s", "'t", "'re",
                                "'ve", "'m", "'ll", "'d"})
      out.push_back(codePoints(literal));
    return out;
  }();
  std::vector<std::string> pieces;
  size_t i = 0;
  auto take = [&](size_t end) {
    std::string piece;
    for (size_t k = i; k < end; ++k)
      appendUtf8(piece, text[k]);
    pieces.push_back(piece);
    i = end;
  };
  while (i < text.size()) {
    bool matched = false;
    for (const auto &literal : literals) {
      // The pattern is compiled with IGNORECASE, which matches by case
      // folding: U+017F LONG S matches 's' although it is lower case.
      if (i + literal.size() <= text.size() &&
          std::equal(literal.begin(), literal.end(), text.begin() + i, [](UChar32 a, UChar32 b) {
            return a == u_foldCase(b, U_FOLD_CASE_DEFAULT);
          })) {
        take(i + literal.size());
        matched = true;
        break;
      }
    }
    if (matched)
      continue;
    UChar32 cp = text[i];
    size_t end = i + 1;
    if (isLetter(cp)) {
      while (end < text.size() && isLetter(text[end]))
        ++end;
    } else if (isNumber(cp)) {
      // one digit per piece
    } else if (isPatternSpace(cp)) {
      ++i; // findall skips what no alternative matches
      continue;
    } else {
      while (end < text.size() && !isLetter(text[end]) && !isNumber(text[end]) &&
             !isPatternSpace(text[end]))
        ++end;
    }
    take(end);
  }
  return pieces;
}

} // namespace

std::string ClipTokenizer::normalize(const std::string &text) {
  std::vector<UChar32> cleaned;
  for (UChar32 cp : codePoints(text)) {
    if (cp == 0 || cp == 0xFFFD || isControl(cp))
      continue;
    if (isBertWhitespace(cp)) {
      cleaned.push_back(' ');
    } else if (isCjkIdeograph(cp)) {
      cleaned.insert(cleaned.end(), {' ', cp, ' '});
    } else {
      cleaned.push_back(cp);
    }
  }
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2 *nfc = unorm2_getNFCInstance(&status);
  if (U_FAILURE(status))
    throw std::runtime_error(std::string("ICU NFC: ") + u_errorName(status));
  std::u16string composed =
      icuTransform(toUtf16(cleaned), [&](const std::u16string &in, std::u16string &out,
                                         UErrorCode &error) {
        return unorm2_normalize(nfc, in.data(), int32_t(in.size()), out.data(),
                                int32_t(out.size()), &error);
      });
  std::vector<UChar32> normalized = fromUtf16(composed);
  std::string out;
  for (size_t i = 0; i < normalized.size();) {
    while (i < normalized.size() && isPythonSpace(normalized[i]))
      ++i;
    size_t end = i;
    while (end < normalized.size() && !isPythonSpace(normalized[end]))
      ++end;
    if (end == i)
      break;
    std::vector<UChar32> word(normalized.begin() + i, normalized.begin() + end);
    std::u16string lower = icuTransform(
        toUtf16(word), [](const std::u16string &in, std::u16string &o, UErrorCode &error) {
          return u_strToLower(o.data(), int32_t(o.size()), in.data(), int32_t(in.size()), "",
                              &error);
        });
    if (!out.empty())
      out += ' ';
    for (UChar32 cp : fromUtf16(lower))
      appendUtf8(out, cp);
    i = end;
  }
  return out;
}

ClipTokenizer::ClipTokenizer(const std::string &folder) : dir(folder) {
  special = readSpecialTokens(dir, {{"bos", "<|startoftext|>"},
                                    {"eos", "<|endoftext|>"},
                                    {"unk", "<|endoftext|>"},
                                    {"pad", "<|endoftext|>"}});
  std::string vocabPath = dir + "/vocab.json";
  std::string shownVocab = escapeInvalidUtf8(vocabPath);
  nlohmann::json vocabJson = JsonObject::parseText(
      readRegularFile(vocabPath, kMaxVocabBytes), shownVocab);
  if (!vocabJson.is_object() || vocabJson.empty())
    badFile(shownVocab, "is not a JSON object of token -> id");
  for (auto it = vocabJson.begin(); it != vocabJson.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() >= (int64_t(1) << 31))
      JsonObject(shownVocab, &vocabJson)
          .fail(it.key(), "is not a token id (an integer in [0, 2^31))");
    vocab[it.key()] = it.value().get<int64_t>();
  }

  std::string mergesPath = dir + "/merges.txt";
  std::string shownMerges = escapeInvalidUtf8(mergesPath);
  std::string merges = readRegularFile(mergesPath, kMaxMergesBytes);
  // transformers: read().strip().split("\n")[1:49152-256-2+1], each line
  // split on whitespace into a pair.
  size_t first = merges.find_first_not_of(" \t\r\n\f\v");
  size_t last = merges.find_last_not_of(" \t\r\n\f\v");
  merges = first == std::string::npos ? "" : merges.substr(first, last - first + 1);
  size_t lineStart = 0;
  // Lines 1 to kMaxMerges, whatever they hold (a pair listed twice does not
  // make room for a later line).
  for (size_t line = 0; lineStart <= merges.size() && line <= kMaxMerges; ++line) {
    size_t lineEnd = merges.find('\n', lineStart);
    if (lineEnd == std::string::npos)
      lineEnd = merges.size();
    std::string text = merges.substr(lineStart, lineEnd - lineStart);
    lineStart = lineEnd + 1;
    if (line == 0)
      continue; // "#version: 0.2"
    std::vector<std::string> parts;
    for (size_t at = 0; at < text.size();) {
      size_t start = text.find_first_not_of(" \t\r\f\v", at);
      if (start == std::string::npos)
        break;
      size_t end = text.find_first_of(" \t\r\f\v", start);
      if (end == std::string::npos)
        end = text.size();
      parts.push_back(text.substr(start, end - start));
      at = end;
    }
    if (parts.size() != 2)
      badFile(shownMerges, "line " + std::to_string(line + 1) + " ('" +
                               quoteBounded(text) +
                               "') is not a merge: two symbols separated by a space");
    for (size_t at = 0; at < text.size();) {
      size_t length = utf8SequenceLength(text, at);
      if (length == 0)
        badFile(shownMerges, "line " + std::to_string(line + 1) +
                                 " is not valid UTF-8 (byte " + std::to_string(at + 1) + ")");
      at += length;
    }
    // A pair listed twice keeps its later rank, as dict(zip(...)) does.
    ranks[parts[0] + " " + parts[1]] = int64_t(line - 1);
  }

  auto resolve = [&](const std::string &text, const std::string &role) {
    if (std::optional<int64_t> id = lookup(text))
      return *id;
    badFile(escapeInvalidUtf8(special.configPath),
            "names " + role + " '" + escapeInvalidUtf8(text) + "', which " + shownVocab +
                " does not hold and added_tokens_decoder gives no id");
  };
  bos = resolve(special.role("bos"), "bos_token");
  eos = resolve(special.role("eos"), "eos_token");
  unk = resolve(special.role("unk"), "unk_token");
  pad = resolve(special.role("pad"), "pad_token");
  std::vector<std::string> specialTexts;
  for (const auto &entry : special.added) {
    resolve(entry.first, "the special token");
    specialTexts.push_back(entry.first);
  }
  splitter = std::make_unique<SpecialTokenSplitter>(specialTexts);
}

std::vector<std::string> ClipTokenizer::bpe(const std::string &word) const {
  std::vector<std::string> symbols;
  for (UChar32 cp : codePoints(word)) {
    std::string symbol;
    appendUtf8(symbol, cp);
    symbols.push_back(symbol);
  }
  if (symbols.empty())
    return {};
  symbols.back() += "</w>";
  size_t n = symbols.size();
  std::vector<int64_t> next(n), previous(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? int64_t(i + 1) : -1;
    previous[i] = int64_t(i) - 1;
  }
  // (rank, left position): the heap's smallest rank first, leftmost first.
  using Entry = std::pair<int64_t, int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto rankOf = [&](int64_t left) -> int64_t {
    if (left < 0 || next[left] < 0)
      return -1;
    auto it = ranks.find(symbols[left] + " " + symbols[next[left]]);
    return it == ranks.end() ? -1 : it->second;
  };
  auto push = [&](int64_t left) {
    int64_t rank = rankOf(left);
    if (rank >= 0)
      heap.push({rank, left});
  };
  for (size_t i = 0; i + 1 < n; ++i)
    push(int64_t(i));
  while (!heap.empty()) {
    // One rank per round: every occurrence of the best pair, left to right,
    // before any pair a merge creates (the reference loop's order).
    int64_t rank = heap.top().first;
    std::vector<int64_t> lefts;
    while (!heap.empty() && heap.top().first == rank) {
      lefts.push_back(heap.top().second);
      heap.pop();
    }
    for (int64_t left : lefts) {
      if (!alive[left] || rankOf(left) != rank)
        continue; // consumed by a merge this round, or stale
      int64_t right = next[left];
      symbols[left] += symbols[right];
      alive[right] = false;
      next[left] = next[right];
      if (next[right] >= 0)
        previous[next[right]] = left;
      if (previous[left] >= 0)
        push(previous[left]);
      push(left);
    }
  }
  std::vector<std::string> out;
  for (int64_t i = 0; i >= 0; i = next[i])
    out.push_back(symbols[i]);
  return out;
}

std::vector<std::string> ClipTokenizer::tokens(const std::string &prompt) const {
  std::vector<std::string> out;
  for (const PromptPiece &piece : splitter->split(prompt)) {
    if (piece.special) {
      out.push_back(piece.text);
      continue;
    }
    for (const std::string &match : patternPieces(codePoints(normalize(piece.text)))) {
      if (match == "<|startoftext|>" || match == "<|endoftext|>") {
        out.push_back(match); // the reference's BPE cache holds them whole
        continue;
      }
      std::string mapped;
      for (unsigned char byte : match)
        mapped += byteCharacters()[byte];
      for (std::string &token : bpe(mapped))
        out.push_back(std::move(token));
    }
  }
  return out;
}

std::optional<int64_t> ClipTokenizer::lookup(const std::string &token) const {
  // Added tokens first, then the vocabulary, as transformers looks them up.
  auto added = special.added.find(token);
  if (added != special.added.end() && added->second)
    return *added->second;
  auto it = vocab.find(token);
  if (it != vocab.end())
    return it->second;
  return std::nullopt;
}

int64_t ClipTokenizer::idOf(const std::string &token) const { return lookup(token).value_or(unk); }

std::vector<std::string> ClipTokenizer::pieces(const std::string &prompt) const {
  requireUtf8(prompt, "the prompt");
  return tokens(prompt);
}

TokenizedPrompt ClipTokenizer::encode(const std::string &prompt, int64_t maxLength,
                                      const std::string &what) const {
  requireUtf8(prompt, what);
  std::vector<int64_t> body;
  for (const std::string &token : tokens(prompt))
    body.push_back(idOf(token));
  return frameTokens(body, bos, eos, pad, maxLength);
}

} // namespace ditc::runtime
