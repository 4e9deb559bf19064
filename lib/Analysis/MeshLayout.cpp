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

} // namespace ditc
