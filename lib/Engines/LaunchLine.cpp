//===- LaunchLine.cpp - an engine's flags, as its argparse reads them -----===//
#include "ditc/Engines/LaunchLine.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Spelling.h"

#include <algorithm>

namespace ditc::engines {

std::optional<std::string> GivenFlags::get(const std::string &flag) const {
  auto it = values.find(flag);
  if (it == values.end() || it->second.empty())
    return std::nullopt;
  return it->second.back();
}

std::optional<int64_t> GivenFlags::getInt(const std::string &flag, int64_t min,
                                          int64_t max) const {
  std::optional<std::string> text = get(flag);
  if (!text)
    return std::nullopt;
  return parseIntegerFlag(where + " " + flag, *text, min, max);
}

std::optional<double> GivenFlags::getDouble(const std::string &flag) const {
  std::optional<std::string> text = get(flag);
  if (!text)
    return std::nullopt;
  return parseFloatFlag(where + " " + flag, *text);
}

bool GivenFlags::isOn(const std::string &flag) const {
  auto it = values.find(flag);
  if (it == values.end())
    return false;
  if (it->second.empty())
    return true;
  std::string value = it->second.back();
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (value == "true" || value == "1" || value == "yes")
    return true;
  if (value == "false" || value == "0" || value == "no")
    return false;
  badFlag(where + " " + flag, value, where + " " + flag + " is '" + value +
                                         "'; expected true or false");
}

FlagTable::FlagTable(std::string engine, std::vector<FlagSpec> flags,
                     bool dashesAreUnderscores)
    : engine(std::move(engine)), flags(std::move(flags)),
      dashesAreUnderscores(dashesAreUnderscores) {}

std::string FlagTable::normalize(const std::string &flag) const {
  if (!dashesAreUnderscores)
    return flag;
  // The leading dashes stay ("-tp" is not "--tp"); the rest fold.
  size_t lead = flag.find_first_not_of('-');
  if (lead == std::string::npos)
    return flag;
  std::string out = flag.substr(0, lead);
  for (size_t i = lead; i < flag.size(); ++i)
    out += flag[i] == '-' ? '_' : flag[i];
  return out;
}

const FlagSpec *FlagTable::find(const std::string &spelled) const {
  std::string wanted = normalize(spelled);
  for (const FlagSpec &flag : flags)
    if (normalize(flag.name) == wanted)
      return &flag;
  return nullptr;
}

std::optional<Arity> FlagTable::arityOf(const std::string &spelled) const {
  const FlagSpec *flag = find(spelled);
  if (!flag)
    return std::nullopt;
  return flag->arity;
}

std::vector<std::string> FlagTable::names() const {
  std::vector<std::string> out;
  for (const FlagSpec &flag : flags)
    out.push_back(flag.name);
  return out;
}

GivenFlags FlagTable::read(const std::vector<std::string> &words, size_t begin, size_t end,
                           const std::string &where) const {
  GivenFlags given(where);
  auto isFlag = [](const std::string &word) {
    // A negative number is a value, as argparse reads it when no flag
    // looks like one.
    return word.size() > 1 && word[0] == '-' && !std::isdigit((unsigned char)word[1]) &&
           word[1] != '.';
  };
  for (size_t i = begin; i < end; ++i) {
    const std::string &word = words[i];
    if (!isFlag(word)) {
      given.positionals.push_back(word);
      continue;
    }
    std::string spelled = word;
    std::optional<std::string> inlineValue;
    if (size_t eq = word.find('='); eq != std::string::npos) {
      spelled = word.substr(0, eq);
      inlineValue = word.substr(eq + 1);
    }
    const FlagSpec *flag = find(spelled);
    if (!flag) {
      // The engine has hundreds of flags; name the nearest, not all.
      std::vector<std::string> near = nearestNames(spelled, names(), 3);
      std::string hint;
      for (size_t k = 0; k < near.size(); ++k)
        hint += (k ? ", " : "; did you mean ") + near[k];
      badFlag(spelled, inlineValue.value_or(""),
              where + ": unknown " + engine + " flag '" + spelled + "'" +
                  (near.empty() ? "; docs/engines.md lists the flags ditc reads"
                                : hint + "?"));
    }
    std::vector<std::string> &values =
        given.values[flag->aliasOf.empty() ? flag->name : flag->aliasOf];
    switch (flag->arity) {
    case Arity::Switch:
      // argparse's store_true refuses a value ("ignored explicit argument").
      if (inlineValue)
        badFlag(spelled, *inlineValue,
                where + ": " + spelled + " takes no value (it is a switch)");
      values.clear();
      break;
    case Arity::Value:
      if (inlineValue) {
        values.push_back(*inlineValue);
        break;
      }
      if (i + 1 >= end || isFlag(words[i + 1]))
        badFlag(spelled, "", where + ": " + spelled + " needs a value");
      values.push_back(words[++i]);
      break;
    case Arity::Optional:
      values.clear();
      if (inlineValue)
        values.push_back(*inlineValue);
      else if (i + 1 < end && !isFlag(words[i + 1]))
        values.push_back(words[++i]);
      break;
    case Arity::List:
      values.clear();
      if (inlineValue)
        values.push_back(*inlineValue);
      while (i + 1 < end && !isFlag(words[i + 1]))
        values.push_back(words[++i]);
      break;
    }
  }
  return given;
}

TorchrunLaunch readTorchrun(const std::vector<std::string> &words, const std::string &where) {
  TorchrunLaunch launch;
  size_t i = 0;
  if (words.empty())
    return launch;
  std::string program = words[0].substr(words[0].find_last_of('/') + 1);
  if (program == "torchrun") {
    i = 1;
  } else if ((program.rfind("python", 0) == 0) && words.size() > 2 && words[1] == "-m" &&
             (words[2] == "torch.distributed.run" || words[2] == "torch.distributed.launch")) {
    i = 3;
  } else {
    return launch;
  }
  launch.given = true;
  // torchrun's own flags (torch.distributed.run, both spellings), up to the
  // program. Those that do not shape the world are accepted and ignored.
  static const FlagTable torchrun(
      "torchrun",
      {{"--nproc_per_node"}, {"--nnodes"}, {"--node_rank"}, {"--master_addr"},
       {"--master_port"}, {"--rdzv_endpoint"}, {"--rdzv_backend"}, {"--rdzv_id"},
       {"--rdzv_conf"}, {"--standalone", Arity::Switch}, {"--max_restarts"},
       {"--monitor_interval"}, {"--start_method"}, {"--role"}, {"--log_dir"},
       {"--redirects"}, {"--tee"}, {"--local_addr"}, {"--no_python", Arity::Switch},
       {"--run_path", Arity::Switch}, {"--module", Arity::Switch}},
      /*dashesAreUnderscores=*/true);
  // The program starts at the first word no torchrun flag takes: a switch
  // takes none, a flag with `=` none more, any other flag the next word (an
  // undeclared one is refused below, by the table).
  size_t programBegin = i;
  while (programBegin < words.size() && words[programBegin].rfind("-", 0) == 0 &&
         words[programBegin] != "-m") {
    bool inlineValue = words[programBegin].find('=') != std::string::npos;
    std::string spelled = words[programBegin].substr(0, words[programBegin].find('='));
    bool isSwitch = torchrun.arityOf(spelled) == Arity::Switch;
    programBegin += (inlineValue || isSwitch) ? 1 : 2;
  }
  programBegin = std::min(programBegin, words.size());
  GivenFlags given = torchrun.read(words, i, programBegin, where + " (torchrun)");
  if (std::optional<std::string> nproc = given.get("--nproc_per_node")) {
    if (*nproc == "gpu" || *nproc == "auto" || *nproc == "cpu")
      badFlag("--nproc_per_node", *nproc,
              where + ": torchrun --nproc_per_node " + *nproc +
                  " counts this host's devices; give the number of processes so the "
                  "world size is known");
    launch.nprocPerNode = parseIntegerFlag(where + " torchrun --nproc_per_node", *nproc, 1,
                                           1 << 20);
  }
  if (std::optional<std::string> nodes = given.get("--nnodes")) {
    if (nodes->find(':') != std::string::npos)
      badFlag("--nnodes", *nodes,
              where + ": torchrun --nnodes " + *nodes +
                  " is an elastic range; give one node count so the world size is known");
    launch.nnodes = parseIntegerFlag(where + " torchrun --nnodes", *nodes, 1, 1 << 20);
  }
  if (programBegin >= words.size())
    throw BadInput(where + ": torchrun starts no program");
  launch.programBegin = programBegin;
  if (words[programBegin] == "-m") {
    if (programBegin + 1 >= words.size())
      throw BadInput(where + ": torchrun -m names no module");
    launch.program = "-m " + words[programBegin + 1];
    launch.argsBegin = programBegin + 2;
  } else {
    launch.program = words[programBegin];
    launch.argsBegin = programBegin + 1;
  }
  return launch;
}

} // namespace ditc::engines
