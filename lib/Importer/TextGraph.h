//===- TextGraph.h - @text_encoder's encoders as dit graphs -----*- C++ -*-===//
#ifndef DITC_IMPORTER_TEXTGRAPH_H
#define DITC_IMPORTER_TEXTGRAPH_H

#include "ditc/Importer/ModelSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace ditc {

/// Whether the importer builds @text_encoder as graphs for `spec`: a
/// pipeline whose encode_prompt ditc knows (FLUX, SD3, Wan), with every
/// encoder that needs in spec.textEncoders.
bool hasTextEncoderGraphs(const ModelSpec &spec);

/// The inputs @text_encoder then takes, one [B, L] i64 tensor each: every
/// encoder's token ids in component order, and Wan's attention mask.
llvm::SmallVector<mlir::Type> textEncoderInputs(mlir::Builder &b, const ModelSpec &spec,
                                                const Workload &w);

/// Fills `fn` (@text_encoder, whose inputs are textEncoderInputs and whose
/// results are the transformer's text and pooled inputs) with one
/// `dit.component text_encoder` per encoder, its graph as its body, op by
/// op under transformers' parameter names, and the pipeline's assembly of
/// their outputs (diffusers' encode_prompt). Throws BadInput naming the
/// config when it is invalid or when its widths do not give the
/// transformer's text inputs.
void buildTextEncoderGraphs(mlir::OpBuilder &b, mlir::func::FuncOp fn, const ModelSpec &spec,
                            const Workload &w, mlir::Type element);

} // namespace ditc

#endif // DITC_IMPORTER_TEXTGRAPH_H
