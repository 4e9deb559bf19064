//===- HtmlUnescape.h - Python's html.unescape ------------------*- C++ -*-===//
//
// Wan's prompt_clean unescapes HTML character references twice with
// Python's html.unescape before tokenizing; this is the same function:
// numeric references (decimal or hex, the ';' optional, Windows-1252's
// remapping of 0x80-0x9F, U+FFFD for surrogates and values past U+10FFFF,
// nothing for the code points HTML forbids) and HTML5's 2,231 named ones
// (HtmlEntities.inc, generated from Python's table), the longest known
// prefix of an unknown name replaced.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_TEXT_HTMLUNESCAPE_H
#define DITC_RUNTIME_TEXT_HTMLUNESCAPE_H

#include <string>

namespace ditc::runtime {

/// `text` (valid UTF-8) with its character references replaced.
std::string htmlUnescape(const std::string &text);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_TEXT_HTMLUNESCAPE_H
