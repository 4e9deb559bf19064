//===- Roles.h - role programs and their collectives ------------*- C++ -*-===//
#ifndef DITC_TRANSFORMS_ROLES_H
#define DITC_TRANSFORMS_ROLES_H

#include "ditc/Transforms/MeshInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace ditc {

/// Attribute names dit-lower-roles sets (DitBase.td declares them; read
/// and write them through DitDialect's typed helpers).
constexpr llvm::StringLiteral kRolesAttrName =
    mlir::dit::DitDialect::RolesAttrHelper::getNameStr(); // [@role...]
constexpr llvm::StringLiteral kRankRolesAttrName =
    mlir::dit::DitDialect::RankRolesAttrHelper::getNameStr(); // array<i64>
constexpr llvm::StringLiteral kRoleAttrName =
    mlir::dit::DitDialect::RoleAttrHelper::getNameStr(); // #dit.role<...>
constexpr llvm::StringLiteral kBetweenStepsAttrName =
    mlir::dit::DitDialect::BetweenStepsAttrHelper::getNameStr();

/// One collective a role program issues, in program order.
struct CollectiveCall {
  mlir::Operation *op = nullptr;
  std::string kind;                // all_reduce, all_to_all, ..., ring_attention
  std::vector<int16_t> gridAxes;   // the axes whose groups it runs on
  std::string signature;           // kind, shapes, types and axis attributes
  int64_t peer = -1;               // send destination / recv source (in group)
};

/// The collectives of `fn`, following calls into the functions it calls,
/// in the order a rank executes them.
std::vector<CollectiveCall> collectCollectives(mlir::func::FuncOp fn);

} // namespace ditc

#endif // DITC_TRANSFORMS_ROLES_H
