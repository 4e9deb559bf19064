//===- MeshInfo.h - the laid-out mesh as later passes read it ---*- C++ -*-===//
#ifndef DITC_TRANSFORMS_MESHINFO_H
#define DITC_TRANSFORMS_MESHINFO_H

#include "ditc/Analysis/AxisConversion.h"

#include "dit/IR/DitDialect.h"

#include "dit/IR/DitInterfaceTypes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace ditc {

/// The grid dit-mesh-layout emitted: its op, the axis order, and the
/// transformer's degrees.
struct MeshInfo {
  mlir::shard::GridOp grid;
  std::vector<Axis> order; // grid axis i is order[i]
  Degrees degrees;

  /// The grid axis index of `axis`.
  int16_t gridAxis(Axis axis) const;
  int64_t size(Axis axis) const { return degrees[axis]; }
  /// Ranks in one group over the grid axes `gridAxes`.
  int64_t groupSize(llvm::ArrayRef<int16_t> gridAxes) const {
    int64_t n = 1;
    for (int16_t a : gridAxes)
      n *= size(order[a]);
    return n;
  }
  /// The axes that split image tokens (ring, kv_gather, ulysses above 1),
  /// in mesh order: a rank's token block is row-major over them.
  std::vector<Axis> sequenceAxes() const;
};

/// Module attributes dit-mesh-layout sets (#dit.axes and #dit.groups; read
/// them through DitDialect's typed helpers), for messages that name them.
constexpr llvm::StringLiteral kMeshAxesAttrName =
    mlir::dit::DitDialect::MeshAxesAttrHelper::getNameStr();
constexpr llvm::StringLiteral kGroupsAttrName =
    mlir::dit::DitDialect::GroupsAttrHelper::getNameStr();

/// Name of the grid symbol dit-mesh-layout emits.
constexpr const char *kGridName = "mesh";
/// The VAE band programs' grid (dit-partition-vae): one axis, a replica's
/// decoding ranks in band order.
constexpr const char *kVaeBandGridName = "vae_bands";
/// The grid of the text encoders' tensor-parallel ranks (dit-partition-text-encoder).
constexpr const char *kTextEncoderGridName = "text_encoder_tp";



/// Reads the grid and axis order; fails with an error on the module when
/// dit-mesh-layout has not run.
mlir::FailureOr<MeshInfo> readMeshInfo(mlir::ModuleOp module);

/// The mesh as the dit op interfaces see it: the grid's axes by name.
mlir::dit::MeshContext meshContextOf(const MeshInfo &mesh);

} // namespace ditc

#endif // DITC_TRANSFORMS_MESHINFO_H
