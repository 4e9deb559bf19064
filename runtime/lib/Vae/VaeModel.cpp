//===- VaeModel.cpp - a snapshot's VAE, whichever class -------------------===//
#include "ditc/Runtime/Vae/VaeModel.h"
#include "ditc/Support/BadInput.h"

#include <ATen/core/grad_mode.h>

namespace ditc::runtime {

const char *const kSupportedVaeClasses =
    "AutoencoderKL (FLUX.1, SD3/3.5), AutoencoderKLWan (Wan 2.1, Wan 2.2) and "
    "AutoencoderKLQwenImage (Qwen-Image)";

VaeModel VaeModel::fromConfig(const nlohmann::json &json, const std::string &path,
                              const std::string &family) {
  std::string className = json.is_object() && json.contains("_class_name") &&
                                  json["_class_name"].is_string()
                              ? json["_class_name"].get<std::string>()
                              : "";
  VaeModel model;
  model.name = className;
  if (className == "AutoencoderKL")
    model.config = parseAutoencoderKLConfig(json, path);
  else if (className == "AutoencoderKLWan" || className == "AutoencoderKLQwenImage")
    model.config = parseWanVaeConfig(json, path);
  else
    throw BadInput(path + ": the VAE class '" + className.substr(0, 100) +
                   "' (model family " + family + ") is not supported yet; dit-run decodes " +
                   kSupportedVaeClasses +
                   ". Write latents (--output OUT.npy) and decode them elsewhere");
  if (model.pixelChannels() != 3)
    throw BadInput(path + ": the VAE decodes " + std::to_string(model.pixelChannels()) +
                   " channels per pixel (out_channels over patch_size^2); pictures "
                   "need 3 (RGB)");
  return model;
}

const std::string &VaeModel::configPath() const {
  return std::visit([](const auto &c) -> const std::string & { return c.path; }, config);
}

int64_t VaeModel::latentChannels() const {
  if (auto *kl = std::get_if<AutoencoderKLConfig>(&config))
    return kl->latentChannels;
  return std::get<WanVaeConfig>(config).zDim;
}

int64_t VaeModel::pixelChannels() const {
  if (auto *kl = std::get_if<AutoencoderKLConfig>(&config))
    return kl->outChannels;
  return std::get<WanVaeConfig>(config).pixelChannels();
}

bool VaeModel::decodesVideo() const { return name == "AutoencoderKLWan"; }

int64_t VaeModel::pixelFrames(int64_t latentFrames) const {
  if (!decodesVideo())
    return 1;
  return std::get<WanVaeConfig>(config).pixelFrames(latentFrames);
}

int64_t VaeModel::spatialCompression() const {
  return std::visit([](const auto &c) { return c.spatialCompression(); }, config);
}

std::vector<VaeParameter> VaeModel::parameters() const {
  if (auto *kl = std::get_if<AutoencoderKLConfig>(&config))
    return autoencoderKLDecoderParameters(*kl);
  return wanVaeDecoderParameters(std::get<WanVaeConfig>(config));
}

int64_t VaeModel::decodePeakBytes(int64_t batch, int64_t frames, int64_t height,
                                  int64_t width) const {
  if (auto *kl = std::get_if<AutoencoderKLConfig>(&config)) {
    // The widest activation at full resolution (the last up block's), held
    // as input, output and one temporary per resnet.
    int64_t s = kl->spatialCompression();
    int64_t widest = 0;
    for (int64_t c : kl->blockOutChannels)
      widest = std::max(widest, c);
    long double pixels = (long double)batch * height * s * width * s;
    long double bytes = pixels * (long double)widest * 4.0L * 4.0L;
    return bytes > 9e18L ? INT64_MAX : int64_t(bytes);
  }
  return wanVaeDecodePeakBytes(std::get<WanVaeConfig>(config), batch, frames, height,
                               width);
}

at::Tensor VaeModel::decode(const VaeParameters &params, const at::Tensor &latents,
                            DecodeWork *work, Bands *bands) const {
  if (auto *kl = std::get_if<AutoencoderKLConfig>(&config)) {
    at::Tensor image = latents.select(2, 0);
    return decodeAutoencoderKL(*kl, params, denormalizeLatents(*kl, image), work, bands)
        .unsqueeze(2);
  }
  const WanVaeConfig &wan = std::get<WanVaeConfig>(config);
  at::Tensor pixels =
      decodeWanVae(wan, params, denormalizeWanLatents(wan, latents), work, bands);
  // Qwen-Image's pipeline keeps frame 0 of the one-frame video.
  return decodesVideo() ? pixels : pixels.narrow(2, 0, 1).contiguous();
}

std::vector<BandExchange> VaeModel::traceBandExchanges(int64_t bands) const {
  at::NoGradGuard noGrad;
  // The exchanges depend on the decoder's structure only: zeros serve as
  // parameters (calloc'd pages, never written) and one row, one column and
  // one frame as latents.
  VaeParameters zeros;
  for (const VaeParameter &p : parameters())
    zeros.emplace(p.name, at::zeros(p.shape, at::kFloat));
  TracingBands tracer(std::vector<int64_t>(size_t(bands), 1));
  decode(zeros, at::zeros({1, latentChannels(), 1, 1, 1}, at::kFloat), nullptr, &tracer);
  return tracer.issued();
}

} // namespace ditc::runtime

