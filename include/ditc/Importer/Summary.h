//===- Summary.h - reports on imported and bundled models -----*- C++ -*-===//
#ifndef DITC_IMPORTER_SUMMARY_H
#define DITC_IMPORTER_SUMMARY_H

#include "ditc/Importer/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

namespace ditc {

/// Prints the model's architecture, the workload's token counts, and the
/// op counts of the imported module.
void printImportSummary(llvm::raw_ostream &os, const ModelSpec &spec,
                        const Workload &workload, mlir::ModuleOp module);

/// The same as one JSON object (`ditc import --summary --format json`).
nlohmann::json importSummaryJson(const ModelSpec &spec,
                                 const Workload &workload,
                                 mlir::ModuleOp module);

/// One line per bundled model with its key numbers (`ditc models`).
void printBundledModels(llvm::raw_ostream &os);

/// The same as {"models": [...]} (`ditc models --format json`).
nlohmann::json bundledModelsJson();

} // namespace ditc

#endif // DITC_IMPORTER_SUMMARY_H
