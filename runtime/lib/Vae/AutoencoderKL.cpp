//===- AutoencoderKL.cpp - diffusers' AutoencoderKL decoder ---------------===//
#include "ditc/Runtime/Vae/AutoencoderKL.h"
#include "ditc/Runtime/Vae/Attention.h"
#include "ditc/Runtime/Vae/Bands.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"

#include <cmath>

namespace ditc::runtime {

namespace {

// diffusers' Decoder passes eps=1e-6 to every GroupNorm it builds (the
// resnets', the attention's and conv_norm_out), whatever the config says.
constexpr double kGroupNormEps = 1e-6;
// Bounds that keep a hostile config from asking for absurd allocations
// before a single tensor is read.
constexpr int64_t kMaxChannels = 1 << 14;
constexpr int64_t kMaxUpBlocks = 8;
constexpr int64_t kMaxLayersPerBlock = 16;

/// The parameter list, built in the order the decode reads it.
class ParameterList {
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

/// Channels into and out of up block `i`, as diffusers' Decoder builds them:
/// block i turns reversed(block_out_channels)[i - 1] (the mid block's width
/// for i = 0) into reversed(block_out_channels)[i].
std::pair<int64_t, int64_t> upBlockChannels(const AutoencoderKLConfig &config,
                                            size_t i) {
  const auto &widths = config.blockOutChannels;
  size_t n = widths.size();
  int64_t out = widths[n - 1 - i];
  int64_t in = i == 0 ? widths[n - 1] : widths[n - i];
  return {in, out};
}

class Decoder {
public:
  Decoder(const AutoencoderKLConfig &config, const VaeParameters &params,
          DecodeWork &work, Bands *bands)
      : config(config), params(params), work(work),
        bands(bands && bands->count() > 1 ? bands : nullptr) {}

  at::Tensor run(at::Tensor x) const {
    if (config.postQuantConv)
      x = conv("post_quant_conv", x, 0);
    x = conv("decoder.conv_in", x, 1);
    x = resnet("decoder.mid_block.resnets.0", x);
    if (config.midBlockAttention)
      x = attention("decoder.mid_block.attentions.0", x);
    x = resnet("decoder.mid_block.resnets.1", x);
    size_t blocks = config.blockOutChannels.size();
    for (size_t i = 0; i < blocks; ++i) {
      std::string block = "decoder.up_blocks." + std::to_string(i);
      for (int64_t j = 0; j <= config.layersPerBlock; ++j)
        x = resnet(block + ".resnets." + std::to_string(j), x);
      if (i + 1 < blocks) {
        x = at::upsample_nearest2d(x, {x.size(2) * 2, x.size(3) * 2});
        x = conv(block + ".upsamplers.0.conv", x, 1);
      }
    }
    x = silu(groupNorm("decoder.conv_norm_out", x));
    return conv("decoder.conv_out", x, 1);
  }

private:
  const at::Tensor &param(const std::string &name) const {
    auto found = params.find(name);
    if (found == params.end())
      throw std::logic_error("VAE parameter " + name + " was not loaded");
    return found->second;
  }
  at::Tensor conv(const std::string &name, const at::Tensor &x,
                  int64_t padding) const {
    const at::Tensor &weight = param(name + ".weight");
    // A band reads its neighbours' edge rows where the image pads.
    at::Tensor out = bands && padding > 0
                         ? at::conv2d(bands->withHalo(x, padding), weight,
                                      param(name + ".bias"), at::IntArrayRef{1, 1},
                                      at::IntArrayRef{0, padding})
                         : at::conv2d(x, weight, param(name + ".bias"), {1, 1},
                                      {padding, padding});
    work.convolutionFlops += 2.0 * double(out.numel()) * double(weight[0].numel());
    return out;
  }
  /// SiLU in place: its input is a norm's fresh output, so no new
  /// full-resolution buffer.
  static at::Tensor silu(at::Tensor x) {
    at::silu_(x);
    return x;
  }
  at::Tensor groupNorm(const std::string &name, const at::Tensor &x) const {
    return bandGroupNorm(bands, x, config.normGroups, param(name + ".weight"),
                         param(name + ".bias"), kGroupNormEps);
  }
  at::Tensor resnet(const std::string &name, const at::Tensor &x) const {
    at::Tensor h = conv(name + ".conv1", silu(groupNorm(name + ".norm1", x)), 1);
    h = conv(name + ".conv2", silu(groupNorm(name + ".norm2", h)), 1);
    at::Tensor shortcut = params.count(name + ".conv_shortcut.weight")
                              ? conv(name + ".conv_shortcut", x, 0)
                              : x;
    return shortcut + h;
  }
  /// One head as wide as the channels (diffusers' attention_head_dim is
  /// block_out_channels[-1]), over every pixel of the latent image.
  at::Tensor attention(const std::string &name, const at::Tensor &x) const {
    int64_t batch = x.size(0), channels = x.size(1);
    at::Tensor h = groupNorm(name + ".group_norm", x)
                       .reshape({batch, channels, -1})
                       .transpose(1, 2); // [B, HW, C]
    at::Tensor q = at::linear(h, param(name + ".to_q.weight"), param(name + ".to_q.bias"));
    at::Tensor k = at::linear(h, param(name + ".to_k.weight"), param(name + ".to_k.bias"));
    at::Tensor v = at::linear(h, param(name + ".to_v.weight"), param(name + ".to_v.bias"));
    int64_t pixels = q.size(1);
    // Four C x C projections; pixelAttention counts the score products.
    work.attentionFlops +=
        2.0 * double(batch) * double(pixels) * double(channels) * 4.0 * double(channels);
    if (bands) {
      // The band's queries attend to every pixel: K and V of all bands.
      std::vector<int64_t> sizes;
      for (int64_t rows : bands->latentRows())
        sizes.push_back(rows * x.size(3));
      k = bands->allGather(k, 1, sizes);
      v = bands->allGather(v, 1, sizes);
    }
    at::Tensor attended = pixelAttention(q, k, v, work);
    at::Tensor out = at::linear(attended, param(name + ".to_out.0.weight"),
                                param(name + ".to_out.0.bias"));
    return out.transpose(1, 2).reshape(x.sizes()) + x;
  }

  const AutoencoderKLConfig &config;
  const VaeParameters &params;
  DecodeWork &work;
  Bands *bands; // nullptr: the whole image on this rank
};

} // namespace

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
  ParameterList list;
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
    auto [in, out] = upBlockChannels(config, i);
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

at::Tensor denormalizeLatents(const AutoencoderKLConfig &config,
                              const at::Tensor &latents) {
  return latents.to(at::kFloat) / config.scalingFactor + config.shiftFactor;
}

at::Tensor decodeAutoencoderKL(const AutoencoderKLConfig &config,
                               const VaeParameters &params,
                               const at::Tensor &latents, DecodeWork *work,
                               Bands *bands) {
  at::NoGradGuard noGrad;
  DecodeWork counted;
  at::Tensor pixels = Decoder(config, params, counted, bands)
                          .run(latents.to(at::kFloat).contiguous());
  if (work)
    *work = counted;
  return pixels;
}

} // namespace ditc::runtime
