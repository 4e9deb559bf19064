//===- VaeDecodeCost.cpp - the VAE decode's work, memory and time ---------===//
#include "ditc/CostModel/VaeDecodeCost.h"
#include "ditc/CostModel/CostModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace ditc {

namespace {

using nlohmann::json;

constexpr double kFloatBytes = 4;

int64_t intOr(const json &config, const char *key, int64_t fallback) {
  auto it = config.find(key);
  return it != config.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

bool boolOr(const json &config, const char *key, bool fallback) {
  auto it = config.find(key);
  return it != config.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::vector<int64_t> intsOr(const json &config, const char *key, std::vector<int64_t> fallback) {
  auto it = config.find(key);
  if (it == config.end() || !it->is_array())
    return fallback;
  std::vector<int64_t> out;
  for (const json &v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 14))
      return fallback;
    out.push_back(v.get<int64_t>());
  }
  return out.empty() ? fallback : out;
}

/// Accumulates one band's layers. `rows` and `width` are the band's current
/// rows and columns, `frames` the frames a layer sees per decode.
class LayerWalk {
public:
  LayerWalk(int64_t batch, double rows, double width, int64_t bands)
      : batch(double(batch)), rows(rows), width(width), bands(bands) {}

  double pixels() const { return rows * width * frames; }

  /// A k x k (x kt) convolution from `in` to `out` channels; one with a
  /// spatial kernel above 1 exchanges one halo row with each neighbour.
  void conv(int64_t in, int64_t out, int64_t spatial, int64_t temporal = 1,
            double inputFrames = 0) {
    double flops = 2.0 * batch * pixels() * double(out) * double(in) * double(spatial * spatial * temporal);
    work.convolutionFlops += flops;
    work.compute.flops[size_t(OpClass::Gemm)] += flops;
    double inFrames = inputFrames > 0 ? inputFrames : frames;
    work.compute.bytes[size_t(OpClass::Gemm)] +=
        kFloatBytes * batch * rows * width * (double(in) * inFrames + double(out) * frames);
    work.paramBytes += kFloatBytes * double(out) * (double(in) * double(spatial * spatial * temporal) + 1);
    launch(1);
    if (spatial > 1 && bands > 1) {
      work.haloBytes += 2.0 * kFloatBytes * batch * width * double(in) * inFrames;
      ++work.haloExchanges;
    }
    alive(std::max(in, out));
  }
  /// A norm (with its activation): read and write twice. GroupNorm
  /// all-reduces two float64 sums per channel and row of the whole image
  /// (each band's rows placed at theirs: runtime Vae/Bands.h).
  void norm(int64_t channels, int64_t groups) {
    double elements = batch * pixels() * double(channels);
    work.compute.bytes[size_t(OpClass::Elementwise)] += 4.0 * kFloatBytes * elements;
    work.paramBytes += kFloatBytes * 2.0 * double(channels);
    launch(2); // the norm and its activation
    if (groups > 0 && bands > 1) {
      work.reduceBytes += 2.0 * 8.0 * batch * double(channels) * rows * double(bands) * frames;
      ++work.reductions;
    }
  }
  void resnet(int64_t in, int64_t out, int64_t spatial, int64_t temporal, int64_t groups) {
    norm(in, groups);
    conv(in, out, spatial, temporal);
    norm(out, groups);
    conv(out, out, spatial, temporal);
    if (in != out)
      conv(in, out, 1);
  }
  /// One-head attention over each frame's pixels: the band's queries over
  /// every band's keys, which it all-gathers.
  void attention(int64_t channels, double framesAttended, double allRows) {
    double queries = rows * width, keys = allRows * width;
    double projections = 2.0 * batch * framesAttended * queries * 4.0 * double(channels * channels);
    double scores = 2.0 * batch * framesAttended * queries * keys * 2.0 * double(channels);
    work.compute.flops[size_t(OpClass::Gemm)] += projections;
    work.compute.flops[size_t(OpClass::Attention)] += scores;
    work.compute.attentionFlopsByKeys[keys] += scores;
    work.attentionFlops += projections + scores;
    work.paramBytes += kFloatBytes * 4.0 * double(channels) * double(channels + 1);
    launch(5); // q, k, v, the attention and the output projection
    if (bands > 1) {
      work.gatherBytes += 2.0 * kFloatBytes * batch * framesAttended * keys * double(channels);
      ++work.gathers; // K and V side by side in one
    }
    alive(3 * channels);
  }
  void upsample() {
    rows *= 2;
    width *= 2;
    launch(1);
  }
  /// `ops` launched once per chunk of frames the decoder takes at a time.
  void launch(double ops) {
    work.compute.launches += ops * std::max(1.0, frames / std::max(1.0, chunkFrames));
  }
  /// Five activations of the widest layer alive at once (a resnet's input,
  /// norm, activation, padded copy and output), as the runtime's estimate.
  void alive(int64_t channels) {
    peak = std::max(peak, 5.0 * kFloatBytes * batch * rows * width * chunkFrames * double(channels));
  }

