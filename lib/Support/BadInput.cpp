//===- BadInput.cpp - checked arithmetic and flag parsing -----------------===//
#include "ditc/Support/BadInput.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ditc {

void badFile(const std::string &file, const std::string &problem) {
  throw BadInput(file + ": " + problem, InputLocation{file, "", ""});
}

void badFlag(const std::string &flag, const std::string &value,
             const std::string &problem) {
  throw BadInput("command line: " + problem,
                 InputLocation{"command line", flag, value});
}

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out))
    return std::nullopt;
  return out;
}

int64_t parseIntegerFlag(const std::string &flag, const std::string &text,
                         int64_t min, int64_t max) {
  auto range = "expected an integer in [" + std::to_string(min) + ", " +
               std::to_string(max) + "]";
  if (text.empty())
    badFlag(flag, text, flag + " needs a value; " + range);
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0')
    badFlag(flag, text,
            flag + " value '" + text + "' is not a number; " + range);
  if (errno == ERANGE)
    badFlag(flag, text,
            flag + " value '" + text + "' overflows a 64-bit integer; " +
                range);
  if (value < min || value > max)
    badFlag(flag, text, flag + " value " + text + " is out of range; " + range);
  return value;
}

double parseFloatFlag(const std::string &flag, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value))
    badFlag(flag, text, flag + " value '" + text + "' is not a finite number");
  return value;
}

} // namespace ditc
