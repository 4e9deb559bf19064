//===- Calibration.h - a hardware profile from this host's measurements -*- C++ -*-===//
//
// `ditc calibrate` runs the runtime's dit-calibrate (which times the
// runtime's own kernels and gloo collectives; ditc never links torch) and
// turns its raw measurements (runtime/include/ditc/Runtime/Driver/Calibrate.h)
// into a hardware profile with a "host" section: the compute rates of one
// rank by thread count, and per collective kind a latency and bandwidth
// fitted to that kind's alpha-beta formula from several message sizes and
// rank counts. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_CALIBRATION_H
#define DITC_COSTMODEL_CALIBRATION_H

#include "ditc/CostModel/HardwareProfile.h"

#include <map>
#include <string>
#include <vector>

namespace ditc {

/// One timed collective: a rank's input buffer of `bytes` over `ranks`.
struct TimedCollective {
  CollectiveKind kind = CollectiveKind::AllReduce;
  int64_t ranks = 2;
  double bytes = 0, seconds = 0;
};

/// The latency and bandwidth for which collectiveSeconds(kind, ...) best
/// matches the samples, by least squares on the relative error (so the
/// small messages that fix the latency weigh as much as the large ones that
/// fix the bandwidth). A negative latency is clamped to 0 and the bandwidth
/// refitted. When that leaves no positive bandwidth (scattered small-message
/// times on a busy host), the fit is redone on absolute errors, which the
/// large messages dominate. `fitError` gets the largest relative error of
/// the fit. Throws BadInput when the times do not grow with the bytes
/// either way (no bandwidth fits).
LinkClass fitCollective(CollectiveKind kind,
                        const std::vector<TimedCollective> &samples,
                        double *fitError = nullptr);

/// One skew timing of dit-calibrate (SkewSample in the runtime): per
/// chunk of compute, free-running and in lockstep with a barrier after
/// each, and the barrier between idle ranks.
struct TimedSkew {
  int64_t ranks = 2;
  double freeSeconds = 0, lockstepSeconds = 0, barrierSeconds = 0;
};

/// The wait per barrier beyond an idle barrier, lockstep - free - barrier
/// (at least 0), fitted as perSync + fraction * free over the chunk
/// lengths of one rank count (least squares, both terms at least 0).
HostRates::Skew fitSkew(const std::vector<TimedSkew> &samples);

struct CalibratedProfile {
  HardwareProfile profile;
  /// Per field path (hardwareProfileToJson's keys), where the number is from.
  std::map<std::string, std::string> sources;
};

/// Builds a profile named `name` from dit-calibrate's raw measurements
/// (`text`, read from `file`). Throws BadInput naming the file, the field
/// and the value when the measurements are malformed.
CalibratedProfile profileFromCalibration(const std::string &text,
                                         const std::string &file,
                                         const std::string &name);

} // namespace ditc

#endif // DITC_COSTMODEL_CALIBRATION_H
