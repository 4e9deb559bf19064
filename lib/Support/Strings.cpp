//===- Strings.cpp - small string tests the tools share -------------------===//
#include "ditc/Support/Strings.h"

namespace ditc {

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace ditc
