//===- dialect_info.cpp - an installed ditc::dialect, used from outside ---===//
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

static const char *const kModule = R"mlir(
module attributes {dit.mesh = #dit.mesh<tp = 2>} {
  func.func @mlp(%x: tensor<1x8x16xf32>) -> tensor<1x8x8xf32> {
    %y = dit.activation swiglu %x : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
    return %y : tensor<1x8x8xf32>
  }
}
)mlir";

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::dit::DitDialect, mlir::func::FuncDialect>();
  llvm::outs() << "dialect: "
               << mlir::dit::DitDialect::getDialectNamespace() << "\n";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  if (!module)
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
