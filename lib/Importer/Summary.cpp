//===- Summary.cpp - reports of an imported model and the bundled ones ----===//
#include "ditc/Importer/Summary.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

#include "dit/IR/DitDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <map>
#include <optional>
#include <set>

using namespace mlir;

namespace ditc {

namespace {

/// The ops of one function, by name, and the blocks they belong to.
struct FunctionCensus {
  std::string name;
  std::map<std::string, int64_t> counts;
  std::set<int64_t> blocks;
  int64_t total = 0;
};

std::vector<FunctionCensus> takeCensus(ModuleOp module) {
  std::vector<FunctionCensus> censuses;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    FunctionCensus census;
    census.name = fn.getName().str();
    fn.walk([&](Operation *op) {
      if (op == fn.getOperation() || isa<func::ReturnOp>(op))
        return;
      ++census.counts[op->getName().getStringRef().str()];
      ++census.total;
      if (auto index =
              op->getAttrOfType<IntegerAttr>(dit::DitDialect::kBlockAttrName))
        census.blocks.insert(index.getInt());
    });
    censuses.push_back(std::move(census));
  }
  return censuses;
}

/// A bundled model with its spec, or the error that kept it from loading.
struct LoadedBundle {
  BundledModel bundled;
  std::optional<ModelSpec> spec;
  std::vector<std::string> repoIds;
  std::string error;
};

std::vector<LoadedBundle> loadBundledModels() {
  std::vector<LoadedBundle> loaded;
  std::vector<BundledModel> all = listBundledModels();
  for (const BundledModel &bundled : all) {
    LoadedBundle entry{bundled, std::nullopt, {}, ""};
    try {
      if (std::optional<std::string> clash = bundledModelClash(all, bundled))
        badFile(escapeInvalidUtf8(bundled.path), *clash);
      entry.spec = loadModel(bundled.path);
      entry.repoIds = bundledRepoIds(bundled);
    } catch (const BadInput &error) {
      entry.error = escapeInvalidUtf8(error.what());
    }
    loaded.push_back(std::move(entry));
  }
  return loaded;
}

} // namespace

void printImportSummary(llvm::raw_ostream &os, const ModelSpec &spec,
                        const Workload &w, ModuleOp module) {
  const FamilyInfo &info = spec.info();
  os << "model        " << escapeInvalidUtf8(spec.name) << " (" << spec.className << ", family "
     << info.name << ")\n";
  os << "blocks       " << spec.numBlocks();
  if (spec.doubleBlocks && spec.singleBlocks)
    os << " (" << spec.doubleBlocks << " double-stream + " << spec.singleBlocks
       << " single-stream)";
  else if (spec.doubleBlocks)
    os << " (dual-stream)";
  if (spec.experts > 1)
    os << " x " << spec.experts << " experts";
  os << "\n";
  os << "attention    " << spec.numHeads << " heads x " << spec.headDim
     << " head_dim = width " << spec.hiddenSize << "\n";
  os << "mlp          " << spec.ffnSize << "\n";
  os << "text         " << spec.textEncoderClass << ", " << w.textTokens
     << " tokens x " << spec.textEmbedDim << " (stream width "
     << spec.textHiddenSize << ")\n";
  os << "vae          " << spec.vaeClass << ", spatial " << spec.vaeSpatial
     << " x temporal " << spec.vaeTemporal << " ("
     << escapeInvalidUtf8(spec.vaeSource) << ")\n";
  os << "patch        " << spec.patch[0] << "x" << spec.patch[1] << "x"
     << spec.patch[2] << " over " << spec.latentChannels
     << " latent channels\n";
  os << "workload     " << w.batch << " x " << w.frames << " frame"
     << (w.frames == 1 ? "" : "s") << " x " << w.height << "x" << w.width
     << ", " << w.steps << " steps, guidance "
     << llvm::format("%g", w.guidanceScale) << ", ";
  int64_t modelBranches = spec.info().branches;
  if (w.branches == modelBranches)
    os << w.branches << " branch" << (w.branches == 1 ? "" : "es")
       << (w.branches == 1 ? " (guidance-distilled or no CFG)" : " (true CFG)");
  else
    os << w.branches << " branch (guidance scale <= 1 turns CFG off; the model's "
       << modelBranches << " run above 1)";
  os << "\n";
  os << "latents      " << w.latentFrames << " x " << w.latentHeight << " x "
     << w.latentWidth << "\n";
  os << "tokens       " << w.imageTokens << " image tokens ("
     << w.grid[0] << " x " << w.grid[1] << " x " << w.grid[2] << ") + "
     << w.textTokens << " text tokens\n";

  for (const FunctionCensus &census : takeCensus(module)) {
    std::string label = "@" + census.name;
    os << llvm::format("%-15s ", label.c_str()) << census.total << " ops";
    if (!census.blocks.empty())
      os << " over " << census.blocks.size() << " blocks";
    os << ":";
    for (auto &[name, count] : census.counts)
      os << " " << name << "=" << count;
    os << "\n";
  }
}

