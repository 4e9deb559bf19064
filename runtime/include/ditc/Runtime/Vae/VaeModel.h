//===- VaeModel.h - a snapshot's VAE, whichever class -----------*- C++ -*-===//
//
// What the driver needs of a VAE without knowing its class: the latents it
// takes, the pixels it gives, its parameters, its memory peak, and the
// pipeline's own steps around the decode (denormalisation, Qwen-Image's
// single frame). The class comes from vae/config.json's _class_name; a class
// dit-run cannot decode is refused by name, never skipped.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_VAE_VAEMODEL_H
#define DITC_RUNTIME_VAE_VAEMODEL_H

#include "ditc/Runtime/Vae/AutoencoderKL.h"
#include "ditc/Runtime/Vae/AutoencoderKLWan.h"
#include "ditc/Runtime/Vae/Bands.h"
#include "ditc/Runtime/Vae/Parameters.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace ditc::runtime {

/// The VAE classes dit-run decodes, for messages.
extern const char *const kSupportedVaeClasses;

class VaeModel {
public:
  /// Reads `config` (parsed from `path`, a vae/config.json). `family` is
  /// the plan's model family, named when the class is not supported.
  static VaeModel fromConfig(const nlohmann::json &config, const std::string &path,
                             const std::string &family);

  const std::string &className() const { return name; }
  const std::string &configPath() const;
  int64_t latentChannels() const;
  /// Channels of a decoded pixel (3 for RGB).
  int64_t pixelChannels() const;
  /// True for a video VAE (Wan): any number of latent frames. An image VAE
  /// (AutoencoderKL, Qwen-Image's) decodes exactly one.
  bool decodesVideo() const;
  int64_t pixelFrames(int64_t latentFrames) const;
  int64_t spatialCompression() const;
  std::vector<VaeParameter> parameters() const;
  int64_t decodePeakBytes(int64_t batch, int64_t frames, int64_t height,
                          int64_t width) const;

  /// The pipeline's decode of `latents` [B, C, F, H, W] as dit-run writes
  /// them: denormalisation, the VAE's decode, and for image VAEs the one
  /// frame. Pixels are float32, [B, 3, F', H', W'] (F' = 1 for images).
  /// With `bands`, `latents` is this rank's band of latent rows and the
  /// pixels are its band of pixel rows (Bands.h).
  at::Tensor decode(const VaeParameters &params, const at::Tensor &latents,
                    DecodeWork *work = nullptr, Bands *bands = nullptr) const;
  /// The exchanges one band issues in one decode pass (one latent frame),
  /// traced on a stand-in: zero parameters, one latent row and column per
  /// band, `bands` bands, no communication. What the plan's band program
  /// must list.
  std::vector<BandExchange> traceBandExchanges(int64_t bands) const;

private:
  std::string name;
  std::variant<AutoencoderKLConfig, WanVaeConfig> config;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_VAEMODEL_H
