//===- Flag.cpp - --help lines from flag declarations ---------------------===//
#include "ditc/Support/Flag.h"

namespace ditc {

namespace {

/// Where the help text starts on a --help line.
constexpr size_t kHelpColumn = 28;

struct HelpLine {
  std::string flags, help;
};

std::string spelled(const Flag &flag) {
  return flag.metavar.empty() ? flag.name : flag.name + " " + flag.metavar;
}

void appendLine(std::string &out, const HelpLine &line) {
  std::string text = "  " + line.flags;
  if (text.size() + 2 <= kHelpColumn)
    text.resize(kHelpColumn, ' ');
  else
    text += "\n" + std::string(kHelpColumn, ' ');
  for (char c : line.help)
    text +=
        c == '\n' ? "\n" + std::string(kHelpColumn, ' ') : std::string(1, c);
  out += text + "\n";
}

} // namespace

std::string formatFlagHelp(const std::vector<const Flag *> &flags) {
  std::vector<HelpLine> lines;
  for (const Flag *flag : flags) {
    if (flag->isHidden)
      continue;
    bool choiceLines = !flag->allowed.empty() && !flag->allowed[0].help.empty();
    if (choiceLines) {
      for (const Flag::Choice &choice : flag->allowed)
        lines.push_back({flag->name + " " + choice.value, choice.help});
      continue;
    }
    if (flag->help.empty() && !lines.empty()) {
      lines.back().flags += ", " + spelled(*flag);
      continue;
    }
    std::string help = flag->help;
    if (!flag->aliasName.empty())
      help += " (also " + flag->aliasName + ")";
    lines.push_back({spelled(*flag), help});
  }
  std::string out;
  for (const HelpLine &line : lines)
    appendLine(out, line);
  return out;
}

std::string formatUsage(const std::string &intro,
                        const std::vector<FlagGroup> &groups,
                        const std::string &exits) {
  std::string out = intro;
  for (const FlagGroup &group : groups)
    out += "\n" + group.title + ":\n" + formatFlagHelp(group.flags);
  return out + "\n" + exits;
}

std::string choiceList(const Flag &flag) {
  std::string out;
  for (size_t i = 0; i < flag.allowed.size(); ++i)
    out += (i == 0                         ? ""
            : i + 1 == flag.allowed.size() ? " or "
                                           : ", ") +
           flag.allowed[i].value;
  return out;
}

} // namespace ditc
