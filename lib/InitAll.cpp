//===- InitAll.cpp - register every ditc pass ------------------------------===//
#include "ditc/InitAll.h"
#include "ditc/Transforms/Passes.h"

void ditc::registerAllPasses() { registerDitcPasses(); }
