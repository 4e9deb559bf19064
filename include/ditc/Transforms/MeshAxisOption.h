//===- MeshAxisOption.h - mesh axes as pass and pipeline options -*- C++ -*-===//
//
// `mesh-order=tp,ulysses,...` is a list of dit::MeshAxis. MLIR's ListOption
// parses each element with a parser of its own, which `llvm::cl::values`
// does not reach, so the enum gets a command-line parser that knows its
// keywords (the dialect's symbolizeMeshAxis).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TRANSFORMS_MESHAXISOPTION_H
#define DITC_TRANSFORMS_MESHAXISOPTION_H

#include "dit/IR/DitAttrs.h"

#include "llvm/Support/CommandLine.h"

namespace llvm::cl {

template <>
class parser<mlir::dit::MeshAxis>
    : public basic_parser<mlir::dit::MeshAxis> {
public:
  parser(Option &option) : basic_parser(option) {}

  /// Returns true on error, as llvm::cl parsers do. The message is written
  /// as an `error:` diagnostic itself: llvm::cl's Option::error prints none,
  /// and MLIR's pass-option parsing hands the caller no message to report.
  bool parse(Option &option, StringRef, StringRef arg,
             mlir::dit::MeshAxis &value) {
    if (std::optional<mlir::dit::MeshAxis> axis =
            mlir::dit::symbolizeMeshAxis(arg)) {
      value = *axis;
      return false;
    }
    llvm::errs() << "error: " << option.ArgStr << " option: '" << arg
                 << "' is not a mesh axis; expected dp, cfg, pp, ring, "
                    "kv_gather, ulysses or tp\n";
    return true;
  }

  StringRef getValueName() const override { return "axis"; }
};

} // namespace llvm::cl

#endif // DITC_TRANSFORMS_MESHAXISOPTION_H