  double batch, rows, width;
  double frames = 1;      // frames a layer runs over in one decode
  double chunkFrames = 1; // frames alive at once (Wan decodes chunk by chunk)
  int64_t bands;
  double peak = 0;
  VaeDecodeWork work;
};

std::optional<VaeDecodeWork> autoencoderKL(const json &config, const VaeDecodeShape &shape,
                                           double bandRows, int64_t bands) {
  std::vector<int64_t> widths = intsOr(config, "block_out_channels", {128, 256, 512, 512});
  int64_t latent = intOr(config, "latent_channels", 4);
  int64_t layers = intOr(config, "layers_per_block", 2);
  int64_t groups = intOr(config, "norm_num_groups", 32);
  LayerWalk walk(shape.batch, bandRows, double(shape.latentWidth), bands);
  if (boolOr(config, "use_post_quant_conv", true))
    walk.conv(latent, latent, 1);
  int64_t widest = widths.back();
  walk.conv(latent, widest, 3);
  walk.resnet(widest, widest, 3, 1, groups);
  if (boolOr(config, "mid_block_add_attention", true)) {
    walk.norm(widest, groups);
    walk.attention(widest, 1, double(shape.latentRows));
  }
  walk.resnet(widest, widest, 3, 1, groups);
  size_t n = widths.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t out = widths[n - 1 - i], in = i == 0 ? widest : widths[n - i];
    for (int64_t j = 0; j <= layers; ++j)
      walk.resnet(j == 0 ? in : out, out, 3, 1, groups);
    if (i + 1 < n) {
      walk.upsample();
      walk.conv(out, out, 3);
    }
  }
  walk.norm(widths.front(), groups);
  walk.conv(widths.front(), intOr(config, "out_channels", 3), 3);
  walk.work.peakActivationBytes = walk.peak;
  return walk.work;
}

