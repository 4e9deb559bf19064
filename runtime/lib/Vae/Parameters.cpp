//===- Parameters.cpp - VAE parameters under diffusers' names -------------===//
#include "ditc/Runtime/Vae/Parameters.h"
#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/IO/Initializer.h"
#include "ditc/Runtime/IO/Weights.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Strings.h"
#include "ditc/Support/Utf8.h"

#include <cmath>

namespace ditc::runtime {

VaeParameters loadVaeParameters(const std::vector<VaeParameter> &wanted,
                                const checkpoint::TransformerWeights &weights) {
  VaeParameters out;
  std::string shapeFrom = "the VAE's config.json (" + escapeInvalidUtf8(weights.configPath()) + ")";
  for (const VaeParameter &param : wanted)
    out.emplace(param.name,
                readWholeTensor(weights.locate(param.name), param.name, param.shape, shapeFrom));
  return out;
}

VaeParameters seededVaeParameters(const std::vector<VaeParameter> &wanted,
                                  uint64_t seed) {
  VaeParameters out;
  for (const VaeParameter &param : wanted) {
    at::Tensor draw = drawNormal(int64_t(seed), "vae." + param.name, param.shape);
    // RMS norm's gamma is [C, 1, 1(, 1)]: a scale, whatever its rank.
    bool gamma = endsWith(param.name, ".gamma");
    if (param.shape.size() > 1 && !gamma) {
      int64_t fanIn = draw.numel() / param.shape[0];
      draw.mul_(1.0 / std::sqrt(double(fanIn)));
    } else {
      draw.mul_(0.1);
      if (gamma || endsWith(param.name, ".weight"))
        draw.add_(1.0);
    }
    out.emplace(param.name, std::move(draw));
  }
  return out;
}

int64_t vaeParameterBytes(const std::vector<VaeParameter> &parameters) {
  int64_t bytes = 0;
  for (const VaeParameter &p : parameters) {
    int64_t elements = 4;
    for (int64_t d : p.shape)
      elements *= d;
    bytes += elements;
  }
  return bytes;
}

} // namespace ditc::runtime
