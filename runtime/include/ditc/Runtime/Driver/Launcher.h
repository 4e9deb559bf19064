//===- Launcher.h - start N local ranks of dit-run --------------*- C++ -*-===//
#ifndef DITC_RUNTIME_LAUNCHER_H
#define DITC_RUNTIME_LAUNCHER_H

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ditc::runtime {

/// Starts `nproc` ranks of this process on loopback and returns the exit
/// code of the whole run: 0 when every rank succeeded, 2 when any rank
/// refused its input, 1 otherwise.
///
/// Each rank is a fork of the launcher, not a new program: libtorch's start
/// (its operator registry, about 0.7 s, 1.5 s under ASan) is paid once per
/// launch instead of once per rank. The forks are made before anything runs
/// a parallel region, because libgomp's thread team does not survive a fork;
/// then the launcher runs `validate` (refusing bad input once, not once per
/// rank: an exception from it stops the ranks and propagates), and only then
/// does each rank run `runRank` with the torchrun-style variables set
/// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1,
/// MASTER_PORT=<a free port>). Once a rank fails, the others get `timeout`
/// plus a grace period to notice before they are killed, so the launcher
/// never hangs.
int launchLocalRanks(int nproc, std::chrono::milliseconds timeout,
                     const std::function<void()> &validate,
                     const std::function<int()> &runRank);

/// As launchLocalRanks, but each rank starts this executable afresh with
/// `rankArgs`: for a launcher that has already run parallel regions (such
/// as dit-calibrate after timing its kernels), whose forks libgomp would
/// leave with a dead thread team.
int launchLocalRankPrograms(int nproc, const std::vector<std::string> &rankArgs,
                            std::chrono::milliseconds timeout);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_LAUNCHER_H
