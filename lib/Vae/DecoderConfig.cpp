//===- DecoderConfig.cpp - a VAE's config.json, decode side ---------------===//
#include "ditc/Vae/DecoderConfig.h"

#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"

#include <cmath>

namespace ditc::vae {

namespace {

// Bounds that keep a hostile config from asking for absurd allocations
// before a single tensor is read.
constexpr int64_t kMaxChannels = 1 << 14;
constexpr int64_t kMaxUpBlocks = 8;
constexpr int64_t kMaxLayersPerBlock = 16;
constexpr int64_t kMaxDimMult = 64;
constexpr int64_t kMaxResBlocks = 16;
constexpr int64_t kMaxPatch = 8;

/// The parameter list, built in the order the decode reads it.
class KLParameterList {
public:
  void conv(const std::string &name, int64_t out, int64_t in, int64_t kernel) {
    list.push_back({name + ".weight", {out, in, kernel, kernel}});
    list.push_back({name + ".bias", {out}});
  }
  void norm(const std::string &name, int64_t channels) {
    list.push_back({name + ".weight", {channels}});
    list.push_back({name + ".bias", {channels}});
  }
  void linear(const std::string &name, int64_t out, int64_t in) {
    list.push_back({name + ".weight", {out, in}});
    list.push_back({name + ".bias", {out}});
  }
  void resnet(const std::string &name, int64_t in, int64_t out) {
    norm(name + ".norm1", in);
    conv(name + ".conv1", out, in, 3);
    norm(name + ".norm2", out);
    conv(name + ".conv2", out, out, 3);
    if (in != out)
      conv(name + ".conv_shortcut", out, in, 1);
  }
  std::vector<VaeParameter> list;
};

class WanParameterList {
public:
  void conv3d(const std::string &name, int64_t out, int64_t in,
              std::vector<int64_t> kernel) {
    std::vector<int64_t> shape{out, in};
    shape.insert(shape.end(), kernel.begin(), kernel.end());
    list.push_back({name + ".weight", shape});
    list.push_back({name + ".bias", {out}});
  }
  void conv2d(const std::string &name, int64_t out, int64_t in, int64_t k) {
    list.push_back({name + ".weight", {out, in, k, k}});
    list.push_back({name + ".bias", {out}});
  }
  /// WanRMS_norm: images=False gives gamma [C, 1, 1, 1], images=True
  /// [C, 1, 1]; bias=False, so no bias tensor.
  void rmsNorm(const std::string &name, int64_t channels, bool images) {
    list.push_back({name + ".gamma", images ? std::vector<int64_t>{channels, 1, 1}
                                            : std::vector<int64_t>{channels, 1, 1, 1}});
  }
  void resnet(const std::string &name, int64_t in, int64_t out) {
    rmsNorm(name + ".norm1", in, false);
    conv3d(name + ".conv1", out, in, {3, 3, 3});
    rmsNorm(name + ".norm2", out, false);
    conv3d(name + ".conv2", out, out, {3, 3, 3});
    if (in != out)
      conv3d(name + ".conv_shortcut", out, in, {1, 1, 1});
  }
  std::vector<VaeParameter> list;
};

std::vector<double> readStats(const JsonObject &object, const nlohmann::json &json,
                              const char *field, int64_t count, bool positive) {
  std::string expected = "a list of " + std::to_string(count) + " finite numbers (one per z_dim channel" +
                         std::string(positive ? ", each positive)" : ")");
  if (!json.contains(field))
    object.fail(field, "is missing; expected " + expected);
  const nlohmann::json &list = json.at(field);
  if (!list.is_array() || int64_t(list.size()) != count)
    object.fail(field, "is " + describeJson(list) + "; expected " + expected);
  std::vector<double> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json &value = list[i];
    std::string at = std::string(field) + "[" + std::to_string(i) + "]";
    if (!value.is_number() || !std::isfinite(value.get<double>()) ||
        (positive && !(value.get<double>() > 0)))
      object.failAt(at, &value, "is " + describeJson(value) + "; expected " +
                                    (positive ? "a positive finite number" : "a finite number"));
    out.push_back(value.get<double>());
  }
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// AutoencoderKL
//===----------------------------------------------------------------------===//

std::pair<int64_t, int64_t> AutoencoderKLConfig::upBlockChannels(size_t i) const {
  const auto &widths = blockOutChannels;
  size_t n = widths.size();
  int64_t out = widths[n - 1 - i];
  int64_t in = i == 0 ? widths[n - 1] : widths[n - i];
  return {in, out};
}

int64_t AutoencoderKLConfig::spatialCompression() const {
  return int64_t(1) << (blockOutChannels.size() - 1);
}

AutoencoderKLConfig parseAutoencoderKLConfig(const nlohmann::json &json,
                                             const std::string &path) {
  if (!json.is_object())
    badFile(path, "is not a JSON object");
  JsonObject object(path, &json);
  AutoencoderKLConfig config;
  config.path = path;
  std::string className = object.getString("_class_name");
  if (className != "AutoencoderKL")
    object.fail("_class_name", "is not AutoencoderKL");
  config.latentChannels = object.getInt("latent_channels", 1, kMaxChannels);
  config.outChannels = object.getOptionalInt("out_channels", 1, kMaxChannels).value_or(3);
  config.layersPerBlock = object.getOptionalInt("layers_per_block", 1, kMaxLayersPerBlock).value_or(1);
  config.normGroups = object.getOptionalInt("norm_num_groups", 1, kMaxChannels).value_or(32);
  config.blockOutChannels = object.getIntList("block_out_channels", 1, kMaxChannels);
  if (config.blockOutChannels.empty() ||
      int64_t(config.blockOutChannels.size()) > kMaxUpBlocks)
    object.fail("block_out_channels", "must list 1 to " +
                                          std::to_string(kMaxUpBlocks) + " widths");
  for (size_t i = 0; i < config.blockOutChannels.size(); ++i)
    if (config.blockOutChannels[i] % config.normGroups != 0)
      object.fail("block_out_channels",
                  "holds " + std::to_string(config.blockOutChannels[i]) +
                      " at index " + std::to_string(i) +
                      ", which norm_num_groups " + std::to_string(config.normGroups) +
                      " does not divide (GroupNorm needs whole groups)");
  const nlohmann::json &upTypes = json.contains("up_block_types")
                                      ? json.at("up_block_types")
                                      : nlohmann::json();
  if (!upTypes.is_array() || upTypes.size() != config.blockOutChannels.size())
    object.fail("up_block_types", "must list one block type per entry of "
                                  "block_out_channels (" +
                                      std::to_string(config.blockOutChannels.size()) +
                                      ")");
  for (size_t i = 0; i < upTypes.size(); ++i)
    if (upTypes[i] != "UpDecoderBlock2D")
      object.failAt("up_block_types[" + std::to_string(i) + "]", &upTypes[i],
                    "is not supported; expected UpDecoderBlock2D");
  std::string act = object.getOptionalString("act_fn").value_or("silu");
  if (act != "silu")
    object.fail("act_fn", "is not supported; expected silu");
  config.postQuantConv = object.getOptionalBool("use_post_quant_conv", true);
  config.midBlockAttention = object.getOptionalBool("mid_block_add_attention", true);
  config.scalingFactor = object.getOptionalDouble("scaling_factor", 0.18215, 1e-6, 1e6);
  config.shiftFactor = object.getOptionalDouble("shift_factor", 0.0, -1e6, 1e6);
  return config;
}

std::vector<VaeParameter>
autoencoderKLDecoderParameters(const AutoencoderKLConfig &config) {
  KLParameterList list;
  int64_t latent = config.latentChannels;
  int64_t widest = config.blockOutChannels.back();
  if (config.postQuantConv)
    list.conv("post_quant_conv", latent, latent, 1);
  list.conv("decoder.conv_in", widest, latent, 3);
  list.resnet("decoder.mid_block.resnets.0", widest, widest);
  if (config.midBlockAttention) {
    std::string attn = "decoder.mid_block.attentions.0";
    list.norm(attn + ".group_norm", widest);
    for (const char *proj : {".to_q", ".to_k", ".to_v", ".to_out.0"})
      list.linear(attn + proj, widest, widest);
  }
  list.resnet("decoder.mid_block.resnets.1", widest, widest);
  size_t blocks = config.blockOutChannels.size();
  for (size_t i = 0; i < blocks; ++i) {
    auto [in, out] = config.upBlockChannels(i);
    std::string block = "decoder.up_blocks." + std::to_string(i);
    for (int64_t j = 0; j <= config.layersPerBlock; ++j)
      list.resnet(block + ".resnets." + std::to_string(j), j == 0 ? in : out, out);
    if (i + 1 < blocks)
      list.conv(block + ".upsamplers.0.conv", out, out, 3);
  }
  int64_t narrowest = config.blockOutChannels.front();
  list.norm("decoder.conv_norm_out", narrowest);
  list.conv("decoder.conv_out", config.outChannels, narrowest, 3);
  return list.list;
}

//===----------------------------------------------------------------------===//
// AutoencoderKLWan and AutoencoderKLQwenImage
//===----------------------------------------------------------------------===//

std::vector<WanUpBlock> wanUpBlocks(const WanVaeConfig &config) {
  std::vector<int64_t> dims{config.decoderBaseDim * config.dimMult.back()};
  for (auto it = config.dimMult.rbegin(); it != config.dimMult.rend(); ++it)
    dims.push_back(config.decoderBaseDim * *it);
  std::vector<WanUpBlock> blocks;
  size_t count = config.dimMult.size();
  for (size_t i = 0; i < count; ++i) {
    WanUpBlock block;
    block.in = dims[i];
    block.out = dims[i + 1];
    // Wan 2.1's blocks (and Qwen-Image's) take the previous resample's
    // halved channels; Wan 2.2's residual blocks keep them.
    if (i > 0 && !config.residual)
      block.in /= 2;
    block.upsamples = i + 1 != count;
    block.temporal = block.upsamples && config.temporalUpsample[i];
    block.resampleOut = config.residual ? block.out : block.out / 2;
    blocks.push_back(block);
  }
  return blocks;
}

std::string wanUpsamplerName(const WanVaeConfig &config, size_t block) {
  std::string prefix = "decoder.up_blocks." + std::to_string(block);
  return config.residual ? prefix + ".upsampler" : prefix + ".upsamplers.0";
}

int64_t WanVaeConfig::pixelChannels() const { return convOutChannels / (patchSize * patchSize); }

int64_t WanVaeConfig::spatialCompression() const {
  return (int64_t(1) << (dimMult.size() - 1)) * patchSize;
}

int64_t WanVaeConfig::pixelFrames(int64_t latentFrames) const {
  int64_t doublings = 0;
  for (size_t i = 0; i + 1 < dimMult.size(); ++i)
    doublings += temporalUpsample[i] ? 1 : 0;
  return 1 + (latentFrames - 1) * (int64_t(1) << doublings);
}

WanVaeConfig parseWanVaeConfig(const nlohmann::json &json, const std::string &path) {
  if (!json.is_object())
    badFile(path, "is not a JSON object");
  JsonObject object(path, &json);
  WanVaeConfig config;
  config.path = path;
  config.className = object.getString("_class_name");
  bool qwen = config.className == "AutoencoderKLQwenImage";
  if (!qwen && config.className != "AutoencoderKLWan")
    object.fail("_class_name", "is not AutoencoderKLWan or AutoencoderKLQwenImage");
  config.zDim = object.getOptionalInt("z_dim", 1, kMaxChannels).value_or(16);
  int64_t baseDim = object.getOptionalInt("base_dim", 1, kMaxChannels).value_or(96);
  config.decoderBaseDim =
      qwen ? baseDim
           : object.getOptionalInt("decoder_base_dim", 1, kMaxChannels).value_or(baseDim);
  config.dimMult = json.contains("dim_mult")
                       ? object.getIntList("dim_mult", 1, kMaxDimMult)
                       : std::vector<int64_t>{1, 2, 4, 4};
  if (config.dimMult.size() < 1 || int64_t(config.dimMult.size()) > kMaxUpBlocks)
    object.fail("dim_mult", "must list 1 to " + std::to_string(kMaxUpBlocks) + " multipliers");
  for (int64_t mult : config.dimMult)
    if (config.decoderBaseDim * mult > kMaxChannels)
      object.fail("dim_mult", "gives " + std::to_string(config.decoderBaseDim * mult) +
                                  " channels, above " + std::to_string(kMaxChannels));
  config.numResBlocks = object.getOptionalInt("num_res_blocks", 1, kMaxResBlocks).value_or(2);
  size_t ups = config.dimMult.size() - 1;
  std::vector<bool> down{false, true, true};
  if (json.contains("temperal_downsample")) {
    const nlohmann::json &list = json.at("temperal_downsample");
    if (!list.is_array() || list.size() != ups)
      object.fail("temperal_downsample",
                  "is " + describeJson(list) + "; expected " + std::to_string(ups) +
                      " booleans, one per up block that upsamples (dim_mult has " +
                      std::to_string(config.dimMult.size()) + " entries)");
    down.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_boolean())
        object.failAt("temperal_downsample[" + std::to_string(i) + "]", &list[i],
                      "is " + describeJson(list[i]) + "; expected true or false");
      down.push_back(list[i].get<bool>());
    }
  } else if (down.size() != ups) {
    object.fail("temperal_downsample", "is missing and its default [false, true, true] "
                                       "does not fit dim_mult's " +
                                           std::to_string(config.dimMult.size()) + " entries");
  }
  config.temporalUpsample.assign(down.rbegin(), down.rend());
  config.residual = !qwen && object.getOptionalBool("is_residual", false);
  config.convOutChannels =
      object.getOptionalInt(qwen ? "input_channels" : "out_channels", 1, kMaxChannels).value_or(3);
  if (!qwen && json.contains("patch_size") && !json.at("patch_size").is_null())
    config.patchSize = object.getInt("patch_size", 1, kMaxPatch);
  if (config.convOutChannels % (config.patchSize * config.patchSize) != 0)
    object.fail("out_channels", "is " + std::to_string(config.convOutChannels) +
                                    ", which patch_size^2 = " +
                                    std::to_string(config.patchSize * config.patchSize) +
                                    " does not divide (unpatchify needs whole pixels)");
  // The resample halves the channels of Wan 2.1's blocks: they must be even.
  for (const WanUpBlock &block : wanUpBlocks(config))
    if (block.upsamples && !config.residual && block.out % 2 != 0)
      object.fail("base_dim", "gives an upsampling block " + std::to_string(block.out) +
                                  " channels, which its resample cannot halve");
  if (config.residual)
    for (const WanUpBlock &block : wanUpBlocks(config)) {
      int64_t factor = (block.temporal ? 2 : 1) * 4;
      if (block.upsamples && (block.out * factor) % block.in != 0)
        object.fail("dim_mult", "gives a residual block " + std::to_string(block.in) + " -> " +
                                    std::to_string(block.out) +
                                    " channels, which DupUp3D cannot spread (out x " +
                                    std::to_string(factor) + " must be a multiple of in)");
    }
  config.latentsMean = readStats(object, json, "latents_mean", config.zDim, false);
  config.latentsStd = readStats(object, json, "latents_std", config.zDim, true);
  return config;
}

