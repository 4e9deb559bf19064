//===- Utf8.h - show untrusted bytes in messages and JSON -------*- C++ -*-===//
//
// Paths and names from the command line or the file system are bytes, not
// text: a folder may be called "d\xffir". Before such a string goes into a
// message or a JSON document (nlohmann's dump throws on invalid UTF-8), every
// byte that is not part of well-formed UTF-8, and every ASCII control
// character, is written as \xNN. Valid UTF-8 ("modèle") is kept as it is.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_UTF8_H
#define DITC_SUPPORT_UTF8_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace ditc {

/// The length of the well-formed UTF-8 sequence at `text[i]` (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF), or 0.
inline size_t utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return (unsigned char)text[k]; };
  auto continuation = [&](size_t k, unsigned lo, unsigned hi) {
    return k < text.size() && byte(k) >= lo && byte(k) <= hi;
  };
  unsigned lead = byte(i);
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    return continuation(i + 1, 0x80, 0xBF) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    unsigned lo = lead == 0xE0 ? 0xA0 : 0x80;
    unsigned hi = lead == 0xED ? 0x9F : 0xBF;
    return continuation(i + 1, lo, hi) && continuation(i + 2, 0x80, 0xBF) ? 3
                                                                          : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    unsigned lo = lead == 0xF0 ? 0x90 : 0x80;
    unsigned hi = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(i + 1, lo, hi) && continuation(i + 2, 0x80, 0xBF) &&
                   continuation(i + 3, 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

/// The code point of the well-formed sequence at `text[i]` and its length
/// in bytes, or {0, 0} where no well-formed sequence starts.
inline std::pair<uint32_t, size_t> decodeUtf8At(std::string_view text, size_t i) {
  size_t length = utf8SequenceLength(text, i);
  if (length == 0)
    return {0, 0};
  uint32_t cp = (unsigned char)text[i];
  if (length > 1) {
    cp &= 0xFFu >> (length + 1);
    for (size_t k = 1; k < length; ++k)
      cp = (cp << 6) | ((unsigned char)text[i + k] & 0x3F);
  }
  return {cp, length};
}

/// Appends code point `cp` (at most U+10FFFF, no surrogate) as UTF-8.
inline void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

/// `text` with bytes outside well-formed UTF-8 and ASCII control characters
/// written as \xNN; the result is valid UTF-8 on one line.
inline std::string escapeInvalidUtf8(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = (unsigned char)text[i];
    size_t length = utf8SequenceLength(text, i);
    if (length == 0 || (length == 1 && (c < 0x20 || c == 0x7F))) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

/// The most bytes of a value a message quotes: a hostile 16 MiB string is
/// shown by its first bytes and its length, never echoed whole.
constexpr size_t kMaxQuotedBytes = 256;

/// escapeInvalidUtf8 of at most the first kMaxQuotedBytes of `text` (cut at
/// a character boundary), followed by "... (N bytes)" when it was longer.
inline std::string quoteBounded(std::string_view text) {
  if (text.size() <= kMaxQuotedBytes)
    return escapeInvalidUtf8(text);
  size_t cut = 0;
  while (cut < kMaxQuotedBytes) {
    size_t length = utf8SequenceLength(text, cut);
    if (length == 0)
      length = 1; // an invalid byte, escaped as one
    if (cut + length > kMaxQuotedBytes)
      break;
    cut += length;
  }
  return escapeInvalidUtf8(text.substr(0, cut)) + "... (" + std::to_string(text.size()) +
         " bytes)";
}

} // namespace ditc

#endif // DITC_SUPPORT_UTF8_H
