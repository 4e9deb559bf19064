//===- SequenceRules.cpp - sequence divisibility over the SP axes ---------===//
#include "Rules.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace ditc::rules {

namespace {

/// Up to three resolutions near the requested one (same frames, same model)
/// whose image-token count divides `unit`, nearest first.
std::string nearestDividingResolutions(const ModelFacts &m, int64_t unit) {
  int64_t stepH = m.vaeSpatial * m.patch[1];
  int64_t stepW = m.vaeSpatial * m.patch[2];
  int64_t gridFrames = m.latentFrames / m.patch[0];
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> found;
  const int64_t reach = 32; // steps of VAE x patch pixels in each direction
  for (int64_t dh = -reach; dh <= reach; ++dh) {
    for (int64_t dw = -reach; dw <= reach; ++dw) {
      int64_t h = m.height + dh * stepH, w = m.width + dw * stepW;
      if (h < stepH || w < stepW || (dh == 0 && dw == 0))
        continue;
      int64_t tokens = gridFrames * (h / stepH) * (w / stepW);
      if (tokens % unit != 0)
        continue;
      int64_t distance = std::llabs(h - m.height) + std::llabs(w - m.width);
      int64_t areaChange = std::llabs(h * w - m.height * m.width);
      found.emplace_back(distance, areaChange, h, w);
    }
  }
  std::sort(found.begin(), found.end());
  if (found.empty())
    return "no resolution within " + std::to_string(reach) +
           " steps divides; change the frame count or the degrees";
  std::string out = "nearest resolutions that divide: ";
  for (size_t i = 0; i < found.size() && i < 3; ++i) {
    auto [distance, area, h, w] = found[i];
    int64_t tokens = gridFrames * (h / stepH) * (w / stepW);
    out += std::string(i ? ", " : "") + "height " + std::to_string(h) +
           " x width " + std::to_string(w) + " (" + std::to_string(tokens) +
           " tokens)";
  }
  return out;
}

} // namespace

/// seq-divisibility: the sharded sequence (image tokens; text stays
/// replicated), with the model's packing alignment, must divide by
/// ulysses x ring x kv_gather.
void checkSeqDivisibility(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Degrees &d = ctx.transformer().degrees;
  int64_t shards = d.sequenceShards();
  if (shards < 2)
    return;
  const ModelFacts &m = ctx.model;
  int64_t unit = shards * m.seqAlign;
  if (m.imageTokens % unit == 0)
    return;
  std::string message =
      "sequence of " + std::to_string(m.imageTokens) +
      " image tokens is not divisible by ulysses " +
      std::to_string(d[Axis::Ulysses]) + " x ring " +
      std::to_string(d[Axis::Ring]) + " x kv_gather " +
      std::to_string(d[Axis::KVGather]) + " = " + std::to_string(shards);
  if (m.seqAlign > 1)
    message += " x packing alignment " + std::to_string(m.seqAlign);
  if (sink.wantsDetails())
    message += "; " + nearestDividingResolutions(m, unit);
  sink.report("seq-divisibility", Severity::Error, message);
}

} // namespace ditc::rules
