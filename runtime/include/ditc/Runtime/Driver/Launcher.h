//===- Launcher.h - start N local ranks of dit-run --------------*- C++ -*-===//
#ifndef DITC_RUNTIME_LAUNCHER_H
#define DITC_RUNTIME_LAUNCHER_H

#include <chrono>
#include <string>
#include <vector>

namespace ditc::runtime {

/// Starts `nproc` copies of this executable with `rankArgs` and the
/// torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK,
/// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>),
/// waits for them, and returns the exit code of the whole run: 0 when every
/// rank succeeded, 2 when any rank refused its input, 1 otherwise. Once a
/// rank fails, the others get `timeout` plus a grace period to notice
/// before they are killed, so the launcher never hangs.
int launchLocalRanks(int nproc, const std::vector<std::string> &rankArgs,
                     std::chrono::milliseconds timeout);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_LAUNCHER_H
