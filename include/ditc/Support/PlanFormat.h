//===- PlanFormat.h - the plan format version --------------------*- C++ -*-===//
//
// The one number `ditc compile` writes into a plan's manifest and programs
// and `dit-run` insists on, so the writer and the reader cannot drift. A
// change a reader must know about bumps it, and docs/plan-format.md says
// what changed. No MLIR here: the runtime includes it.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_PLANFORMAT_H
#define DITC_SUPPORT_PLANFORMAT_H

#include <cstdint>

namespace ditc {

/// 2: per_step gains `flops`.
constexpr int64_t kPlanFormatVersion = 2;

} // namespace ditc

#endif // DITC_SUPPORT_PLANFORMAT_H
