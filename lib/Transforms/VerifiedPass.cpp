//===- VerifiedPass.cpp - the error of a pass whose output fails to verify -===//
#include "VerifiedPass.h"

namespace ditc {

void reportUnverifiedOutput(mlir::Operation *op, llvm::StringRef pass) {
  op->emitError() << pass
                  << " built IR that fails the verifier (above) from input "
                     "that verified: the input breaks an assumption of the "
                     "pass (a dit.* hand-off attribute, grid or collective "
                     "that no longer matches the IR it describes, as after "
                     "an op was edited, copied or removed); rerun the "
                     "partition from the imported module";
}

} // namespace ditc
