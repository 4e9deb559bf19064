//===- Requests.h - the requests a run serves, one per replica or a file -*- C++ -*-===//
//
// Data parallelism serves independent requests (seed 002): with dp > 1 each
// replica runs its own. A run's requests come from the flags (one request;
// with dp > 1, one per replica: seed + i, written to OUT.dp<i>.npy) or from
// --requests FILE.jsonl (one JSON object per line), spread round-robin over
// the replicas. Every request is checked before the rendezvous.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_REQUESTS_H
#define DITC_RUNTIME_REQUESTS_H

#include "ditc/Runtime/Plan/Manifest.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

struct Request {
  int64_t seed = 0;
  std::string textEmbeds; // optional .npy, [branches, B, T, E]
  std::string latents;    // optional .npy initial noise, [B, C, F, H, W]
  std::string pooledEmbeds; // optional .npy, [branches, B, pooled_dim]
  std::string textMask;     // optional .npy, [branches, B, T] of 0 and 1
  std::optional<double> guidanceScale; // overrides the plan's
  /// A prompt, encoded by the pipeline's text encoders (Text/), instead of
  /// text_embeds; the negative prompt feeds the unconditional branch ("" by
  /// default, as the pipelines encode it).
  std::optional<std::string> prompt, negativePrompt;
  std::string output;     // the .npy the replica's leader writes
  std::string origin;     // "FILE line N" or "the command line", for messages
  int64_t line = 0;       // its line in --requests, or 0 when from the flags
  bool fromFile() const { return line > 0; }
};

/// The flags a request list is built from.
struct RequestDefaults {
  int64_t seed = 0;
  std::string textEmbeds, latents, output, requestsFile, pooledEmbeds, textMask;
  std::optional<double> guidanceScale;
  std::optional<std::string> prompt, negativePrompt;
};

/// Largest |guidance scale| a run accepts, as the plan's cfg_combine.
constexpr double kMaxGuidanceScale = 1e6;

/// Most requests one --requests file may hold.
constexpr int64_t kMaxRequests = 100000;

/// Builds the run's requests (see the file comment) for a plan with
/// `replicas` dp replicas. Throws BadInput naming the file, line and field.
std::vector<Request> buildRequests(const RequestDefaults &defaults,
                                   int64_t replicas);

/// "OUT.npy" for replica `index` of `replicas`: OUT.npy itself for one
/// replica, otherwise OUT.dp<index>.npy (OUT.dp<index>.png and .mp4 for
/// pictures; OUT.dp<index>.npy for any other name).
std::string replicaOutput(const std::string &output, int64_t index,
                          int64_t replicas);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_REQUESTS_H
