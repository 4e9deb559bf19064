//===- AxisConversion.h - ditc::Axis <-> dit::MeshAxis ----------*- C++ -*-===//
//
// The deployment library names axes without MLIR (ditc::Axis); the IR names
// them with the dialect's MeshAxis enum. Both list the seven axes in the
// default layout order, so they convert by value.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_ANALYSIS_AXISCONVERSION_H
#define DITC_ANALYSIS_AXISCONVERSION_H

#include "ditc/Analysis/Deployment.h"

#include "dit/IR/DitAttrs.h"

namespace ditc {

/// ditc::Axis (no MLIR) and the dialect's MeshAxis list the axes in the
/// same order, so they convert by value.
static_assert(static_cast<int>(Axis::DP) == static_cast<int>(mlir::dit::MeshAxis::DP) &&
                  static_cast<int>(Axis::CFG) == static_cast<int>(mlir::dit::MeshAxis::CFG) &&
                  static_cast<int>(Axis::PP) == static_cast<int>(mlir::dit::MeshAxis::PP) &&
                  static_cast<int>(Axis::Ring) == static_cast<int>(mlir::dit::MeshAxis::Ring) &&
                  static_cast<int>(Axis::KVGather) ==
                      static_cast<int>(mlir::dit::MeshAxis::KVGather) &&
                  static_cast<int>(Axis::Ulysses) ==
                      static_cast<int>(mlir::dit::MeshAxis::Ulysses) &&
                  static_cast<int>(Axis::TP) == static_cast<int>(mlir::dit::MeshAxis::TP),
              "ditc::Axis and dit::MeshAxis must list the axes in one order");
inline mlir::dit::MeshAxis toMeshAxis(Axis axis) {
  return static_cast<mlir::dit::MeshAxis>(axis);
}
inline Axis toAxis(mlir::dit::MeshAxis axis) { return static_cast<Axis>(axis); }

} // namespace ditc

#endif // DITC_ANALYSIS_AXISCONVERSION_H
