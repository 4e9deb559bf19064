//===- OutputPolicy.h - a run's outputs against its inputs ------*- C++ -*-===//
//
// Every output of a run is checked before any work: it must be a place an
// output may be written (absent, or a regular file in a writable folder;
// never a device, FIFO, symlink or folder), and it may resolve neither to
// a file the same run reads (or a file inside a folder it reads) nor to
// another of its outputs. A run that overwrote its own requests, latents or
// measurements would lose them whatever it printed.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_IO_OUTPUTPOLICY_H
#define DITC_RUNTIME_IO_OUTPUTPOLICY_H

#include <map>
#include <utility>
#include <string>
#include <vector>

namespace ditc::runtime {

class OutputPolicy {
public:
  /// The run reads `path` (a file, or a folder and everything inside it),
  /// named `what` in messages ("--latents", "the plan folder"). A path that
  /// does not exist is left to its reader.
  void readsInput(const std::string &what, const std::string &path);

  /// Claims `path` as the output `what` ("--report", "FILE line 3:
  /// output"). Throws BadInput naming both when it is not a place to write
  /// an output, holds a NUL byte, or resolves to an input or to an output
  /// claimed before.
  void claimOutput(const std::string &what, const std::string &path);

private:
  struct Input {
    std::string what, canonical;
    bool folder;
    unsigned long device, inode;
  };
  std::vector<Input> inputs;
  std::map<std::string, std::string> claimed; // canonical path -> what
};

/// A run's outputs, staged beside their targets as each is produced and
/// renamed into place together once the whole run has succeeded: a run
/// that fails midway (an exception, SIGINT or SIGTERM) removes what it
/// staged, so it leaves none of its outputs behind rather than some.
class StagedOutputs {
public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs &) = delete;
  StagedOutputs &operator=(const StagedOutputs &) = delete;
  /// Removes whatever was staged and not committed.
  ~StagedOutputs();

  /// Writes `contents` to a temporary file beside `path` (AtomicFile.h).
  void stage(const std::string &path, const std::string &contents);
  /// Renames every staged file over its target, in staging order.
  void commit();

private:
  std::vector<std::pair<std::string, std::string>> staged; // temporary, target
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_IO_OUTPUTPOLICY_H
