//===- Strings.h - small string tests the tools share ------------*- C++ -*-===//
//
// lib/Support has no LLVM (dit-run links it) and C++17 has no
// std::string::ends_with, so the one suffix test lives here.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_STRINGS_H
#define DITC_SUPPORT_STRINGS_H

#include <string>
#include <string_view>

namespace ditc {

/// True when `text` ends with `suffix` (an output's extension, a tensor
/// name's last component).
bool endsWith(std::string_view text, std::string_view suffix);

/// "[1, 16, 32]": integers (a shape, a list of ranks) as messages show them.
template <typename Integers> std::string bracketedList(const Integers &values) {
  std::string out = "[";
  bool first = true;
  for (auto value : values) {
    out += (first ? "" : ", ") + std::to_string(value);
    first = false;
  }
  return out + "]";
}

} // namespace ditc

#endif // DITC_SUPPORT_STRINGS_H
