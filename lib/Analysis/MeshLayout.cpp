//===- MeshLayout.cpp - rank <-> mesh coordinates and axis groups ---------===//
#include "ditc/Analysis/MeshLayout.h"

#include <algorithm>
#include <cassert>

namespace ditc {

std::vector<Axis> MeshLayout::defaultOrder() {
  return {kAllAxes.begin(), kAllAxes.end()};
}

MeshLayout::MeshLayout(const Degrees &degrees)
    : MeshLayout(degrees, defaultOrder()) {}

MeshLayout::MeshLayout(const Degrees &degrees, std::vector<Axis> order)
    : degrees(degrees), axes(std::move(order)) {
  strides.assign(axes.size(), 1);
  for (size_t i = axes.size(); i-- > 0;) {
    strides[i] = total;
    total *= degrees[axes[i]];
  }
}

int64_t MeshLayout::coordinate(int64_t linear, Axis axis) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] == axis)
      return (linear / strides[i]) % degrees[axis];
  return 0;
}

std::vector<std::vector<int64_t>> MeshLayout::groups(Axis axis) const {
  std::vector<std::vector<int64_t>> result;
  auto it = std::find(axes.begin(), axes.end(), axis);
  int64_t stride = it == axes.end() ? 1 : strides[it - axes.begin()];
  int64_t size = degrees[axis];
  if (it == axes.end())
    size = 1;
  for (int64_t first = 0; first < total; ++first) {
    // The group's first member has coordinate 0 on `axis`.
    if ((first / stride) % size != 0)
      continue;
    std::vector<int64_t> group;
    for (int64_t k = 0; k < size; ++k)
      group.push_back(first + k * stride);
    result.push_back(std::move(group));
  }
  return result;
}

std::vector<std::vector<int64_t>>
instanceGroups(const Placement &placement, const std::vector<int64_t> &ranks,
               Axis axis, const std::vector<Axis> &order) {
  Degrees local = placement.degrees;
  local[Axis::DP] = 1;
  std::vector<std::vector<int64_t>> groups;
  if (int64_t(ranks.size()) != local.worldSize())
    return groups;
  std::vector<Axis> localOrder;
  for (Axis a : order.empty() ? MeshLayout::defaultOrder() : order)
    if (a != Axis::DP)
      localOrder.push_back(a);
  for (const std::vector<int64_t> &positions :
       MeshLayout(local, localOrder).groups(axis)) {
    std::vector<int64_t> group;
    for (int64_t position : positions)
      group.push_back(ranks[position]);
    groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<std::vector<int64_t>>
placementGroups(const Placement &placement, Axis axis,
                const std::vector<Axis> &order) {
  std::vector<std::vector<int64_t>> groups;
  if (axis == Axis::DP) {
    size_t size = placement.instances.empty() ? 0 : placement.instances[0].size();
    for (size_t position = 0; position < size; ++position) {
      std::vector<int64_t> group;
      for (const std::vector<int64_t> &ranks : placement.instances)
        if (position < ranks.size())
          group.push_back(ranks[position]);
      // Like every group, listed in ascending rank order.
      std::sort(group.begin(), group.end());
      groups.push_back(std::move(group));
    }
    return groups;
  }
  for (const std::vector<int64_t> &ranks : placement.instances)
    for (auto &group : instanceGroups(placement, ranks, axis, order))
      groups.push_back(std::move(group));
  return groups;
}

Placement layOut(const Placement &placement, const std::vector<Axis> &order) {
  Placement laidOut = placement;
  if (!laidOut.explicitInstances)
    laidOut.instances = defaultInstances(laidOut.degrees, order);
  return laidOut;
}

std::vector<Degrees> rankCoordinates(const Placement &placement,
                                     const std::vector<Axis> &order,
                                     int64_t numRanks) {
  Degrees unused;
  unused.sizes.fill(-1);
  std::vector<Degrees> coords(numRanks, unused);
  Degrees local = placement.degrees;
  local[Axis::DP] = 1;
  std::vector<Axis> localOrder;
  for (Axis a : order.empty() ? MeshLayout::defaultOrder() : order)
    if (a != Axis::DP)
      localOrder.push_back(a);
  MeshLayout layout(local, localOrder);
  for (size_t replica = 0; replica < placement.instances.size(); ++replica) {
    const std::vector<int64_t> &ranks = placement.instances[replica];
    for (size_t position = 0; position < ranks.size(); ++position) {
      int64_t rank = ranks[position];
      if (rank < 0 || rank >= numRanks || int64_t(position) >= layout.size())
        continue;
      Degrees &c = coords[rank];
      for (Axis axis : kAllAxes)
        c[axis] = axis == Axis::DP ? int64_t(replica)
                                   : layout.coordinate(position, axis);
    }
  }
  return coords;
}

} // namespace ditc