nlohmann::json importSummaryJson(const ModelSpec &spec, const Workload &w,
                                 ModuleOp module) {
  nlohmann::json model = modelSpecJson(spec);
  model["blocks"] = spec.numBlocks();
  // The model's guidance branches; the workload's are those that run.
  model["branches"] = spec.info().branches;
  model["text_encoder"] = spec.textEncoderClass;
  model["vae_class"] = spec.vaeClass;
  model["vae_source"] = escapeInvalidUtf8(spec.vaeSource);
  nlohmann::json functions = nlohmann::json::array();
  for (const FunctionCensus &census : takeCensus(module))
    functions.push_back({{"name", census.name},
                         {"ops", census.total},
                         {"blocks", census.blocks.size()},
                         {"op_counts", census.counts}});
  return {{"model", model}, {"workload", workloadJson(w)}, {"functions", functions}};
}

void printBundledModels(llvm::raw_ostream &os) {
  os << llvm::format("%-18s %-32s %7s %5s %6s %5s %6s %8s %5s\n", "name",
                     "class", "blocks", "heads", "hdim", "width", "text",
                     "vae s/t", "cfg");
  for (const LoadedBundle &entry : loadBundledModels()) {
    std::string name = escapeInvalidUtf8(entry.bundled.name);
    if (!entry.spec) {
      os << name << ": " << entry.error << "\n";
      continue;
    }
    const ModelSpec &spec = *entry.spec;
    std::string blocks = std::to_string(spec.numBlocks());
    if (spec.doubleBlocks && spec.singleBlocks)
      blocks = std::to_string(spec.doubleBlocks) + "+" +
               std::to_string(spec.singleBlocks);
    std::string vae = std::to_string(spec.vaeSpatial) + "/" +
                      std::to_string(spec.vaeTemporal);
    os << llvm::format("%-18s %-32s %7s %5lld %6lld %5lld %6lld %8s %5lld\n",
                       name.c_str(), spec.className.c_str(), blocks.c_str(),
                       (long long)spec.numHeads, (long long)spec.headDim,
                       (long long)spec.hiddenSize,
                       (long long)spec.info().textTokens, vae.c_str(),
                       (long long)spec.info().branches);
  }
}

nlohmann::json bundledModelsJson() {
  nlohmann::json models = nlohmann::json::array();
  for (const LoadedBundle &entry : loadBundledModels()) {
    std::string name = escapeInvalidUtf8(entry.bundled.name);
    if (!entry.spec) {
      models.push_back(
          {{"name", name},
           {"error", {{"kind", "bad-input"}, {"message", entry.error}}}});
      continue;
    }
    nlohmann::json model = modelSpecJson(*entry.spec);
    model["name"] = name;
    model["blocks"] = entry.spec->numBlocks();
    model["text_tokens"] = entry.spec->info().textTokens;
    model["branches"] = entry.spec->info().branches;
    model["repo_ids"] = entry.repoIds;
    models.push_back(model);
  }
  return {{"models", models}};
}

} // namespace ditc
