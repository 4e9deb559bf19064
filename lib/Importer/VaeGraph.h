//===- VaeGraph.h - @vae_decode's decoder as a dit graph --------*- C++ -*-===//
#ifndef DITC_IMPORTER_VAEGRAPH_H
#define DITC_IMPORTER_VAEGRAPH_H

#include "ditc/Importer/ModelSpec.h"

#include "dit/IR/DitOps.h"

namespace ditc {

/// Whether ditc models `vaeClass`'s decoder as a graph (AutoencoderKL,
/// AutoencoderKLWan, AutoencoderKLQwenImage); others stay opaque.
bool isModeledVaeClass(const std::string &vaeClass);

/// Fills `decoder`'s body with the graph of the VAE that `spec.vaeConfig`
/// describes: the pipeline's denormalisation, then the decoder, op by op,
/// under diffusers' parameter names. Throws BadInput naming the config when
/// it is invalid, or when the pixels it decodes to are not the component's
/// output type (another compression or channel count than the model's).
void buildVaeDecoderBody(mlir::OpBuilder &b, mlir::dit::ComponentOp decoder,
                         const ModelSpec &spec);

} // namespace ditc

#endif // DITC_IMPORTER_VAEGRAPH_H
