//===- ArgParser.cpp - strict command-line flags for ditc tools -----------===//
#include "ditc/Support/ArgParser.h"

namespace ditc {

void ArgParser::parse(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' ||
        (arg[1] != '-' && !(arg.size() == 2 && std::isalpha(arg[1])))) {
      positionals.push_back(arg);
      continue;
    }
    std::string flag = arg, value;
    bool inlineValue = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    if (switches.count(flag)) {
      if (inlineValue)
        throw BadInput("command line: " + flag + " takes no value");
      seenSwitches.insert(flag);
      continue;
    }
    if (!options.count(flag)) {
      std::string known;
      for (const auto &set : {options, switches})
        for (const std::string &f : set)
          known += (known.empty() ? "" : " ") + f;
      throw BadInput("command line: unknown flag '" + flag + "' for '" +
                     command + "'; known flags: " + known);
    }
    if (!inlineValue) {
      if (i + 1 >= args.size())
        throw BadInput("command line: " + flag + " needs a value");
      value = args[++i];
    }
    if (values.count(flag))
      throw BadInput("command line: " + flag + " is given twice");
    values[flag] = value;
  }
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
  return parseIntegerFlag(flag, *text, min, max);
}

std::optional<double> ArgParser::getDouble(const std::string &flag) const {
  auto text = get(flag);
  if (!text)
    return std::nullopt;
  return parseFloatFlag(flag, *text);
}

void ArgParser::expectPositionals(size_t count, const std::string &what) const {
  if (positionals.size() < count)
    throw BadInput("command line: '" + command + "' needs " + what);
  if (positionals.size() > count)
    throw BadInput("command line: unexpected argument '" +
                   positionals[count] + "' for '" + command + "'");
}

} // namespace ditc
