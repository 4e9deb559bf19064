//===- StepInputs.h - step inputs by their dit.input name -------*- C++ -*-===//
//
// The importer names the arguments of @transformer and @denoise_step with
// `dit.input` (and `dit.branch` on a step's text inputs); passes and the
// plan find them through these functions, never by argument position.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TRANSFORMS_STEPINPUTS_H
#define DITC_TRANSFORMS_STEPINPUTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace ditc {

/// The `dit.input` name of `arg`, or "" when it has none.
llvm::StringRef stepInputName(mlir::BlockArgument arg);

/// The `dit.branch` of `arg`, when it has one.
std::optional<int64_t> stepInputBranch(mlir::BlockArgument arg);

/// The argument of `fn` named `name` (the first, for per-branch inputs).
/// Fails with an error on `fn` naming the missing input.
mlir::FailureOr<mlir::BlockArgument> requireStepInput(mlir::func::FuncOp fn,
                                                      llvm::StringRef name);

} // namespace ditc

#endif // DITC_TRANSFORMS_STEPINPUTS_H
