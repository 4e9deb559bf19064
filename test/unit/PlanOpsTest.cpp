//===- PlanOpsTest.cpp - the plan's op table against the dialects ---------===//
//
// Runtime/Plan/PlanOps.def says once which ops a plan may hold; the dialects
// say which ops exist. A dit op with no plan entry that is not listed as
// compile-only, a plan entry that names no registered op, or a stale
// compile-only entry fails here, so an op cannot be half-added.
//
//===----------------------------------------------------------------------===//
#include "ditc/InitAll.h"
#include "ditc/Runtime/Plan/Program.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace ditc;
using namespace ditc::runtime;

namespace {

/// Every op the dialects a ditc module may contain register, by name.
std::set<std::string> registeredOps() {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::set<std::string> names;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations())
    names.insert(op.getStringRef().str());
  return names;
}

TEST(PlanOps, EveryDitOpHasAPlanEntryOrIsCompileOnly) {
  std::set<std::string> registered = registeredOps();
  std::set<std::string> planned, compileOnly;
  for (const PlanOpInfo &op : planOps())
    planned.insert(op.name);
  for (const CompileOnlyOp &op : compileOnlyOps())
    compileOnly.insert(op.name);
  ASSERT_FALSE(registered.empty());
  for (const std::string &name : registered)
    if (name.rfind("dit.", 0) == 0)
      EXPECT_TRUE(planned.count(name) || compileOnly.count(name))
          << name << " is a dit op with no entry in PlanOps.def: add PLAN_OP (and "
          << "its decoding, validation and execution) or COMPILE_ONLY_OP";
  for (const std::string &name : planned)
    EXPECT_TRUE(name == "call" || registered.count(name))
        << "PlanOps.def lists " << name << ", which no dialect registers";
  for (const std::string &name : compileOnly) {
    EXPECT_TRUE(registered.count(name))
        << "PlanOps.def lists " << name << " as compile-only, but no dialect registers it";
    EXPECT_FALSE(planned.count(name)) << name << " is both planned and compile-only";
  }
}

TEST(PlanOps, NamesAndKindsRoundTrip) {
  std::set<std::string> names;
  for (const PlanOpInfo &op : planOps()) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name << " is listed twice";
    EXPECT_EQ(planOpName(op.kind), op.name);
    std::optional<OpKind> kind = planOpKind(op.name);
    ASSERT_TRUE(kind.has_value()) << op.name;
    EXPECT_EQ(*kind, op.kind);
  }
  EXPECT_EQ(names.size(), size_t(kPlanOpCount));
  EXPECT_FALSE(planOpKind("dit.unpatchify").has_value());
  EXPECT_FALSE(planOpKind("").has_value());
}

} // namespace
