//===- plan_info.cpp - an installed ditc::runtime, used from outside ------===//
#include "ditc/Runtime/IO/Initializer.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Support/BadInput.h"

#include <iostream>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: plan-info PLAN_DIR\n";
    return 2;
  }
  try {
    ditc::runtime::Manifest manifest = ditc::runtime::loadManifest(argv[1]);
    std::cout << "model: " << manifest.modelName << "\n"
              << "ranks: " << manifest.worldSize() << "\n"
              << "programs: " << manifest.programs.size() << "\n";
    at::Tensor noise = ditc::runtime::drawNoiseBlock(0, manifest, 0);
    std::cout << "noise block 0: " << noise.sizes() << " " << noise.dtype()
              << "\n";
  } catch (const ditc::BadInput &error) {
    std::cerr << "plan-info: error: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
