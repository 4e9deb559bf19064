//===- Pipelines.h - pass pipelines the CLI and the tests share -*- C++ -*-===//
#ifndef DITC_TRANSFORMS_PIPELINES_H
#define DITC_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace ditc {

struct PartitionOptions {
  /// Mesh axes outermost first; empty keeps the deployment's order.
  std::vector<std::string> meshOrder;
  /// Run dit-check-legality first, so an illegal configuration stops the
  /// pipeline (ditc compile checks before it partitions, and turns it off).
  bool checkLegality = true;
};

/// [legality check ->] mesh layout -> sharding propagation -> collective insertion -> stage
/// split -> role lowering -> collective verification.
void buildPartitionPipeline(mlir::OpPassManager &pm,
                            const PartitionOptions &options);

/// Registers `dit-partition` as a named pipeline for dit-opt.
void registerPartitionPipeline();

} // namespace ditc

#endif // DITC_TRANSFORMS_PIPELINES_H
