//===- WorkExtraction.h - partitioned IR to per-rank work -------*- C++ -*-===//
#ifndef DITC_COSTMODEL_WORKEXTRACTION_H
#define DITC_COSTMODEL_WORKEXTRACTION_H

#include "ditc/CostModel/StepWork.h"

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

} // namespace ditc

#endif // DITC_COSTMODEL_WORKEXTRACTION_H
