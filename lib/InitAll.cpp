//===- InitAll.cpp - register every ditc pass and pipeline -----------------===//
#include "ditc/InitAll.h"
#include "ditc/Transforms/Passes.h"
#include "ditc/Transforms/Pipelines.h"

void ditc::registerAllPasses() {
  registerDitcPasses();
  registerPartitionPipeline();
}
