//===- PlanValidator.h - a program checked against the ops' semantics ---*- C++ -*-===//
//
// The plan hash proves that the ranks agree on a plan, not that the plan is
// sane: each decoded program is checked here, shape by shape, before any
// rank computes.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_PLANVALIDATOR_H
#define DITC_RUNTIME_PLAN_PLANVALIDATOR_H

#include "ditc/Runtime/Plan/Program.h"

namespace ditc::runtime {

/// Checks a decoded program against the ops' semantics, as run by `ranks`:
/// every value is defined before use and once; every op's operand, result
/// and parameter shapes are what the op computes from its attributes;
/// collective axes split evenly over each rank's group; send and recv peers
/// lie in the group and are not the rank itself; calls name functions, nest
/// at most kMaxCallDepth deep and run at most kMaxOpsPerStep ops per step;
/// no value holds more than kMaxValueElements elements; the step's inputs
/// and output have the shapes the runner feeds and gathers. Throws BadInput
/// naming the file, the function, the op and the attribute.
void validateProgram(const Manifest &manifest, const Program &program,
                     const std::vector<int64_t> &ranks);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_PLANVALIDATOR_H
