//===- Threads.h - how many threads a rank computes with --------*- C++ -*-===//
//
// A rank's intra-op threads: by default the cores this process may use over
// the ranks of its host that compute at once, read from the launcher's
// LOCAL_RANK and LOCAL_WORLD_SIZE; and libgomp's wait policy, which decides
// whether idle workers spin on cores other ranks need.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_EXEC_THREADS_H
#define DITC_RUNTIME_EXEC_THREADS_H

#include "ditc/Runtime/Plan/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

/// Intra-op threads per rank when --threads is not given: the cores this
/// process may use divided by the ranks that share its host
/// (LOCAL_WORLD_SIZE, set by --nproc and torchrun; 1 when unset), at least
/// 1. Throws BadInput for a LOCAL_WORLD_SIZE that is not a count.
int64_t defaultThreads();

/// The ranks that share this rank's host: torchrun numbers a node's ranks
/// contiguously, LOCAL_RANK from the first, LOCAL_WORLD_SIZE of them (as
/// --nproc does). Without those variables, or with values that do not fit
/// the plan, the rank alone; a value that is not a number is bad input.
std::vector<int64_t> ranksOnThisHost(int64_t rank, int64_t worldSize);

/// The default once the plan is read: the cores this process may use over
/// the ranks of its host that compute at once, at least 1. A step's
/// pipeline stages take the request in turn, so those are the host's ranks
/// of this rank's stage (every rank on the host without pp): two pp2 ranks
/// on a 2-core host get two threads each, and the stage that computes
/// uses both cores while the other waits (docs/runtime.md, "Threads").
int64_t planDefaultThreads(const Manifest &manifest, int64_t rank);

/// Sets this process's threads (CpuDevice::placeThreads): `requested` (or
/// defaultThreads() for 0) intra-op threads. The results do not depend on
/// the count (Kernels.h). Returns the count.
int64_t configureThreads(int64_t requested);

/// libgomp reads OMP_WAIT_POLICY once, as it loads, before main. By
/// default an idle worker spins after every parallel region; where other
/// ranks or processes share the cores, the spinning worker holds the core
/// its peer needs, and a step can take ten times longer (docs/runtime.md,
/// "Threads"). So the runtime's processes run with PASSIVE unless the
/// variable is set. Sets it when unset and returns true: children started
/// from here on see it, and this process must start itself again
/// (restartForPassiveWait) for its own libgomp to.
bool setPassiveWait();

/// torch's wheel computes GEMMs with MKL, whose results depend on the
/// operands' memory alignment and the code path it picks unless its
/// Conditional Numerical Reproducibility mode is strict: a parameter used
/// in place in a mapped snapshot then gave other bits than the same values
/// drawn into an aligned tensor. dit-run promises identical bytes for the
/// same computation placed elsewhere (docs/runtime.md, "Threads"), so it
/// sets MKL_CBWR=AUTO,STRICT when unset: the fastest path this CPU has,
/// bitwise reproducible. MKL reads it at its first call, after main starts,
/// so no restart is needed. Returns true when it set it.
bool setReproducibleBlas();

/// Sets PASSIVE when unset and starts this process again with `argv`;
/// returns only when the variable was set already or the restart failed
/// (then the process goes on with libgomp's spinning).
void restartForPassiveWait(char **argv);

/// OMP_WAIT_POLICY as this process's libgomp read it: from the environment
/// the program was started with (/proc/self/environ), not a later setenv.
/// Empty when it was unset (libgomp then spins).
std::string waitPolicyAtLoad();

} // namespace ditc::runtime

#endif // DITC_RUNTIME_EXEC_THREADS_H
