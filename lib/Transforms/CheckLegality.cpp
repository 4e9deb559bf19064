//===- CheckLegality.cpp - the dit-check-legality pass --------------------===//
//
// A thin pass over checkLegality(): it reports each rule diagnostic as an
// MLIR diagnostic at the op the rule blamed (the module otherwise), with the
// rule id in brackets, and fails on errors.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/Legality.h"
#include "ditc/Transforms/Passes.h"

namespace ditc {
#define GEN_PASS_DEF_CHECKLEGALITY
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;

namespace ditc {
namespace {

struct CheckLegalityPass : impl::CheckLegalityBase<CheckLegalityPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<LegalityContext> context =
        buildLegalityContext(module, deploymentFromModule(module));
    if (failed(context))
      return signalPassFailure();
    LegalityReport report = checkLegality(*context);
    for (const RuleDiagnostic &d : report.diagnostics) {
      Location loc = d.anchor ? d.anchor->getLoc() : module.getLoc();
      std::string text = "[" + d.rule + "] " + d.message;
      switch (d.severity) {
      case Severity::Error:
        ++numErrors;
        emitError(loc) << text;
        break;
      case Severity::Warning:
        ++numWarnings;
        emitWarning(loc) << text;
        break;
      case Severity::Note:
        ++numNotes;
        emitRemark(loc) << text;
        break;
      }
    }
    if (!report.legal())
      signalPassFailure();
  }
};

} // namespace
} // namespace ditc
