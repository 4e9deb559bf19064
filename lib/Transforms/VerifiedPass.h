//===- VerifiedPass.h - a dit pass fails or leaves IR that verifies -*- C++ -*-===//
//
// Each dit pass trusts the dit.* hand-off attributes of the passes before
// it. The dialect checks each attribute alone (kind, op, ranges), but not
// against the IR it describes, which a hand edit (a duplicated or deleted
// op, another valid attention_plan) can change. ditc compile runs the
// pipeline with the pass manager's verifier off, so a pass built on such a
// module would hand invalid IR on. A pass written as a VerifiedPass verifies
// the module it changed and turns IR that fails into its own failure with a
// diagnostic: it either refuses its input or produces verified IR.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_LIB_TRANSFORMS_VERIFIEDPASS_H
#define DITC_LIB_TRANSFORMS_VERIFIEDPASS_H

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"

namespace ditc {

/// Emits the closing error of a pass whose output fails the verifier (the
/// verifier's own diagnostics come first).
void reportUnverifiedOutput(mlir::Operation *op, llvm::StringRef pass);

/// `PassBase` is the pass's generated base (impl::XBase<X>); the pass
/// implements runOnModule() instead of runOnOperation().
template <typename PassBase>
class VerifiedPass : public PassBase {
public:
  using PassBase::PassBase;

protected:
  virtual void runOnModule() = 0;

  /// Shadows Pass::signalPassFailure so that a failing pass is not verified
  /// again (its IR may be half-rewritten, and it has said why).
  void signalPassFailure() {
    signalled = true;
    PassBase::signalPassFailure();
  }

private:
  void runOnOperation() final {
    signalled = false;
    runOnModule();
    if (signalled)
      return;
    if (mlir::failed(mlir::verify(this->getOperation()))) {
      reportUnverifiedOutput(this->getOperation(), this->getArgument());
      PassBase::signalPassFailure();
    }
  }

  bool signalled = false;
};

} // namespace ditc

#endif // DITC_LIB_TRANSFORMS_VERIFIEDPASS_H
