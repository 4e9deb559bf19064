//===- DitAttrs.h - dit enums and attributes --------------------*- C++ -*-===//
#ifndef DIT_IR_DITATTRS_H
#define DIT_IR_DITATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dit/IR/DitEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dit/IR/DitAttrs.h.inc"

#endif // DIT_IR_DITATTRS_H
