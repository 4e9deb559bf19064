//===- Flag.h - a command-line flag declared once --------------*- C++ -*-===//
//
// A flag's spelling, value name, help text, JSON name, integer range and
// allowed values sit in one declaration, as a cl::opt carries its cl::desc:
// ArgParser::add declares it to the parser, ArgParser::getInt/getChoice read
// it within its range or values, and formatFlagHelp writes its --help line.
// No LLVM, so the runtime's tools can declare their flags the same way.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_FLAG_H
#define DITC_SUPPORT_FLAG_H

#include <cstdint>
#include <string>
#include <vector>

namespace ditc {

class Flag {
public:
  enum class Kind {
    Option, // takes a value
    Switch, // takes none
    Help,   // -h/--help: answered before parsing, so only shown
  };
  /// One allowed value of a choice flag; with help, --help gives it a line.
  struct Choice {
    std::string value;
    std::string help;
  };

  /// `help` may span lines ('\n'); an empty help puts the flag on the
  /// previous flag's help line ("--height H, --width W").
  static Flag option(std::string name, std::string metavar, std::string help) {
    return Flag(Kind::Option, std::move(name), std::move(metavar),
                std::move(help));
  }
  static Flag switchFlag(std::string name, std::string help) {
    return Flag(Kind::Switch, std::move(name), "", std::move(help));
  }
  static Flag helpFlag(std::string name, std::string help) {
    return Flag(Kind::Help, std::move(name), "", std::move(help));
  }

  /// The key under which JSON output gives this flag's value.
  Flag json(std::string key) const {
    Flag flag = *this;
    flag.jsonKey = std::move(key);
    return flag;
  }
  /// The integer range getInt accepts.
  Flag range(int64_t lo, int64_t hi) const {
    Flag flag = *this;
    flag.min = lo;
    flag.max = hi;
    return flag;
  }
  /// The values getChoice accepts; without a metavar, "a|b" names them.
  Flag choices(std::vector<Choice> values) const {
    Flag flag = *this;
    flag.allowed = std::move(values);
    if (flag.metavar.empty())
      for (const Choice &choice : flag.allowed)
        flag.metavar += (flag.metavar.empty() ? "" : "|") + choice.value;
    return flag;
  }
  /// Another tool's spelling of this flag, read as this one; --help
  /// mentions it.
  Flag alias(std::string other) const {
    Flag flag = *this;
    flag.aliasName = std::move(other);
    return flag;
  }
  /// Parsed, but left out of --help.
  Flag hidden() const {
    Flag flag = *this;
    flag.isHidden = true;
    return flag;
  }

  Kind kind;
  std::string name, metavar, help, jsonKey, aliasName;
  int64_t min = INT64_MIN, max = INT64_MAX;
  std::vector<Choice> allowed;
  bool isHidden = false;

private:
  Flag(Kind kind, std::string name, std::string metavar, std::string help)
      : kind(kind), name(std::move(name)), metavar(std::move(metavar)),
        help(std::move(help)) {}
};

/// A titled block of a command's --help ("workload flags (...)").
struct FlagGroup {
  std::string title;
  std::vector<const Flag *> flags;
};

/// The --help lines of `flags`: the flag and its value name from column 2,
/// the help from column 28 (on the next line when the flag is longer).
std::string formatFlagHelp(const std::vector<const Flag *> &flags);

/// A command's --help: `intro`, then each group as "\n<title>:\n<lines>",
/// then "\n" and `exits`.
std::string formatUsage(const std::string &intro,
                        const std::vector<FlagGroup> &groups,
                        const std::string &exits);

/// "a or b", "a, b or c": a choice flag's values, for its error message.
std::string choiceList(const Flag &flag);

} // namespace ditc

#endif // DITC_SUPPORT_FLAG_H