std::vector<VaeParameter> wanVaeDecoderParameters(const WanVaeConfig &config) {
  WanParameterList list;
  std::vector<WanUpBlock> blocks = wanUpBlocks(config);
  int64_t widest = blocks.front().in;
  list.conv3d("post_quant_conv", config.zDim, config.zDim, {1, 1, 1});
  list.conv3d("decoder.conv_in", widest, config.zDim, {3, 3, 3});
  list.resnet("decoder.mid_block.resnets.0", widest, widest);
  list.rmsNorm("decoder.mid_block.attentions.0.norm", widest, true);
  list.conv2d("decoder.mid_block.attentions.0.to_qkv", 3 * widest, widest, 1);
  list.conv2d("decoder.mid_block.attentions.0.proj", widest, widest, 1);
  list.resnet("decoder.mid_block.resnets.1", widest, widest);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const WanUpBlock &block = blocks[i];
    std::string name = "decoder.up_blocks." + std::to_string(i);
    for (int64_t j = 0; j <= config.numResBlocks; ++j)
      list.resnet(name + ".resnets." + std::to_string(j), j == 0 ? block.in : block.out,
                  block.out);
    if (block.upsamples) {
      std::string up = wanUpsamplerName(config, i);
      list.conv2d(up + ".resample.1", block.resampleOut, block.out, 3);
      if (block.temporal)
        list.conv3d(up + ".time_conv", 2 * block.out, block.out, {3, 1, 1});
    }
  }
  int64_t narrowest = blocks.back().out;
  list.rmsNorm("decoder.norm_out", narrowest, false);
  list.conv3d("decoder.conv_out", config.convOutChannels, narrowest, {3, 3, 3});
  return list.list;
}

} // namespace ditc::vae
