//===- Initializer.cpp - deterministic parameters, noise and text ---------===//
#include "ditc/Runtime/IO/Initializer.h"
#include "ditc/Support/Sha256.h"
#include "ditc/Support/Strings.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace ditc::runtime {

uint64_t streamKey(int64_t seed, const std::string &name) {
  std::string hex = sha256Hex(std::to_string(seed) + ":" + name);
  // The first 8 digest bytes, little-endian.
  uint64_t key = 0;
  for (int byte = 7; byte >= 0; --byte)
    key = (key << 8) | std::stoul(hex.substr(2 * byte, 2), nullptr, 16);
  return key;
}

static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static inline double uniformOpen(uint64_t key, uint64_t counter) {
  uint64_t bits = mix64(key + (counter + 1) * 0x9E3779B97F4A7C15ull);
  return (double(bits >> 11) + 0.5) / 9007199254740992.0; // 2^53
}

double counterNormal(uint64_t key, uint64_t index) {
  double u1 = uniformOpen(key, 2 * index);
  double u2 = uniformOpen(key, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

/// Fills `out` (float32, contiguous) with base + scale * normal(global(i)),
/// where global(i) maps a local flat index to the global one.
template <typename GlobalIndex>
static void fill(at::Tensor &out, uint64_t key, double base, double scale,
                 GlobalIndex global) {
  float *data = out.data_ptr<float>();
  at::parallel_for(0, out.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      data[i] = float(base + scale * counterNormal(key, uint64_t(global(i))));
  });
}

at::Tensor drawNormal(int64_t seed, const std::string &name,
                      const std::vector<int64_t> &shape) {
  at::Tensor out = at::empty(shape, at::kFloat);
  fill(out, streamKey(seed, name), 0.0, 1.0, [](int64_t i) { return i; });
  return out;
}

at::Tensor drawParameter(int64_t seed, const ParamSpec &spec, int64_t tpSize,
                         int64_t tpIndex) {
  std::vector<int64_t> shape = spec.shape;
  if (spec.onlyOnTpZero && tpIndex != 0)
    return at::zeros(shape, at::kFloat);
  bool matrix = shape.size() > 1;
  double scale = matrix ? 0.5 / std::sqrt(double(shape.back())) : 0.1;
  bool normWeight = !matrix && endsWith(spec.name, "weight");
  double base = normWeight ? 1.0 : 0.0;
  uint64_t key = streamKey(seed, spec.name);
  if (spec.splitDim < 0) {
    at::Tensor out = at::empty(shape, at::kFloat);
    fill(out, key, base, scale, [](int64_t i) { return i; });
    return out;
  }
  // The global indices along the split dimension this rank holds: slice
  // tpIndex of every segment, in segment order.
  std::vector<int64_t> kept;
  int64_t start = 0;
  for (int64_t width : spec.segments) {
    int64_t chunk = width / tpSize;
    for (int64_t j = 0; j < chunk; ++j)
      kept.push_back(start + tpIndex * chunk + j);
    start += width;
  }
  int64_t dim = spec.splitDim, inner = 1, globalDim = shape[dim];
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t localDim = int64_t(kept.size());
  shape[dim] = localDim;
  at::Tensor out = at::empty(shape, at::kFloat);
  fill(out, key, base, scale, [&](int64_t i) {
    int64_t in = i % inner, rest = i / inner;
    int64_t j = rest % localDim, outer = rest / localDim;
    return (outer * globalDim + kept[j]) * inner + in;
  });
  return out;
}

std::string parameterStreamName(const std::string &expert, const std::string &name) {
  return expert == "transformer" ? name : expert + "." + name;
}

at::Tensor drawNoiseBlock(int64_t seed, const Manifest &m, int64_t block) {
  int64_t pt = m.patch[0], ph = m.patch[1], pw = m.patch[2];
  int64_t C = m.latentChannels, F = m.latentFrames, H = m.latentHeight,
          W = m.latentWidth;
  int64_t gh = H / ph, gw = W / pw;
  int64_t tokens = m.latentTokens / m.latentBlocks();
  int64_t features = m.latentFeatures, first = block * tokens;
  at::Tensor out = at::empty({m.batch, tokens, features}, at::kFloat);
  fill(out, streamKey(seed, "noise"), 0.0, 1.0, [&](int64_t i) {
    int64_t feature = i % features, rest = i / features;
    int64_t token = first + rest % tokens, b = rest / tokens;
    // channels_last: feature = position * C + c; channels_first: c * P + position.
    int64_t c = m.channelsFirst ? feature / (pt * ph * pw) : feature % C;
    int64_t f2 = m.channelsFirst ? feature % (pt * ph * pw) : feature / C;
    int64_t iw = f2 % pw, ih = (f2 / pw) % ph, it = f2 / (pw * ph);
    int64_t w = token % gw, h = (token / gw) % gh, f = token / (gw * gh);
    int64_t z = f * pt + it, y = h * ph + ih, x = w * pw + iw;
    return (((b * C + c) * F + z) * H + y) * W + x;
  });
  return out;
}

at::Tensor unpatchify(const at::Tensor &tokens, const Manifest &m) {
  int64_t pt = m.patch[0], ph = m.patch[1], pw = m.patch[2];
  int64_t gf = m.latentFrames / pt, gh = m.latentHeight / ph,
          gw = m.latentWidth / pw;
  at::Tensor grid =
      m.channelsFirst
          ? tokens.reshape({m.batch, gf, gh, gw, m.latentChannels, pt, ph, pw})
                .permute({0, 4, 1, 5, 2, 6, 3, 7})
          : tokens.reshape({m.batch, gf, gh, gw, pt, ph, pw, m.latentChannels})
                .permute({0, 7, 1, 4, 2, 5, 3, 6});
  return grid
      .reshape({m.batch, m.latentChannels, m.latentFrames, m.latentHeight,
                m.latentWidth})
      .contiguous();
}

at::Tensor patchifyBlock(const at::Tensor &latents, const Manifest &m,
                         int64_t block) {
  int64_t pt = m.patch[0], ph = m.patch[1], pw = m.patch[2];
  int64_t gf = m.latentFrames / pt, gh = m.latentHeight / ph,
          gw = m.latentWidth / pw;
  int64_t tokens = m.latentTokens / m.latentBlocks();
  std::vector<int64_t> order = m.channelsFirst
                                   ? std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}
                                   : std::vector<int64_t>{0, 2, 4, 6, 3, 5, 7, 1};
  return latents
      .reshape({m.batch, m.latentChannels, gf, pt, gh, ph, gw, pw})
      .permute(order)
      .reshape({m.batch, m.latentTokens, m.latentFeatures})
      .narrow(1, block * tokens, tokens)
      .contiguous();
}

} // namespace ditc::runtime
