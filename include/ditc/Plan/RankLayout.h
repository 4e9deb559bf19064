//===- RankLayout.h - where a plan's ranks sit, as SVG, text or JSON -*- C++
//-*-===//
//
// Reads the rank layout from a plan manifest (mesh axes, groups, ranks and
// node shape) and renders it: layout.svg in every plan folder, and the
// report of `ditc explain`. No MLIR, so anything that reads plans can use it.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_PLAN_RANKLAYOUT_H
#define DITC_PLAN_RANKLAYOUT_H

#include "ditc/Support/JsonFile.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ditc {

struct LayoutAxis {
  std::string name;
  int64_t size = 1;
  std::vector<std::vector<int64_t>> groups; // ascending global ranks
};

struct RankLayout {
  std::string model; // empty when the manifest has none
  int64_t numGpus = 1, nnodes = 1, gpusPerNode = 1;
  std::vector<LayoutAxis> axes;             // mesh order, outermost first
  std::vector<std::vector<int64_t>> coords; // per rank, per axis
  std::vector<std::string> programs;        // per rank; empty when idle
  /// Per rank: the replica a rank without a program encodes or decodes for
  /// (plan `replica`, a component on ranks of its own); -1 otherwise.
  std::vector<int64_t> servedReplica;

  /// "program s0_c0", "text_encoder/vae of replica 0" or "idle".
  std::string roleOf(int64_t rank) const;

  int64_t nodeOf(int64_t rank) const { return rank / gpusPerNode; }
  /// Whether the members of `group` sit on more than one node.
  bool crossesNodes(const std::vector<int64_t> &group) const;
};

/// Reads the layout from a manifest (docs/plan-format.md). Without
/// `topology`, one node holds every rank. Throws BadInput naming the file
/// and field when something is missing or inconsistent.
RankLayout readRankLayout(const JsonObject &manifest);

/// Ranks drawn at most; a larger world draws its first ranks and says so.
constexpr int64_t kMaxDrawnRanks = 1024;

/// One SVG document: a row of GPU boxes per node, each labelled with its
/// rank and coordinates on the axes of size > 1; each such axis's groups
/// linked in its colour, links that cross nodes dashed red; a legend.
std::string renderLayoutSvg(const RankLayout &layout);

/// `ditc explain`: the rank table (node, local GPU, coordinates, program),
/// the groups of every axis of size > 1, and which groups cross nodes.
std::string formatLayoutText(const RankLayout &layout);

/// The same as JSON, for `ditc explain --format json`.
nlohmann::json layoutJson(const RankLayout &layout);

} // namespace ditc

#endif // DITC_PLAN_RANKLAYOUT_H
