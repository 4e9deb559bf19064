//===- ImporterTest.cpp - importModel refuses specs that build invalid IR -===//
//
// The config readers refuse every field the dit ops' verifiers depend on, so
// no config reaches these paths from the command line; the tests build the
// bad specs directly to show that the importer's last check still turns
// invalid IR into a BadInput quoting the verifier, never a crash or a "bug".
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "dit/IR/DitDialect.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/InitAll.h"
#include "ditc/Support/BadInput.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace ditc;

namespace {

/// The message importModel throws for `spec`, or "" when it imports.
std::string importError(const ModelSpec &spec) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  Workload workload = resolveWorkload(spec, {64, 64, 5, std::nullopt,
                                             std::nullopt, std::nullopt});
  try {
    importModel(context, spec, workload);
  } catch (const BadInput &error) {
    return error.what();
  }
  return "";
}

ModelSpec tinyWan() {
  return loadModel(std::string(DITC_TEST_MODELS_DIR) + "/tiny-wan");
}

TEST(Importer, TinyWanImports) { EXPECT_EQ(importError(tinyWan()), ""); }

TEST(Importer, OddFreqDimQuotesTheVerifier) {
  ModelSpec spec = tinyWan();
  spec.freqDim = 3;
  std::string message = importError(spec);
  EXPECT_NE(message.find("does not verify"), std::string::npos) << message;
  EXPECT_NE(message.find("freq_dim must be a positive even number, got 3"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("bug"), std::string::npos) << message;
  // The op is located at its diffusers module, and the message says which.
  EXPECT_NE(message.find("(at condition_embedder.time_embedder)"),
            std::string::npos)
      << message;
}

TEST(Importer, UnknownFamilyIsBadInput) {
  ModelSpec spec = tinyWan();
  spec.className = "NotATransformer";
  std::string message = importError(spec);
  EXPECT_NE(message.find("class 'NotATransformer' is not a DiT family"),
            std::string::npos)
      << message;
}

TEST(Importer, EmptyComponentClassQuotesTheVerifier) {
  ModelSpec spec = tinyWan();
  spec.vaeClass = "";
  std::string message = importError(spec);
  EXPECT_NE(message.find("'dit.component' op needs a class name"),
            std::string::npos)
      << message;
}

TEST(Importer, InvalidModelAttributeQuotesItsVerifier) {
  ModelSpec spec = tinyWan();
  spec.ffnSize = 0;
  std::string message = importError(spec);
  EXPECT_NE(message.find("model ffn_size must be positive, got 0"),
            std::string::npos)
      << message;
}

// #dit.model's verifier refuses a family the dialect does not list; the
// list must hold every family the importer builds, and nothing more.
TEST(Importer, DialectListsEveryFamily) {
  std::vector<std::string> built;
  for (const FamilyDef *family : familyRegistry())
    built.push_back(family->info.name);
  std::vector<std::string> listed;
  for (llvm::StringRef name : mlir::dit::DitDialect::modelFamilies())
    listed.push_back(name.str());
  std::sort(built.begin(), built.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(built, listed);
}

} // namespace
