//===- Advice.h - seed 002's advice as notes, priced -------------*- C++ -*-===//
//
// `ditc check` and `ditc compile` add note[...] diagnostics to a legal
// configuration that seed 002's advice argues against, when the cost
// model finds a legal configuration with the same GPUs that it prices
// faster. Each note names the advice, both step times and the faster
// configuration. Notes never change a verdict or an exit code.
//
//   advice-tp             tp > 2 on an image DiT: TP beyond 2 rarely helps
//                         image DiTs
//   advice-cfg-before-pp  pp > 1 on a true-CFG model whose two branches no
//                         cfg ranks split: prefer CFG parallel before PP
//   advice-kv-gather-node K/V-gather groups across nodes: K/V-gather should
//                         stay within a node (cross-node already warns for
//                         Ulysses and TP groups)
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_ADVICE_H
#define DITC_COSTMODEL_ADVICE_H

#include "ditc/Analysis/Legality.h"
#include "ditc/CostModel/HardwareProfile.h"

#include <functional>
#include <vector>

namespace ditc {

/// The advice notes for the transformer placement of `context` (a legal
/// configuration of `imported`, an unpartitioned module), priced on the
/// profile `hardware` returns (asked only when some advice applies) for
/// `branchCalls` transformer calls per step.
std::vector<RuleDiagnostic>
adviseConfiguration(mlir::ModuleOp imported, const LegalityContext &context,
                    const std::function<HardwareProfile()> &hardware, int64_t steps,
                    int64_t branchCalls);

} // namespace ditc

#endif // DITC_COSTMODEL_ADVICE_H
