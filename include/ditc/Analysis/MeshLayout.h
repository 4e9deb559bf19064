//===- MeshLayout.h - rank <-> mesh coordinates and axis groups -*- C++ -*-===//
//
// Ranks are laid out row-major over the axes, outermost first. The default
// order dp, cfg, pp, ring, kv_gather, ulysses, tp keeps TP groups
// contiguous, puts Ulysses groups inside the TP stride and ring groups on
// strided ranks, and leaves CFG, PP and DP outermost, where crossing nodes
// costs least.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_ANALYSIS_MESHLAYOUT_H
#define DITC_ANALYSIS_MESHLAYOUT_H

#include "ditc/Analysis/Deployment.h"

#include <vector>

namespace ditc {

class MeshLayout {
public:
  /// Lays out `degrees` in `order` (outermost first). Axes missing from
  /// `order` must have size 1.
  MeshLayout(const Degrees &degrees, std::vector<Axis> order);
  /// The default order.
  explicit MeshLayout(const Degrees &degrees);
  static std::vector<Axis> defaultOrder();

  int64_t size() const { return total; }
  const std::vector<Axis> &order() const { return axes; }
  /// Coordinate of `linear` along `axis`.
  int64_t coordinate(int64_t linear, Axis axis) const;
  /// Every group of `axis`: the linear indices that differ only in that
  /// axis's coordinate, each list ascending, groups in ascending order of
  /// their first member.
  std::vector<std::vector<int64_t>> groups(Axis axis) const;

private:
  Degrees degrees;
  std::vector<Axis> axes;
  std::vector<int64_t> strides; // per axis in `axes`
  int64_t total = 1;
};

/// The process groups one replica's ranks form on `axis`: ranks are laid
/// out row-major over `order` (dp excluded) at their positions in `ranks`.
/// Empty when `ranks` does not have instanceSize() entries.
std::vector<std::vector<int64_t>>
instanceGroups(const Placement &placement, const std::vector<int64_t> &ranks,
               Axis axis, const std::vector<Axis> &order);

/// Every group of `placement` on `axis`, over all replicas, in global ranks.
/// The dp groups join the ranks at one position across the replicas.
std::vector<std::vector<int64_t>>
placementGroups(const Placement &placement, Axis axis,
                const std::vector<Axis> &order);

/// `placement` with its replicas laid out by `order`: explicit rank lists
/// stay as given, default ones follow the order.
Placement layOut(const Placement &placement, const std::vector<Axis> &order);

/// Every rank's coordinate on every axis under `placement` (dp is the
/// replica index); ranks the placement does not use get -1 everywhere.
std::vector<Degrees> rankCoordinates(const Placement &placement,
                                     const std::vector<Axis> &order,
                                     int64_t numRanks);

} // namespace ditc

#endif // DITC_ANALYSIS_MESHLAYOUT_H
