//===- Threads.cpp - how many threads a rank computes with ----------------===//
#include "ditc/Runtime/Exec/Threads.h"
#include "ditc/Runtime/Device/CpuDevice.h"
#include "ditc/Support/ArgParser.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace ditc::runtime {

/// A launcher's count from the environment variable `name`, or -1 when it
/// is unset; a value that is not a number in [min, 2^20] is bad input.
static int64_t launcherEnv(const char *name, const char *what, int64_t min) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  return parseIntegerFlag("environment variable " + std::string(name) + " (" + what + ")",
                          text, min, 1 << 20);
}

static int64_t localRankEnv() {
  return launcherEnv("LOCAL_RANK", "this rank's index on its host", 0);
}

static int64_t localWorldSizeEnv() {
  return launcherEnv("LOCAL_WORLD_SIZE", "ranks on this host", 1);
}

std::vector<int64_t> ranksOnThisHost(int64_t rank, int64_t worldSize) {
  int64_t localRank = localRankEnv(), localSize = localWorldSizeEnv();
  if (localRank < 0 || localSize < 1 || localRank >= localSize ||
      localRank > rank || rank - localRank + localSize > worldSize)
    return {rank};
  std::vector<int64_t> ranks;
  for (int64_t r = rank - localRank; r < rank - localRank + localSize; ++r)
    ranks.push_back(r);
  return ranks;
}

int64_t planDefaultThreads(const Manifest &m, int64_t rank) {
  std::vector<int64_t> host = ranksOnThisHost(rank, m.worldSize());
  // The ranks of this rank's pipeline stage: those that differ from it on
  // any axis but pp. Without a pp axis, every rank.
  std::vector<std::string> notPP;
  for (const Axis &axis : m.axes)
    if (axis.name != "pp")
      notPP.push_back(axis.name);
  std::vector<int64_t> stage = m.groupOf(rank, notPP);
  int64_t busy = 0;
  for (int64_t r : host)
    busy += std::count(stage.begin(), stage.end(), r) ? 1 : 0;
  return std::max<int64_t>(1, CpuDevice::usableCores() / std::max<int64_t>(1, busy));
}

int64_t defaultThreads() {
  return std::max<int64_t>(1, CpuDevice::usableCores() / std::max<int64_t>(1, localWorldSizeEnv()));
}

bool setPassiveWait() {
  return !std::getenv("OMP_WAIT_POLICY") &&
         ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0;
}

bool setReproducibleBlas() {
  return !std::getenv("MKL_CBWR") && ::setenv("MKL_CBWR", "AUTO,STRICT", 1) == 0;
}

void restartForPassiveWait(char **argv) {
  if (setPassiveWait())
    ::execv("/proc/self/exe", argv);
}

std::string waitPolicyAtLoad() {
  // The start environment stays in place after fork; a setenv copies the
  // variable elsewhere, so it never shows here.
  std::FILE *file = std::fopen("/proc/self/environ", "rb");
  if (!file)
    return "";
  std::string entry;
  std::string found;
  for (int c; (c = std::fgetc(file)) != EOF && entry.size() < (1 << 16);) {
    if (c != 0) {
      entry.push_back(char(c));
      continue;
    }
    if (entry.rfind("OMP_WAIT_POLICY=", 0) == 0)
      found = entry.substr(16, 64);
    entry.clear();
  }
  std::fclose(file);
  return found;
}

int64_t configureThreads(int64_t requested) {
  int64_t threads = requested > 0 ? requested : defaultThreads();
  CpuDevice::placeThreads(threads);
  return threads;
}

} // namespace ditc::runtime
