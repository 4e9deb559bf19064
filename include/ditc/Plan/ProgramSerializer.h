//===- ProgramSerializer.h - a role function as a plan program -*- C++ -*-===//
//
// Turns one role function of the partitioned module into the body of a
// plan program (docs/plan-format.md, "programs/<id>.json"): numbered values
// with their local shapes, every op with its operands, results, attributes
// and parameter slices, and the functions it calls. Attributes are written
// from their typed values; one that has no JSON spelling is an error.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_PLAN_PROGRAMSERIALIZER_H
#define DITC_PLAN_PROGRAMSERIALIZER_H

#include "ditc/Transforms/MeshInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <utility>

namespace ditc {

struct SerializedProgram {
  /// "inputs", "outputs", "values", "ops" and "functions".
  nlohmann::json body;
  /// The first and last transformer block the program runs ({0, -1}: none).
  std::pair<int64_t, int64_t> layers{0, -1};
};

/// Serializes `role` (a step function dit-lower-roles produced) with the
/// functions it calls. Its arguments must carry `dit.input` names. Fails
/// with an error on the offending op or argument. `ulyssesHeadGroups` is
/// overlapHeadGroups' request (0: chosen per attention).
mlir::FailureOr<SerializedProgram> serializeProgram(mlir::func::FuncOp role,
                                                    const MeshInfo &mesh,
                                                    int64_t ulyssesHeadGroups = 0);

/// An attribute's value as the plan spells it: numbers, booleans, strings,
/// arrays, dictionaries, and enums by their keyword. Fails (without a
/// diagnostic) for attributes the plan format has no spelling for.
mlir::FailureOr<nlohmann::json> attributeJson(mlir::Attribute attr);

} // namespace ditc

#endif // DITC_PLAN_PROGRAMSERIALIZER_H
