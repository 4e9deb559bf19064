//===- HtmlUnescape.cpp - Python's html.unescape --------------------------===//
#include "ditc/Runtime/Text/HtmlUnescape.h"

#include "ditc/Support/Utf8.h"

#include <cctype>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ditc::runtime {

namespace {

const std::unordered_map<std::string, std::string> &namedReferences() {
  static const std::unordered_map<std::string, std::string> table = [] {
    static const struct {
      const char *name, *replacement;
    } entries[] = {
#include "HtmlEntities.inc"
    };
    std::unordered_map<std::string, std::string> out;
    for (const auto &entry : entries)
      out.emplace(entry.name, entry.replacement);
    return out;
  }();
  return table;
}

/// What a numeric reference becomes, as Python's _replace_charref decides.
std::string numericReplacement(uint64_t value) {
  // Windows-1252 for 0x80-0x9F, as browsers read them; NUL and CR.
  static const uint32_t cp1252[32] = {
      0x20AC, 0x81,   0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
      0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,   0x017D, 0x8F,
      0x90,   0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
      0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,   0x017E, 0x0178};
  std::string out;
  if (value == 0) {
    appendUtf8(out, 0xFFFD);
    return out;
  }
  if (value == 0x0D)
    return "\r";
  if (value >= 0x80 && value <= 0x9F) {
    appendUtf8(out, cp1252[value - 0x80]);
    return out;
  }
  if ((value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) {
    appendUtf8(out, 0xFFFD);
    return out;
  }
  // Code points HTML forbids in a reference vanish.
  bool invalid = (value >= 0x1 && value <= 0x8) || value == 0xB ||
                 (value >= 0xE && value <= 0x1F) || (value >= 0x7F && value <= 0x9F) ||
                 (value >= 0xFDD0 && value <= 0xFDEF) || (value & 0xFFFE) == 0xFFFE;
  if (invalid)
    return out;
  appendUtf8(out, uint32_t(value));
  return out;
}

/// Adds a digit to a value that saturates just past U+10FFFF (Python's int
/// has no bound; every larger value gives U+FFFD alike).
uint64_t accumulate(uint64_t value, unsigned digit, unsigned base) {
  value = value * base + digit;
  return value > 0x110000 ? 0x110000 : value;
}

} // namespace

std::string htmlUnescape(const std::string &text) {
  if (text.find('&') == std::string::npos)
    return text;
  const auto &names = namedReferences();
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '&') {
      out += text[i++];
      continue;
    }
    size_t at = i + 1;
    // &#123;  &#x1F;  (';' optional)
    if (at < text.size() && text[at] == '#') {
      bool hex = at + 1 < text.size() && (text[at + 1] == 'x' || text[at + 1] == 'X');
      size_t digits = at + (hex ? 2 : 1);
      size_t end = digits;
      uint64_t value = 0;
      while (end < text.size() &&
             (hex ? std::isxdigit((unsigned char)text[end]) : std::isdigit((unsigned char)text[end]))) {
        char c = text[end];
        unsigned digit = std::isdigit((unsigned char)c) ? unsigned(c - '0')
                                                        : unsigned(std::tolower(c) - 'a' + 10);
        value = accumulate(value, digit, hex ? 16 : 10);
        ++end;
      }
      if (end == digits) {
        // "&#" followed by no digit matches no alternative: kept.
        out += text[i++];
        continue;
      }
      if (end < text.size() && text[end] == ';')
        ++end;
      out += numericReplacement(value);
      i = end;
      continue;
    }
    // A name: 1 to 32 characters other than tab, newline, form feed,
    // space, '<', '&', '#' and ';', then an optional ';'.
    size_t end = at;
    std::vector<size_t> boundaries; // byte offset after each character
    while (end < text.size() && boundaries.size() < 32) {
      char c = text[end];
      if (c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' ||
          c == '#' || c == ';')
        break;
      size_t length = utf8SequenceLength(text, end);
      end += length ? length : 1;
      boundaries.push_back(end);
    }
    if (boundaries.empty()) {
      out += text[i++];
      continue;
    }
    if (end < text.size() && text[end] == ';') {
      ++end;
      boundaries.push_back(end);
    }
    std::string name = text.substr(at, end - at);
    auto known = names.find(name);
    if (known != names.end()) {
      out += known->second;
      i = end;
      continue;
    }
    // The longest known prefix of 2 or more characters, the rest kept.
    bool replaced = false;
    for (size_t count = boundaries.size() - 1; count >= 2; --count) {
      size_t cut = boundaries[count - 1];
      auto prefix = names.find(text.substr(at, cut - at));
      if (prefix != names.end()) {
        out += prefix->second;
        out += text.substr(cut, end - cut);
        replaced = true;
        break;
      }
    }
    if (!replaced)
      out += text.substr(i, end - i);
    i = end;
  }
  return out;
}

} // namespace ditc::runtime
