//===- DitDialect.h - the dit dialect ---------------------------*- C++ -*-===//
#ifndef DIT_IR_DITDIALECT_H
#define DIT_IR_DITDIALECT_H

#include "mlir/IR/Dialect.h"

// The dialect's discardable-attribute helpers name the attribute classes.
#include "dit/IR/DitAttrs.h"

#include "dit/IR/DitDialect.h.inc"

#endif // DIT_IR_DITDIALECT_H
