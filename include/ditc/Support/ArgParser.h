//===- ArgParser.h - strict command-line flags for ditc tools ---*- C++ -*-===//
//
// A deliberately small parser: every flag must be declared, every value is
// validated where it is read, and any unknown flag, missing value or
// duplicate is a BadInput (exit 2) naming the flag. An unknown flag is
// answered with the nearest known one.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_ARGPARSER_H
#define DITC_SUPPORT_ARGPARSER_H

#include "ditc/Support/BadInput.h"
#include "ditc/Support/Flag.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ditc {

class ArgParser {
public:
  ArgParser(std::string command) : command(std::move(command)) {}

  /// Declares a flag that takes a value (`--height 480` or `--height=480`).
  void addOption(const std::string &flag) { options.insert(flag); }
  /// Declares a flag whose value may be empty and is then an empty value,
  /// never "absent" (a prompt: "" is what a pipeline encodes for no
  /// prompt). Every other option refuses an empty value.
  void addTextOption(const std::string &flag) {
    options.insert(flag);
    emptyAllowed.insert(flag);
  }
  /// Declares a flag without a value.
  void addSwitch(const std::string &flag) { switches.insert(flag); }
  /// Declares `alias` as another spelling of the option `flag` (another
  /// tool's name for it); a value given either way is read as `flag`'s.
  void addAlias(const std::string &alias, const std::string &flag) {
    aliases[alias] = flag;
  }

  /// Declares `flag` as its kind says, with its alias (a Help flag is
  /// answered before parsing and declares nothing).
  void add(const Flag &flag);
  void add(const std::vector<const Flag *> &flags) {
    for (const Flag *flag : flags)
      add(*flag);
  }

  /// Parses `args`; positional arguments are collected in order.
  void parse(const std::vector<std::string> &args);

  std::optional<std::string> get(const std::string &flag) const;
  bool has(const std::string &flag) const;
  std::optional<int64_t> getInt(const std::string &flag, int64_t min,
                                int64_t max) const;
  std::optional<double> getDouble(const std::string &flag) const;
  const std::vector<std::string> &positional() const { return positionals; }

  /// The same, by declaration: getInt within the flag's range, getChoice
  /// one of its values (else BadInput listing them).
  std::optional<std::string> get(const Flag &flag) const {
    return get(flag.name);
  }
  bool has(const Flag &flag) const { return has(flag.name); }
  std::optional<int64_t> getInt(const Flag &flag) const {
    return getInt(flag.name, flag.min, flag.max);
  }
  std::optional<double> getDouble(const Flag &flag) const {
    return getDouble(flag.name);
  }
  std::optional<std::string> getChoice(const Flag &flag) const;

  /// Requires exactly `count` positional arguments named by `what`.
  void expectPositionals(size_t count, const std::string &what) const;

  /// -h or --help anywhere on the line asks for the usage, whatever else
  /// is there (so a user with a half-right command line still gets it).
  static bool asksForHelp(const std::vector<std::string> &args);

private:
  std::string command;
  std::set<std::string> options, switches;
  std::set<std::string> emptyAllowed; // addTextOption's
  std::map<std::string, std::string> values;
  /// alias -> flag, and flag -> the spelling given, for messages.
  std::map<std::string, std::string> aliases, spellings;
  std::set<std::string> seenSwitches;
  std::vector<std::string> positionals;
};

} // namespace ditc

#endif // DITC_SUPPORT_ARGPARSER_H
