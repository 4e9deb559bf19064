//===- ConfigFuzzer.cpp - fuzz the model-config importer ------------------===//
//
// The input is either a transformer config.json (raw bytes), or a JSON
// object {"transformer": T, "model_index": I?, "vae": V?} laid out as a
// snapshot folder (each part a JSON value, or a string written verbatim).
// The model is loaded, its default workload resolved and the graph
// imported and verified, as `ditc import` does. A config must end in a
// verified module or BadInput, never in invalid IR or a crash.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/Importer/ModelSpec.h"
#include "ditc/InitAll.h"
#include "ditc/Support/BadInput.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <filesystem>
#include <nlohmann/json.hpp>

using nlohmann::json;

static mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    ditc::registerAllDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    // Verifier messages are expected for refused configs; keep them quiet.
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {
      return mlir::success();
    });
    return c;
  }();
  return *ctx;
}

static std::string partText(const json &part) {
  return part.is_string() ? part.get<std::string>()
                          : part.dump(-1, ' ', false, json::error_handler_t::replace);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  namespace fs = std::filesystem;
  std::string root = ditc::fuzz::scratchDir();
  std::string model;
  json input = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (input.is_object() && input.contains("transformer")) {
    std::string dir = root + "/snapshot";
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir + "/transformer", ec);
    ditc::fuzz::writeText(dir + "/transformer/config.json",
                          partText(input["transformer"]));
    if (input.contains("model_index"))
      ditc::fuzz::writeText(dir + "/model_index.json",
                            partText(input["model_index"]));
    if (input.contains("vae")) {
      fs::create_directories(dir + "/vae", ec);
      ditc::fuzz::writeText(dir + "/vae/config.json", partText(input["vae"]));
    }
    model = dir;
  } else {
    model = root + "/config.json";
    ditc::fuzz::writeBytes(model, data, size);
  }
  try {
    ditc::ModelSpec spec = ditc::loadModel(model);
    ditc::Workload workload = ditc::resolveWorkload(spec, {});
    ditc::ImportOptions options;
    auto module = ditc::importModel(context(), spec, workload, options);
    if (!module || mlir::failed(mlir::verify(*module)))
      __builtin_trap(); // importModel returned invalid IR instead of BadInput
  } catch (const ditc::BadInput &error) {
    ditc::fuzz::noteRefusal(error.what());
  }
  return 0;
}
