//===- OutputPolicy.cpp - a run's outputs against its inputs --------------===//
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

#include <climits>
#include <csignal>
#include <mutex>
#include <unistd.h>
#include <cstdlib>
#include <sys/stat.h>

namespace ditc::runtime {

void OutputPolicy::readsInput(const std::string &what, const std::string &path) {
  struct stat info;
  char resolved[PATH_MAX];
  if (path.empty() || path.find('\0') != std::string::npos ||
      ::stat(path.c_str(), &info) != 0 || !::realpath(path.c_str(), resolved))
    return; // its reader says what is wrong with it
  inputs.push_back({what, resolved, S_ISDIR(info.st_mode), (unsigned long)info.st_dev,
                    (unsigned long)info.st_ino});
}

void OutputPolicy::claimOutput(const std::string &what, const std::string &path) {
  std::string shown = what + " " + quoteBounded(path);
  if (path.find('\0') != std::string::npos)
    throw BadInput(shown + ": holds a NUL byte; a file name cannot");
  checkOutputPath(path, what);
  std::string canonical = canonicalOutputPath(path);
  // An existing output may be another name (a hard link) of an input.
  struct stat info;
  bool exists = ::stat(path.c_str(), &info) == 0;
  for (const Input &input : inputs) {
    bool same = exists && !input.folder && (unsigned long)info.st_dev == input.device &&
                (unsigned long)info.st_ino == input.inode;
    if (same || canonical == input.canonical)
      throw BadInput(shown + ": is " + input.what + " " + quoteBounded(input.canonical) +
                     ", which this run reads; write outputs elsewhere, so a run never "
                     "replaces its own input");
    if (input.folder && canonical.rfind(input.canonical + "/", 0) == 0)
      throw BadInput(shown + ": lies inside " + input.what + " " +
                     quoteBounded(input.canonical) +
                     ", which this run reads; write outputs elsewhere, so a run never "
                     "changes its input");
  }
  auto [it, fresh] = claimed.emplace(canonical, what);
  if (!fresh)
    throw BadInput(shown + ": is the same file as " + it->second +
                   "; give every output its own name");
}

//===----------------------------------------------------------------------===//
// Staged outputs
//===----------------------------------------------------------------------===//

// The temporaries staged in this process, for the signal handler: fixed
// storage, so removing them on SIGINT or SIGTERM allocates nothing.
namespace {
constexpr int kMaxStaged = 4096;
constexpr size_t kMaxTempName = 4096;
char stagedNames[kMaxStaged][kMaxTempName];
volatile sig_atomic_t stagedLive[kMaxStaged];
std::mutex stagedMutex;

void removeStagedAndDie(int signal) {
  for (int i = 0; i < kMaxStaged; ++i)
    if (stagedLive[i])
      ::unlink(stagedNames[i]);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

/// Records `temp` for the signal handler. A name too long for the fixed
/// storage, or one past kMaxStaged, is left to the destructor alone.
void remember(const std::string &temp) {
  std::lock_guard<std::mutex> lock(stagedMutex);
  static bool installed = false;
  if (!installed) {
    std::signal(SIGINT, removeStagedAndDie);
    std::signal(SIGTERM, removeStagedAndDie);
    installed = true;
  }
  if (temp.size() >= kMaxTempName)
    return;
  for (int i = 0; i < kMaxStaged; ++i)
    if (!stagedLive[i]) {
      temp.copy(stagedNames[i], temp.size());
      stagedNames[i][temp.size()] = '\0';
      stagedLive[i] = 1;
      return;
    }
}

void forget(const std::string &temp) {
  std::lock_guard<std::mutex> lock(stagedMutex);
  for (int i = 0; i < kMaxStaged; ++i)
    if (stagedLive[i] && temp == stagedNames[i])
      stagedLive[i] = 0;
}
} // namespace

StagedOutputs::~StagedOutputs() {
  for (const auto &[temp, target] : staged) {
    ::unlink(temp.c_str());
    forget(temp);
  }
}

void StagedOutputs::stage(const std::string &path, const std::string &contents) {
  std::string temp = stageFile(path, contents);
  staged.emplace_back(temp, path);
  remember(temp);
}

void StagedOutputs::commit() {
  // Every target is checked before any is replaced, so a target that became
  // a folder or a link meanwhile stops the commit before its first rename.
  for (const auto &entry : staged)
    checkOutputPath(entry.second);
  while (!staged.empty()) {
    auto [temp, target] = staged.front();
    staged.erase(staged.begin());
    forget(temp);
    commitStagedFile(temp, target);
  }
}

} // namespace ditc::runtime
