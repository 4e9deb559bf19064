//===- DeploymentFuzzer.cpp - fuzz the deployment reader and the rules ----===//
//
// The input is a deployment file. It is read, attached to tiny-wan's
// imported module and judged, and an illegal one gets the cost model's
// suggestions, as `ditc check --deployment` does: bad input must be
// BadInput, and the rules and the suggestion search must finish for any
// deployment the reader accepts.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/Legality.h"
#include "ditc/CostModel/Search.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/Importer/ModelSpec.h"
#include "ditc/InitAll.h"
#include "ditc/Support/BadInput.h"

#include "dit/IR/DitDialect.h"
#include "mlir/IR/MLIRContext.h"

namespace {
struct Fixture {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ditc::HardwareProfile hardware = ditc::loadHardwareProfile("h100-sxm");
  Fixture() {
    mlir::DialectRegistry registry;
    ditc::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    ditc::ModelSpec spec = ditc::loadModel("tiny-wan");
    module = ditc::importModel(context, spec, ditc::resolveWorkload(spec, {}), {});
  }
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Fixture *fixture = new Fixture();
  std::string path = ditc::fuzz::scratchDir() + "/deployment.json";
  ditc::fuzz::writeBytes(path, data, size);
  try {
    ditc::DeploymentFile file = ditc::parseDeploymentFile(path);
    mlir::ModuleOp module = *fixture->module;
    module->setAttr(mlir::dit::DitDialect::kDeploymentAttrName,
                    ditc::deploymentToAttribute(fixture->context, file.deployment));
    mlir::FailureOr<ditc::LegalityContext> legality =
        ditc::buildLegalityContext(module, ditc::deploymentFromModule(module));
    if (mlir::succeeded(legality) && !ditc::checkLegality(*legality).legal())
      ditc::suggestConfigurations(module, *legality, fixture->hardware,
                                  /*steps=*/1, /*branchCalls=*/2);
  } catch (const ditc::BadInput &error) {
    ditc::fuzz::noteRefusal(error.what());
  }
  return 0;
}
