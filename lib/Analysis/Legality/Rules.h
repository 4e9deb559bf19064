//===- Rules.h - the legality rule functions (internal) ---------*- C++ -*-===//
#ifndef DITC_LIB_ANALYSIS_LEGALITY_RULES_H
#define DITC_LIB_ANALYSIS_LEGALITY_RULES_H

#include "ditc/Analysis/Legality.h"

namespace ditc::rules {

// Topology: world, instances, rank lists, nodes.
void checkWorldSize(const LegalityContext &, DiagnosticSink &);
void checkInstanceSize(const LegalityContext &, DiagnosticSink &);
void checkComponentRanks(const LegalityContext &, DiagnosticSink &);
void checkRankOrder(const LegalityContext &, DiagnosticSink &);
void checkGroupConflict(const LegalityContext &, DiagnosticSink &);
void checkCrossNode(const LegalityContext &, DiagnosticSink &);
// Heads.
void checkTPHeads(const LegalityContext &, DiagnosticSink &);
void checkUlyssesHeads(const LegalityContext &, DiagnosticSink &);
// Sequence.
void checkSeqDivisibility(const LegalityContext &, DiagnosticSink &);
// Ring attention.
void checkRingBackend(const LegalityContext &, DiagnosticSink &);
void checkRingVarlen(const LegalityContext &, DiagnosticSink &);
void checkRingStackedQKV(const LegalityContext &, DiagnosticSink &);
void checkRingKVGatherExclusive(const LegalityContext &, DiagnosticSink &);
// Guidance.
void checkCFGBranches(const LegalityContext &, DiagnosticSink &);
void checkPagedKVCFG(const LegalityContext &, DiagnosticSink &);
// Pipeline.
void checkPPPartition(const LegalityContext &, DiagnosticSink &);
// Signals between components.
void checkShardDim(const LegalityContext &, DiagnosticSink &);
// The VAE's patch parallelism.
void checkVaeRows(const LegalityContext &, DiagnosticSink &);
void checkVaeHalo(const LegalityContext &, DiagnosticSink &);
void checkVaeRanks(const LegalityContext &, DiagnosticSink &);
void checkVaeLatents(const LegalityContext &, DiagnosticSink &);
// The text encoders' tensor parallelism and ranks.
void checkTextEncoderAxes(const LegalityContext &, DiagnosticSink &);
void checkTextEncoderHeads(const LegalityContext &, DiagnosticSink &);
void checkTextEncoderRanks(const LegalityContext &, DiagnosticSink &);

void checkExpertOffload(const LegalityContext &, DiagnosticSink &);

} // namespace ditc::rules

#endif // DITC_LIB_ANALYSIS_LEGALITY_RULES_H
