//===- Calibrate.h - measure this host with the runtime's own kernels -*- C++ -*-===//
//
// `ditc calibrate` prices a CPU host from measurements, not datasheets. The
// measuring lives here, in the runtime, because it must time the code that
// dit-run runs: the fixed-tile GEMM and per-head attention of Kernels.h on
// ATen's intra-op threads, and gloo collectives between local ranks started
// by the same launcher as `dit-run --nproc`. ditc (which links MLIR, never
// torch) runs dit-calibrate and fits the cost model's numbers to what it
// writes (lib/CostModel/Calibration.cpp).
//
// The raw measurements are one JSON document:
//   {"format": "ditc-calibration/1", "host", "time", "cores",
//    "compute": [{"threads", "gemm_flops_per_s", "attention_flops_per_s",
//                 "elementwise_bytes_per_s", "elementwise_elements_per_s"},
//                ...],
//    "collectives": [{"kind", "ranks", "bytes", "seconds"}, ...],
//    "skew": [{"ranks", "rows", "iterations", "free_seconds",
//              "lockstep_seconds", "barrier_seconds"}, ...],
//    "method": {what was timed and how}}
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_CALIBRATE_H
#define DITC_RUNTIME_CALIBRATE_H

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

struct ComputeRates {
  int64_t threads = 1;
  double gemmFlopsPerSecond = 0, attentionFlopsPerSecond = 0,
         elementwiseBytesPerSecond = 0;
  /// Output elements per second of a DiT block's element-wise ops (norms,
  /// modulation, rotary embedding, GELU, residual adds), the unit the cost
  /// model counts element-wise work in.
  double elementwiseElementsPerSecond = 0;
};

/// GEMM, attention and elementwise throughput of one rank with `threads`
/// intra-op threads (the median of several timed rounds).
ComputeRates measureComputeRates(int64_t threads, double secondsPerRound);

/// One timed collective: `bytes` is a rank's input buffer, as the cost
/// model counts it; `seconds` the median over the repetitions.
struct CollectiveSample {
  std::string kind; // all_reduce, all_gather, all_to_all, send_recv, ring_shift
  int64_t ranks = 0, bytes = 0;
  double seconds = 0;
};

/// The ranks' skew at a blocking collective. Every rank computes the same
/// GEMM chunk (`rows` x 1024 by 1024 x 1024, with dit-run's threads per
/// rank) `iterations` times: once free-running, once with a barrier (the
/// shared-memory all-reduce of one float that dit-run's blocking
/// collectives go through) after each chunk. Ranks that share cores, or
/// that run on vCPUs of different speed, reach each barrier at different
/// times, and the group waits for the last; the free run pays that once.
struct SkewSample {
  int64_t ranks = 0, rows = 0, iterations = 0;
  /// Seconds per chunk free-running: the slowest rank's total over the
  /// iterations (rank 0 times it from one barrier to the next).
  double freeSeconds = 0;
  /// Seconds per chunk and barrier in lockstep: freeSeconds plus the
  /// median over rounds of a lockstep run's excess over the free run just
  /// before it.
  double lockstepSeconds = 0;
  /// One barrier between idle ranks (the median of repetitions).
  double barrierSeconds = 0;
};

struct LocalRankTimings {
  std::vector<CollectiveSample> collectives;
  std::vector<SkewSample> skew;
};

/// Runs as one of `WORLD_SIZE` local ranks (the torchrun variables the
/// launcher sets): times every collective kind at each of `sizes` over a
/// gloo group of all ranks, then the ranks' skew (SkewSample) at each of
/// calibrationSkewRows(). Rank 0 returns the timings; the others return
/// nothing. Throws RunFailure when a peer fails or `timeout` passes.
LocalRankTimings measureLocalRanks(const std::vector<int64_t> &sizes,
                                   std::chrono::milliseconds timeout);

/// Rows of the GEMM chunk the skew is timed at: a short and a long
/// interval between barriers, so the fit separates a wait per barrier
/// from a wait that grows with the compute before it.
std::vector<int64_t> calibrationSkewRows();

/// Message sizes (bytes per rank) the collectives are timed at.
std::vector<int64_t> calibrationMessageSizes();

/// What the measurements time, for the profile's sources.
std::string calibrationMethod();

} // namespace ditc::runtime

#endif // DITC_RUNTIME_CALIBRATE_H
