//===- DitShardingRules.h - dit sharding rules for upstream ops -*- C++ -*-===//
//
// The dit ops carry their sharding rules in DitOps.td; the upstream ops that
// appear in a transformer (tensor.concat) get theirs as external models,
// which a tool attaches by calling this before it creates its context.
//
//===----------------------------------------------------------------------===//
#ifndef DIT_IR_DITSHARDINGRULES_H
#define DIT_IR_DITSHARDINGRULES_H

namespace mlir {

class DialectRegistry;

namespace dit {

/// Attaches the dit interfaces to the upstream ops that appear in a
/// transformer (tensor.concat).
void registerExternalModels(DialectRegistry &registry);

} // namespace dit
} // namespace mlir

#endif // DIT_IR_DITSHARDINGRULES_H
