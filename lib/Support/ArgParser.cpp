//===- ArgParser.cpp - strict command-line flags for ditc tools -----------===//
#include "ditc/Support/ArgParser.h"
#include "ditc/Support/Spelling.h"

namespace ditc {

void ArgParser::parse(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' ||
        (arg[1] != '-' && !(arg.size() == 2 && std::isalpha(arg[1])))) {
      positionals.push_back(arg);
      continue;
    }
    std::string spelled = arg, value;
    bool inlineValue = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      spelled = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    auto alias = aliases.find(spelled);
    std::string flag = alias == aliases.end() ? spelled : alias->second;
    if (switches.count(flag)) {
      if (inlineValue)
        badFlag(spelled, value, spelled + " takes no value");
      seenSwitches.insert(flag);
      continue;
    }
    if (!options.count(flag)) {
      std::vector<std::string> known(options.begin(), options.end());
      known.insert(known.end(), switches.begin(), switches.end());
      for (const auto &[name, target] : aliases)
        known.push_back(name);
      badFlag(flag, value,
              "unknown flag '" + flag + "' for '" + command + "'" +
                  nearestAndKnown(flag, known, "known flags", ""));
    }
    if (!inlineValue) {
      if (i + 1 >= args.size())
        badFlag(spelled, "", spelled + " needs a value");
      value = args[++i];
    }
    // An empty value ("--weights $UNSET") is refused, never taken as absent:
    // a run that silently fell back to its default would exit 0 with the
    // wrong result.
    if (value.empty() && !emptyAllowed.count(flag))
      badFlag(spelled, value,
              spelled + " is empty; give it a value, or leave the flag out");
    if (values.count(flag))
      badFlag(spelled, value,
              spelled + " is given twice" +
                  (spellings[flag] == spelled
                       ? std::string()
                       : " (as " + spellings[flag] + " and " + spelled +
                             ", two names of one flag)"));
    values[flag] = value;
    spellings[flag] = spelled;
  }
}

void ArgParser::add(const Flag &flag) {
  if (flag.kind == Flag::Kind::Option)
    addOption(flag.name);
  else if (flag.kind == Flag::Kind::Switch)
    addSwitch(flag.name);
  if (!flag.aliasName.empty())
    addAlias(flag.aliasName, flag.name);
}

std::optional<std::string> ArgParser::getChoice(const Flag &flag) const {
  auto value = get(flag);
  if (!value)
    return std::nullopt;
  for (const Flag::Choice &choice : flag.allowed)
    if (*value == choice.value)
      return value;
  badFlag(flag.name, *value,
          flag.name + " value '" + *value + "' is not allowed; expected " +
              choiceList(flag));
}

bool ArgParser::asksForHelp(const std::vector<std::string> &args) {
  for (const std::string &arg : args)
    if (arg == "-h" || arg == "--help")
      return true;
  return false;
}

std::optional<std::string> ArgParser::get(const std::string &flag) const {
  auto it = values.find(flag);
  if (it == values.end())
    return std::nullopt;
  return it->second;
}

bool ArgParser::has(const std::string &flag) const {
  return values.count(flag) || seenSwitches.count(flag);
}

std::optional<int64_t> ArgParser::getInt(const std::string &flag, int64_t min,
                                         int64_t max) const {
  auto text = get(flag);
  if (!text)
    return std::nullopt;
  return parseIntegerFlag(spellings.at(flag), *text, min, max);
}

std::optional<double> ArgParser::getDouble(const std::string &flag) const {
  auto text = get(flag);
  if (!text)
    return std::nullopt;
  return parseFloatFlag(spellings.at(flag), *text);
}

void ArgParser::expectPositionals(size_t count, const std::string &what) const {
  if (positionals.size() < count)
    throw BadInput("command line: '" + command + "' needs " + what,
                   InputLocation{"command line", "", ""});
  if (positionals.size() > count)
    throw BadInput("command line: unexpected argument '" + positionals[count] +
                       "' for '" + command + "'",
                   InputLocation{"command line", "", positionals[count]});
}

} // namespace ditc
