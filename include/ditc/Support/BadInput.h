//===- BadInput.h - user-input errors that end in exit code 2 ---*- C++ -*-===//
//
// Every check of user input (config files, flags, deployment files) throws
// BadInput with a one-line message that names the file or flag, the field,
// the value and what is allowed. The tools catch it at the top and exit 2;
// nothing below them prints or exits on its own.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_BADINPUT_H
#define DITC_SUPPORT_BADINPUT_H

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace ditc {

/// Where a piece of bad input is, for tools that report errors as data
/// (`ditc --format json`). Each part is empty when the check that threw did
/// not know it; the message always says everything.
struct InputLocation {
  std::string file;  // a path, or "command line"
  std::string field; // a key path ("components.transformer.tp_size") or flag
  std::string value; // the value as given, shortened
};

class BadInput : public std::runtime_error {
public:
  explicit BadInput(const std::string &message) : std::runtime_error(message) {}
  BadInput(const std::string &message, InputLocation location)
      : std::runtime_error(message), where(std::move(location)) {}

  const InputLocation &location() const { return where; }

private:
  InputLocation where;
};

/// A bad file: the message is "`file`: `problem`", located at `file` (a
/// path as shown, already escaped).
[[noreturn]] void badFile(const std::string &file, const std::string &problem);

/// A bad command-line flag value: the message is "command line: " followed
/// by `problem`, located at `flag` and `value`.
[[noreturn]] void badFlag(const std::string &flag, const std::string &value,
                          const std::string &problem);

/// Largest value ditc accepts for any size it reads from a config or a flag.
/// Real models stay far below it; anything above is a typo or an attack.
constexpr int64_t kAbsurdSize = int64_t(1) << 24;

/// Multiplies two non-negative sizes, or returns nullopt on int64 overflow.
std::optional<int64_t> checkedMul(int64_t a, int64_t b);

/// Parses a whole decimal integer flag value; throws BadInput naming `flag`
/// when it is not a number, overflows, or lies outside [min, max].
int64_t parseIntegerFlag(const std::string &flag, const std::string &text,
                         int64_t min, int64_t max);

/// Parses a finite floating-point flag value; throws BadInput otherwise.
double parseFloatFlag(const std::string &flag, const std::string &text);

} // namespace ditc

#endif // DITC_SUPPORT_BADINPUT_H