std::optional<VaeDecodeWork> wan(const json &config, const VaeDecodeShape &shape,
                                 double bandRows, int64_t bands, bool qwen) {
  int64_t z = intOr(config, "z_dim", 16);
  int64_t base = intOr(config, "base_dim", 96);
  int64_t decoderBase = qwen ? base : intOr(config, "decoder_base_dim", base);
  std::vector<int64_t> mult = intsOr(config, "dim_mult", {1, 2, 4, 4});
  int64_t resBlocks = intOr(config, "num_res_blocks", 2);
  bool residual = boolOr(config, "is_residual", false);
  int64_t patch = std::max<int64_t>(1, intOr(config, "patch_size", 1));
  std::vector<bool> down;
  if (auto it = config.find("temperal_downsample"); it != config.end() && it->is_array())
    for (const json &v : *it)
      down.push_back(v.is_boolean() && v.get<bool>());
  // Decoding reverses the encoder's temporal downsampling.
  std::vector<bool> temporal(down.rbegin(), down.rend());
  temporal.resize(std::max<size_t>(mult.size(), 1), false);

  LayerWalk walk(shape.batch, bandRows, double(shape.latentWidth), bands);
  // A causal 3x3x3 convolution over F frames reads F + 2 (cache or padding).
  double latentFrames = double(shape.latentFrames);
  walk.frames = latentFrames;
  auto causal = [&](int64_t in, int64_t out) { walk.conv(in, out, 3, 3, walk.frames + 2); };
  auto resnet = [&](int64_t in, int64_t out) {
    walk.norm(in, 0);
    causal(in, out);
    walk.norm(out, 0);
    causal(out, out);
    if (in != out)
      walk.conv(in, out, 1);
  };
  walk.conv(z, z, 1);
  int64_t widest = decoderBase * mult.back();
  causal(z, widest);
  resnet(widest, widest);
  walk.norm(widest, 0);
  walk.attention(widest, latentFrames, double(shape.latentRows));
  resnet(widest, widest);
  std::vector<int64_t> dims{widest};
  for (auto it = mult.rbegin(); it != mult.rend(); ++it)
    dims.push_back(decoderBase * *it);
  for (size_t i = 0; i < mult.size(); ++i) {
    int64_t in = dims[i], out = dims[i + 1];
    if (i > 0 && !residual)
      in /= 2;
    for (int64_t j = 0; j <= resBlocks; ++j)
      resnet(j == 0 ? in : out, out);
    if (i + 1 == mult.size())
      continue;
    if (temporal[i]) {
      // The first chunk's one frame is not doubled and skips time_conv.
      double frames = walk.frames;
      walk.frames = frames - 1;
      if (walk.frames > 0)
        walk.conv(out, 2 * out, 1, 3, walk.frames + 2);
      walk.frames = frames;
      // Every latent frame but the first doubles.
      walk.frames = 1 + (walk.frames - 1) * 2;
      walk.chunkFrames *= 2;
    }
    walk.upsample();
    walk.conv(out, residual ? out : out / 2, 3);
  }
  int64_t narrowest = dims.back();
  walk.norm(narrowest, 0);
  causal(narrowest, 3 * patch * patch);
  walk.work.peakActivationBytes = walk.peak;
  return walk.work;
}

} // namespace

std::optional<VaeDecodeWork> vaeDecodeWork(const std::string &vaeConfig,
                                           const VaeDecodeShape &shape, int64_t bands) {
  json config = json::parse(vaeConfig, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object() || bands < 1 || shape.latentRows < 1)
    return std::nullopt;
  std::string className = config.value("_class_name", std::string());
  // The widest band: equal bands with the remainder on the first ones.
  double bandRows = double((shape.latentRows + bands - 1) / bands);
  std::optional<VaeDecodeWork> work;
  if (className == "AutoencoderKL")
    work = autoencoderKL(config, shape, bandRows, bands);
  else if (className == "AutoencoderKLWan" || className == "AutoencoderKLQwenImage")
    work = wan(config, shape, bandRows, bands, className == "AutoencoderKLQwenImage");
  if (work)
    work->bands = bands;
  return work;
}

double vaeDecodeSeconds(const VaeDecodeWork &work, const HardwareProfile &hw,
                        int64_t ranksOnHost) {
  // The VAE runs in float32.
  double seconds = computeSeconds(work.compute, hw, achievedRates(hw, false, ranksOnHost, ranksOnHost));
  if (work.bands < 2)
    return seconds;
  // Halo rows go to both neighbours at once; each exchange waits its
  // latency. The GroupNorm sums and the K/V gathers are collectives of the
  // band group.
  auto [p2p, p2pEff] = collectiveLink(hw, CollectiveKind::SendRecv, false);
  seconds += double(work.haloExchanges) * p2p.latency +
             work.haloBytes / 2.0 / (p2p.bandwidth * p2pEff);
  if (work.reductions > 0)
    seconds += double(work.reductions) *
               collectiveSeconds(CollectiveKind::AllReduce, work.reduceBytes / double(work.reductions),
                                 work.bands, collectiveLink(hw, CollectiveKind::AllReduce, false).first,
                                 collectiveLink(hw, CollectiveKind::AllReduce, false).second);
  if (work.gathers > 0)
    seconds += double(work.gathers) *
               collectiveSeconds(CollectiveKind::AllGather, work.gatherBytes / double(work.gathers),
                                 work.bands, collectiveLink(hw, CollectiveKind::AllGather, false).first,
                                 collectiveLink(hw, CollectiveKind::AllGather, false).second);
  return seconds;
}

} // namespace ditc
