//===- BandPrograms.h - the VAE's band programs and their exchanges -*- C++ -*-===//
//
// dit-partition-vae splits the decoder into one program per band; three
// ops in them cross band edges (shard.update_halo, and GroupNorm and the
// mid-block attention marked dit.band_collective). dit-verify-collectives
// proves that the bands' exchanges pair up, and the plan lists them
// (manifest vae.exchanges) so that dit-run can hold its decoders to the
// verified program. Both read them here.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TRANSFORMS_BANDPROGRAMS_H
#define DITC_TRANSFORMS_BANDPROGRAMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ditc {

/// One exchange of a band program, in program order.
struct BandExchange {
  /// update_halo, all_reduce_stats (GroupNorm's sums) or all_gather_kv.
  std::string kind;
  /// What every band must agree on: the kind and the shapes, rows left out.
  std::string signature;
  /// update_halo: the rows it reads from the band above and below (0 at
  /// the image's edges).
  int64_t top = 0, bottom = 0;
  /// The band's own rows at the exchange.
  int64_t rows = 0;
  mlir::Operation *op = nullptr;
};

/// The exchanges of one band program, in the order a band issues them.
std::vector<BandExchange> collectBandExchanges(mlir::func::FuncOp program);

/// The module's band programs (functions marked dit.vae_band) by band;
/// empty when the decode is not split. Fails, naming both, on two programs
/// for one band.
mlir::FailureOr<std::map<int64_t, mlir::func::FuncOp>> bandPrograms(mlir::ModuleOp module);

} // namespace ditc

#endif // DITC_TRANSFORMS_BANDPROGRAMS_H
