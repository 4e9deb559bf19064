//===- LoadModel.h - read a model's configs into a ModelSpec ----*- C++ -*-===//
//
// Part of the importer library (DitcImporter): each family's config reader
// lives in the family's file beside its block builder
// (lib/Importer/Families), so reading a config links the dialect.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_IMPORTER_LOADMODEL_H
#define DITC_IMPORTER_LOADMODEL_H

#include "ditc/Importer/ModelSpec.h"

#include <string>

namespace ditc {

/// Loads MODEL: a bundled model name, a transformer config.json, or an
/// HF-style snapshot folder. Throws BadInput with a one-line message.
ModelSpec loadModel(const std::string &model);

} // namespace ditc

#endif // DITC_IMPORTER_LOADMODEL_H
