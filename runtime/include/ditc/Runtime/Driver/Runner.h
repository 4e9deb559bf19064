//===- Runner.h - one rank's whole run: load, agree, denoise, write -*- C++ -*-===//
#ifndef DITC_RUNTIME_RUNNER_H
#define DITC_RUNTIME_RUNNER_H

#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Exec/Threads.h"

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
  std::string savePixels; // optional .npy of the decoded float pixels
  std::string weights;    // optional diffusers snapshot (Weights.h); else seeded
  std::string pooledEmbeds;    // optional .npy, [branches, B, pooled_dim]
  std::string textMask;        // optional .npy, [branches, B, T] of 0 and 1
  std::optional<double> guidanceScale; // --guidance-scale: overrides the plan's
  /// --prompt and --negative-prompt: encoded by the pipeline's text
  /// encoders from --weights (Text/PipelinePrompts.h) instead of
  /// --text-embeds; --save-text-embeds and --save-pooled write what they
  /// encode to ([branches, B, T, E], [branches, B, pooled_dim]).
  std::optional<std::string> prompt, negativePrompt;
  std::string saveTextEmbeds, savePooled;
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

/// Runs one rank. Throws BadInput (exit 2) for bad input found before the
/// rendezvous and RunFailure (exit 1) for anything after it.
void runRank(const RunOptions &options);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_RUNNER_H
