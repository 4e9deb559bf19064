//===- LaunchLine.h - an engine's flags, as its argparse reads them -*- C++ -*-===//
//
// Every engine ditc reads parses its flags with Python's argparse: `--flag
// value` or `--flag=value`, switches without a value, list flags taking the
// words up to the next flag, and (for some) `-` and `_` as one. A
// FlagTable declares one engine's flags the same way, so a line reads as
// the engine reads it, and an unknown flag is refused with the engine's
// nearest one. torchrun's own flags come before the program and are read
// by readTorchrun.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_ENGINES_LAUNCHLINE_H
#define DITC_ENGINES_LAUNCHLINE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc::engines {

/// Value: one word. Switch: none (or `=value`). Optional: the next word when
/// it is not a flag (argparse nargs='?', SGLang's StoreBoolean). List: every
/// word up to the next flag (nargs='*').
enum class Arity { Value, Switch, Optional, List };

/// One flag of an engine: its canonical spelling (with the leading --),
/// how it takes values, and whether it concerns parallelism (the others
/// are accepted and ignored, or read for the workload).
struct FlagSpec {
  std::string name;
  Arity arity = Arity::Value;
  /// Another spelling of this flag (same argparse dest): values are kept
  /// under that flag's name, in line order, so the last one given wins.
  std::string aliasOf = "";
};

/// The flags one line gave, by canonical name.
class GivenFlags {
public:
  GivenFlags(std::string where) : where(std::move(where)) {}
  bool has(const std::string &flag) const { return values.count(flag) > 0; }
  /// The last value given (argparse keeps the last).
  std::optional<std::string> get(const std::string &flag) const;
  /// An integer within [min, max]; throws BadInput naming the flag.
  std::optional<int64_t> getInt(const std::string &flag, int64_t min, int64_t max) const;
  std::optional<double> getDouble(const std::string &flag) const;
  /// A switch, or a flag whose value Python reads as true ("true", "1").
  bool isOn(const std::string &flag) const;

  std::map<std::string, std::vector<std::string>> values;
  std::vector<std::string> positionals;
  std::string where; // "sglang command line"
};

/// An engine's flag table.
class FlagTable {
public:
  /// `dashesAreUnderscores`: `--ulysses-degree` and `--ulysses_degree` are
  /// one flag (xDiT, vLLM); otherwise only the declared spelling is.
  FlagTable(std::string engine, std::vector<FlagSpec> flags, bool dashesAreUnderscores);
  /// Reads words[begin, end). Positional words are kept in order.
  GivenFlags read(const std::vector<std::string> &words, size_t begin, size_t end,
                  const std::string &where) const;
  /// Every declared name, for did-you-mean.
  std::vector<std::string> names() const;
  /// How the flag spelled `spelled` takes values; nullopt when undeclared.
  std::optional<Arity> arityOf(const std::string &spelled) const;

private:
  const FlagSpec *find(const std::string &spelled) const;
  std::string normalize(const std::string &flag) const;
  std::string engine;
  std::vector<FlagSpec> flags;
  bool dashesAreUnderscores;
};

/// A line started by torchrun (`torchrun`, `python -m torch.distributed.run`
/// or `python -m torch.distributed.launch`): its world size and where the
/// program's own words start.
struct TorchrunLaunch {
  int64_t nprocPerNode = 1, nnodes = 1;
  bool given = false;      // the line starts with torchrun
  size_t programBegin = 0; // the script (or -m module) word
  /// The program: a script path, or "-m module".
  std::string program;
  size_t argsBegin = 0;    // the program's first flag
};

/// Reads a torchrun prefix of `words` (nothing when the first word is not
/// torchrun). Throws BadInput on a torchrun flag it does not know or an
/// impossible value (--nproc_per_node 0, "gpu", a node range).
TorchrunLaunch readTorchrun(const std::vector<std::string> &words, const std::string &where);

} // namespace ditc::engines

#endif // DITC_ENGINES_LAUNCHLINE_H
