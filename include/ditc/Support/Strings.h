//===- Strings.h - small string tests the tools share ------------*- C++ -*-===//
//
// lib/Support has no LLVM (dit-run links it) and C++17 has no
// std::string::ends_with, so the one suffix test lives here.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_STRINGS_H
#define DITC_SUPPORT_STRINGS_H

#include <string_view>

namespace ditc {

/// True when `text` ends with `suffix` (an output's extension, a tensor
/// name's last component).
bool endsWith(std::string_view text, std::string_view suffix);

} // namespace ditc

#endif // DITC_SUPPORT_STRINGS_H
