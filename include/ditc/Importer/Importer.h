//===- Importer.h - build a dit module from a ModelSpec ---------*- C++ -*-===//
#ifndef DITC_IMPORTER_IMPORTER_H
#define DITC_IMPORTER_IMPORTER_H

#include "ditc/Importer/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace ditc {

enum class ElementType { BF16, F32 };

struct ImportOptions {
  ElementType elementType = ElementType::BF16;
};

/// Builds the whole pipeline as a dit module: @text_encoder, @transformer
/// (and @transformer_2 for two-expert models) unrolled block by block,
/// @denoise_step (one per expert) and @vae_decode. The module carries the
/// dit.model and dit.workload attributes and verifies; a spec that would
/// build IR that does not verify throws BadInput quoting the verifier.
mlir::OwningOpRef<mlir::ModuleOp> importModel(mlir::MLIRContext &context,
                                              const ModelSpec &spec,
                                              const Workload &workload,
                                              const ImportOptions &options = {});

/// The dit.model attribute for a spec; null, with an error diagnostic on
/// the context, when the attribute's verifier refuses the spec.
mlir::Attribute buildModelAttr(mlir::MLIRContext &context,
                               const ModelSpec &spec);
/// The dit.workload attribute for a workload; null, with an error
/// diagnostic, when its verifier refuses it.
mlir::Attribute buildWorkloadAttr(mlir::MLIRContext &context,
                                  const Workload &workload);

} // namespace ditc

#endif // DITC_IMPORTER_IMPORTER_H
