//===- WorkExtraction.h - partitioned IR to per-rank work -------*- C++ -*-===//
#ifndef DITC_COSTMODEL_WORKEXTRACTION_H
#define DITC_COSTMODEL_WORKEXTRACTION_H

#include "ditc/CostModel/StepWork.h"
#include "ditc/CostModel/TextEncodeCost.h"

#include "mlir/IR/BuiltinOps.h"

namespace ditc {

/// The work of one @transformer call in a module that dit-insert-collectives
/// has partitioned. Fails (with an error on the module) when the module has
/// no laid-out mesh or no transformer.
mlir::FailureOr<TransformerWork> extractTransformerWork(mlir::ModuleOp module);

/// Clones `imported` (an unpartitioned module), sets its mesh to `shape`'s
/// tp, ulysses, ring and kv_gather degrees, runs dit-mesh-layout,
/// dit-propagate-sharding and dit-insert-collectives on the clone, and
/// extracts its work.
mlir::FailureOr<TransformerWork> partitionAndExtract(mlir::ModuleOp imported,
                                                     const Degrees &shape);

/// One call of @text_encoder on one rank when its encoders are split over
/// `tp` ranks: clones `imported`, runs dit-partition-text-encoder on the
/// clone (tp > 1) and reads every encoder graph's ops. nullopt when the
/// module holds no encoder, or an encoder without a graph (a class ditc
/// does not model: its cost is unknown); failure when the pass refuses `tp`
/// (the text-encoder-heads rule says why).
mlir::FailureOr<std::optional<TextEncodeWork>>
partitionAndExtractTextEncoders(mlir::ModuleOp imported, int64_t tp);

} // namespace ditc

#endif // DITC_COSTMODEL_WORKEXTRACTION_H
