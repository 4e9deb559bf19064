//===- ProgramChecks.h - checks of a program as a whole ---------*- C++ -*-===//
//
// The checks of PlanValidator that look at a program as a whole rather than
// op by op: its call graph, its parameters' layouts and the interface the
// runner feeds. Each throws BadInput naming the file and, where there is
// one, the function.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_PROGRAMCHECKS_H
#define DITC_RUNTIME_PLAN_PROGRAMCHECKS_H

#include "ditc/Runtime/Plan/Program.h"

namespace ditc::runtime {

/// Calls form no cycle, nest at most kMaxCallDepth deep, and one step
/// runs at most kMaxOpsPerStep ops once every call is expanded: a program
/// of 30 calls per level, 7 levels deep, is refused here rather than run.
void checkCallGraph(const Program &program);

/// The executor draws each parameter once, by name, and hands that tensor
/// to every op naming it: two ops must not disagree on its shape or slice.
void checkParametersAgree(const Program &program);

/// The values the runner feeds in and gathers out have the shapes it
/// makes: latent tokens [B, S/n, F], timestep and guidance [B], sigmas
/// 0-d, text [B, T, E], pooled text [B, P], one output like the latents.
void checkStepInterface(const Manifest &manifest, const Program &program);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_PROGRAMCHECKS_H
