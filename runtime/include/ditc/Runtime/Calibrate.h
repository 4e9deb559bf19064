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

/// Runs as one of `WORLD_SIZE` local ranks (the torchrun variables the
/// launcher sets): times every collective kind at each of `sizes` over a
/// gloo group of all ranks. Rank 0 returns the samples; the others return
/// nothing. Throws RunFailure when a peer fails or `timeout` passes.
std::vector<CollectiveSample>
measureCollectives(const std::vector<int64_t> &sizes,
                   std::chrono::milliseconds timeout);

/// Message sizes (bytes per rank) the collectives are timed at.
std::vector<int64_t> calibrationMessageSizes();

/// What the measurements time, for the profile's sources.
std::string calibrationMethod();

} // namespace ditc::runtime

#endif // DITC_RUNTIME_CALIBRATE_H
