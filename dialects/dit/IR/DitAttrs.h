//===- DitAttrs.h - dit enums and attributes --------------------*- C++ -*-===//
#ifndef DIT_IR_DITATTRS_H
#define DIT_IR_DITATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dit/IR/DitEnums.h.inc"

namespace mlir::dit {
/// `[ring, ulysses]`: the custom parameter syntax of mesh-axis lists.
FailureOr<SmallVector<MeshAxis>> parseMeshAxisList(AsmParser &parser);
void printMeshAxisList(AsmPrinter &printer, ArrayRef<MeshAxis> axes);
/// `[[0, 1], [2, 3]]`: the rank lists of one axis's groups.
FailureOr<SmallVector<DenseI64ArrayAttr>> parseRankLists(AsmParser &parser);
void printRankLists(AsmPrinter &printer, ArrayRef<DenseI64ArrayAttr> lists);
} // namespace mlir::dit

#define GET_ATTRDEF_CLASSES
#include "dit/IR/DitAttrs.h.inc"

namespace mlir::dit {
/// `[[], [ring, ulysses], [tp]]`: a sharding's axes per dimension.
FailureOr<SmallVector<AxesAttr>> parseDimAxes(AsmParser &parser);
void printDimAxes(AsmPrinter &printer, ArrayRef<AxesAttr> dims);
} // namespace mlir::dit

#endif // DIT_IR_DITATTRS_H
