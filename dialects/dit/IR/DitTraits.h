//===- DitTraits.h - native traits of dit ops -------------------*- C++ -*-===//
#ifndef DIT_IR_DITTRAITS_H
#define DIT_IR_DITTRAITS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::dit {

namespace detail {
/// Every tensor operand and result of `op` is ranked with the same dim 0.
LogicalResult verifyBatchParallel(Operation *op);
} // namespace detail

/// Dim 0 of every operand and result is the batch, and each batch element
/// is computed from that element alone with attributes that never depend on
/// the batch size. Such an op gives the same result for each request
/// whether it runs alone or concatenated with others along dim 0, which is
/// what lets dit-batch-branches run guidance branches as one batch. The
/// trait verifies the shape half of that contract; the semantic half is
/// each op's declaration (DitOps.td).
template <typename ConcreteType>
class BatchParallel : public OpTrait::TraitBase<ConcreteType, BatchParallel> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::verifyBatchParallel(op);
  }
};

} // namespace mlir::dit

#endif // DIT_IR_DITTRAITS_H
