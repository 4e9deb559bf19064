//===- FamilyRegistry.cpp - the model families the importer knows ---------===//
//
// One entry per file under Families/. A new family adds its file and its
// line here; nothing else in the importer names a family.
//
//===----------------------------------------------------------------------===//
#include "Family.h"

namespace ditc {

const std::vector<const FamilyDef *> &familyRegistry() {
  static const std::vector<const FamilyDef *> families = {
      &kWanFamily,       &kFluxFamily,     &kQwenImageFamily,
      &kHunyuanVideoFamily, &kCogVideoXFamily, &kLTXVideoFamily,
      &kMochiFamily,     &kSD3Family,
  };
  return families;
}

const FamilyDef *findFamily(const std::string &className) {
  for (const FamilyDef *family : familyRegistry())
    if (className == family->info.className)
      return family;
  return nullptr;
}

} // namespace ditc
