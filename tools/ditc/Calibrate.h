//===- Calibrate.h - `ditc calibrate`: a hardware profile of this host -*- C++ -*-===//
//
// Runs the runtime's dit-calibrate (built next to dit-run; it times the
// runtime's own kernels and collectives, so ditc never links torch),
// fits a profile to its measurements (ditc/CostModel/Calibration.h) and
// writes it atomically, loadable by `ditc search --hardware FILE`.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TOOLS_DITC_CALIBRATE_H
#define DITC_TOOLS_DITC_CALIBRATE_H

#include <stdexcept>
#include <string>
#include <vector>

namespace ditc {

/// The measurement itself failed (a rank failed, or the timings fit no
/// bandwidth): exit 1, as opposed to BadInput's 2.
class CalibrationFailed : public std::runtime_error {
public:
  explicit CalibrationFailed(const std::string &message)
      : std::runtime_error(message) {}
};

std::string calibrateUsage();
int runCalibrate(const std::vector<std::string> &argv);

} // namespace ditc

#endif // DITC_TOOLS_DITC_CALIBRATE_H
