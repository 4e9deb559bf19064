//===- BandPrograms.cpp - the VAE's band programs and their exchanges -----===//
#include "ditc/Transforms/BandPrograms.h"

#include "dit/IR/DitOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <algorithm>

using namespace mlir;

namespace ditc {

/// "1x8x?x4xf32": a shape with its rows (dim -2), which differ between
/// uneven bands, left out.
static std::string bandShape(Type type, int64_t *rows = nullptr) {
  auto tensor = cast<RankedTensorType>(type);
  std::string out;
  for (int64_t i = 0; i < tensor.getRank(); ++i) {
    bool isRows = i == tensor.getRank() - 2;
    if (isRows && rows)
      *rows = tensor.getDimSize(i);
    out += (isRows ? std::string("?") : std::to_string(tensor.getDimSize(i))) + "x";
  }
  std::string element;
  llvm::raw_string_ostream os(element);
  tensor.getElementType().print(os);
  return out + element;
}

std::vector<BandExchange> collectBandExchanges(func::FuncOp program) {
  std::vector<BandExchange> out;
  program.walk([&](Operation *op) {
    BandExchange e;
    e.op = op;
    if (auto halo = dyn_cast<shard::UpdateHaloOp>(op)) {
      ArrayRef<int64_t> sizes = halo.getStaticHaloSizes();
      e.kind = "update_halo";
      e.top = sizes.size() == 2 ? sizes[0] : -1;
      e.bottom = sizes.size() == 2 ? sizes[1] : -1;
      e.signature = "update_halo of " + bandShape(halo.getType(), &e.rows);
      e.rows -= std::max<int64_t>(e.top, 0) + std::max<int64_t>(e.bottom, 0);
    } else if (op->hasAttr("dit.band_collective")) {
      if (auto norm = dyn_cast<dit::GroupNormOp>(op)) {
        e.kind = "all_reduce_stats";
        e.signature = "all_reduce_stats of " +
                      std::to_string(cast<RankedTensorType>(norm.getType()).getDimSize(0)) +
                      "x" + std::to_string(norm.getNumGroups()) + " group sums";
      } else {
        e.kind = "all_gather_kv";
        e.signature = "all_gather_kv of " + bandShape(op->getResult(0).getType());
      }
    } else {
      return;
    }
    out.push_back(e);
  });
  return out;
}

FailureOr<std::map<int64_t, func::FuncOp>> bandPrograms(ModuleOp module) {
  std::map<int64_t, func::FuncOp> bands;
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto band = fn->getAttrOfType<IntegerAttr>("dit.vae_band");
    if (!band)
      continue;
    if (!bands.emplace(band.getInt(), fn).second) {
      fn.emitError() << "is VAE band " << band.getInt() << ", as @"
                     << bands[band.getInt()].getName() << " is";
      return failure();
    }
  }
  return bands;
}

} // namespace ditc
