//===- Calibrate.h - `ditc calibrate`: a hardware profile of this host -*- C++ -*-===//
//
// Runs the runtime's dit-calibrate (built next to dit-run; it times the
// runtime's own kernels and gloo collectives, so ditc never links torch),
// fits a profile to its measurements (ditc/CostModel/Calibration.h) and
// writes it atomically, loadable by `ditc search --hardware FILE`.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TOOLS_DITC_CALIBRATE_H
#define DITC_TOOLS_DITC_CALIBRATE_H

#include <string>
#include <vector>

namespace ditc {

std::string calibrateUsage();
int runCalibrate(const std::vector<std::string> &argv);

} // namespace ditc

#endif // DITC_TOOLS_DITC_CALIBRATE_H
