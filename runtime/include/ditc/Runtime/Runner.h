//===- Runner.h - one rank's whole run: load, agree, denoise, write -*- C++ -*-===//
#ifndef DITC_RUNTIME_RUNNER_H
#define DITC_RUNTIME_RUNNER_H

#include "ditc/Runtime/Communicator.h"

#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

struct RunOptions {
  std::string planDir;
  std::string output;
  int64_t steps = 0; // 0: the plan's workload.steps
  int64_t seed = 0;
  bool bfloat16 = false;
  std::string textEmbeds; // optional .npy, [branches, B, T, E]
  std::string latents;    // optional .npy initial noise, [B, C, F, H, W]
  std::string requestsFile; // optional JSONL, one request per line (Requests.h)
  std::string report;     // optional JSON of rank 0's per-step timings
  std::string weights;    // optional diffusers snapshot (Weights.h); else seeded
  std::string pooledEmbeds;    // optional .npy, [branches, B, pooled_dim]
  std::optional<double> guidanceScale; // --guidance-scale: overrides the plan's
  std::string schedulerConfig; // optional scheduler_config.json (Schedulers.h)
  std::optional<std::vector<double>> sigmas; // --sigmas s0,...,sK, verbatim
  int64_t rank = 0, worldSize = 1;
  int64_t threads = 0; // 0: defaultThreads()
  /// Refuse, before the rendezvous, a plan whose estimated peak does not
  /// fit the memory available (MemoryCheck.h); --skip-memory-check clears it.
  bool memoryCheck = true;
  RendezvousOptions rendezvous;
};

/// Everything a rank checks before it joins the rendezvous: the manifest,
/// its programs' hashes, the world size, the text embeddings and the output
/// folder. Throws BadInput. Also used by the launcher to fail once, early.
void validateBeforeRendezvous(const RunOptions &options);

/// The CPUs this process may run on (its affinity mask, which taskset,
/// cgroups and Slurm narrow), or every core the host has.
int64_t usableCores();

/// Intra-op threads per rank when --threads is not given: the cores this
/// process may use divided by the ranks that share its host
/// (LOCAL_WORLD_SIZE, set by --nproc and torchrun; 1 when unset), at least
/// 1. Throws BadInput for a LOCAL_WORLD_SIZE that is not a count.
int64_t defaultThreads();

/// The default once the plan is read: the cores this process may use over
/// the ranks of its host that compute at once, at least 1. A step's
/// pipeline stages take the request in turn, so those are the host's ranks
/// of this rank's stage (every rank on the host without pp): two pp2 ranks
/// on a 2-core host get two threads each, and the stage that computes
/// uses both cores while the other waits (docs/runtime.md, "Threads").
int64_t planDefaultThreads(const Manifest &manifest, int64_t rank);

/// Sets this process's threads: `requested` (or defaultThreads() for 0)
/// intra-op threads, one inter-op thread and one OpenBLAS thread. The
/// results do not depend on the count (Kernels.h). Returns the count.
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

/// Sets PASSIVE when unset and starts this process again with `argv`;
/// returns only when the variable was set already or the restart failed
/// (then the process goes on with libgomp's spinning).
void restartForPassiveWait(char **argv);

/// Runs one rank. Throws BadInput (exit 2) for bad input found before the
/// rendezvous and RunFailure (exit 1) for anything after it.
void runRank(const RunOptions &options);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_RUNNER_H
