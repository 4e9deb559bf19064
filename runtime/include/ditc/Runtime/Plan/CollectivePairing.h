//===- CollectivePairing.h - every rank's collectives meet their peers' ---*- C++ -*-===//
//
// Traces the collectives and point-to-point transfers each rank's programs
// issue and checks that they pair up across every group: a plan that fails
// would hang until --timeout or mix up buffers.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_COLLECTIVEPAIRING_H
#define DITC_RUNTIME_PLAN_COLLECTIVEPAIRING_H

#include "ditc/Runtime/Plan/Program.h"

namespace ditc::runtime {

/// Checks that the programs of every rank pair up: for each group of each
/// axis tuple, every member issues the same collectives in the same order
/// with the same shapes, and every send from member i to member j meets a
/// recv on j from i of the same shape, in order (per expert phase). A plan
/// that fails this would hang until --timeout or mix up buffers. `programs`
/// maps each program id any rank runs to its validated program.
void validateCollectivePairing(const Manifest &manifest,
                               const std::map<std::string, Program> &programs);

/// Loads every program any rank of `manifest` runs, each once, and checks
/// that they pair up (validateCollectivePairing): what a full plan folder
/// proves before any rank meets another.
std::map<std::string, Program> loadEveryProgram(const Manifest &manifest);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_COLLECTIVEPAIRING_H
