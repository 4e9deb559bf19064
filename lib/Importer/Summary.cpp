//===- Summary.cpp - human-readable report of an imported model -----------===//
#include "ditc/Importer/Summary.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

#include "dit/IR/DitDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <map>
#include <set>

using namespace mlir;

namespace ditc {

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
     << ", " << w.steps << " steps, guidance " << llvm::format("%g", w.guidanceScale)
     << ", " << w.branches << " branch" << (w.branches == 1 ? "" : "es")
     << (w.branches == 1 ? " (guidance-distilled or no CFG)" : " (true CFG)")
     << "\n";
  os << "latents      " << w.latentFrames << " x " << w.latentHeight << " x "
     << w.latentWidth << "\n";
  os << "tokens       " << w.imageTokens << " image tokens ("
     << w.grid[0] << " x " << w.grid[1] << " x " << w.grid[2] << ") + "
     << w.textTokens << " text tokens\n";

  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    std::map<std::string, int64_t> counts;
    std::set<int64_t> blocks;
    int64_t total = 0;
    fn.walk([&](Operation *op) {
      if (op == fn.getOperation() || isa<func::ReturnOp>(op))
        return;
      ++counts[op->getName().getStringRef().str()];
      ++total;
      if (auto index = op->getAttrOfType<IntegerAttr>(
              dit::DitDialect::kBlockAttrName))
        blocks.insert(index.getInt());
    });
    std::string label = "@" + fn.getName().str();
    os << llvm::format("%-15s ", label.c_str()) << total << " ops";
    if (!blocks.empty())
      os << " over " << blocks.size() << " blocks";
    os << ":";
    for (auto &[name, count] : counts)
      os << " " << name << "=" << count;
    os << "\n";
  }
}

void printBundledModels(llvm::raw_ostream &os) {
  os << llvm::format("%-18s %-32s %7s %5s %6s %5s %6s %8s %5s\n", "name",
                     "class", "blocks", "heads", "hdim", "width", "text",
                     "vae s/t", "cfg");
  for (const BundledModel &bundled : listBundledModels()) {
    try {
      ModelSpec spec = loadModel(bundled.path);
      std::string blocks = std::to_string(spec.numBlocks());
      if (spec.doubleBlocks && spec.singleBlocks)
        blocks = std::to_string(spec.doubleBlocks) + "+" +
                 std::to_string(spec.singleBlocks);
      std::string vae = std::to_string(spec.vaeSpatial) + "/" +
                        std::to_string(spec.vaeTemporal);
      os << llvm::format("%-18s %-32s %7s %5lld %6lld %5lld %6lld %8s %5lld\n",
                         escapeInvalidUtf8(bundled.name).c_str(),
                         spec.className.c_str(),
                         blocks.c_str(), (long long)spec.numHeads,
                         (long long)spec.headDim, (long long)spec.hiddenSize,
                         (long long)spec.info().textTokens, vae.c_str(),
                         (long long)spec.info().branches);
    } catch (const BadInput &error) {
      os << escapeInvalidUtf8(bundled.name) << ": "
         << escapeInvalidUtf8(error.what()) << "\n";
    }
  }
}

} // namespace ditc
