//===- InitAll.cpp - register every ditc pass ------------------------------===//
#include "ditc/InitAll.h"

void ditc::registerAllPasses() {}
