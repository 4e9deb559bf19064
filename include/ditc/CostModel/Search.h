//===- Search.h - the fastest legal configuration -----------------*- C++ -*-===//
//
// Enumerates every configuration of a model on N GPUs that checkLegality()
// accepts (the seven degrees, and for multi-node clusters the mesh orders
// that change which axes cross nodes), prices each with the cost model, drops
// those that do not fit in memory, and ranks the rest. `ditc search` prints
// the ranking; `ditc check` takes its suggestions from it.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_SEARCH_H
#define DITC_COSTMODEL_SEARCH_H

#include "ditc/Analysis/Legality.h"
#include "ditc/CostModel/CostModel.h"

#include <map>
#include <string>
#include <vector>

namespace ditc {

enum class Objective { Latency, Throughput };

struct SearchOptions {
  int64_t numGpus = 1;
  int64_t gpusPerNode = 8;
  HardwareProfile hardware;
  Objective objective = Objective::Latency;
  /// Denoising steps per request (for requests per second).
  int64_t steps = 1;
  /// Transformer calls per step before cfg splits them.
  int64_t branchCalls = 1;
};

struct RankedConfiguration {
  Configuration config;
  StepEstimate estimate;
  double requestsPerSecond = 0;
  /// Against one GPU: step-time ratio (latency) or request-rate ratio
  /// (throughput), and that divided by the GPUs used.
  double speedup = 0, parallelEfficiency = 0;
};

struct SearchResult {
  StepEstimate singleGpu;
  bool singleGpuFits = true;
  /// Legal configurations that fit, best first.
  std::vector<RankedConfiguration> ranked;
  int64_t candidates = 0, legal = 0, tooLarge = 0;
  /// Candidates each rule rejected (a candidate counts once per rule).
  std::map<std::string, int64_t> rejectedByRule;
  bool exhaustive = true; // false when the walk's step cap cut it short
};

/// Searches `imported` (an unpartitioned module of the model and workload)
/// whose legality context is `context` (its deployment's transformer
/// placement gives the attention backend).
mlir::FailureOr<SearchResult> searchConfigurations(mlir::ModuleOp imported,
                                                   const LegalityContext &context,
                                                   const SearchOptions &options);

/// Whether `a` ranks before `b` under `objective`.
bool ranksBefore(const RankedConfiguration &a, const RankedConfiguration &b,
                 Objective objective);

/// "ulysses 4 x tp 2": the axes above 1, or "one GPU".
std::string shortDegrees(const Degrees &degrees);

/// One line on why `winner` beats `runnerUp`: the terms that differ most.
std::string explainWin(const RankedConfiguration &winner,
                       const RankedConfiguration &runnerUp);

} // namespace ditc

#endif // DITC_COSTMODEL_SEARCH_H
