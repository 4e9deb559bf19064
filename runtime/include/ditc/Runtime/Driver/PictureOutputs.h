//===- PictureOutputs.h - latents to PNGs and MP4s with the plan's VAE -*- C++ -*-===//
//
// The VAE stage of a run, shared by a denoising run whose --output ends in
// .png or .mp4 and by dit-run --decode-only. The VAE is the plan's
// (manifest model.vae_config, recorded by ditc compile from the snapshot);
// a plan without one takes --weights' vae/config.json. Its parameters come
// from --weights' vae/ folder, or are drawn from the seed like the
// transformer's when --weights is not given, so a seeded run still ends in
// a picture. Everything is checked before any work: the class, the config,
// the output's format against what the VAE gives, and every tensor.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DRIVER_PICTUREOUTPUTS_H
#define DITC_RUNTIME_DRIVER_PICTUREOUTPUTS_H

#include "ditc/Runtime/Driver/VaeDecodeGroup.h"
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Runtime/Vae/VaeModel.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

/// True when `output` names pictures or videos (.png, .mp4), not latents.
bool isPictureOutput(const std::string &output);

class PictureOutputs {
public:
  /// Picks the VAE for plan `m`: model.vae_config, else `weights`'
  /// vae/config.json; when both exist they must agree. `weights` may be
  /// empty (seeded parameters). Throws BadInput.
  PictureOutputs(const Manifest &m, const std::string &weights);

  const VaeModel &vae() const { return model; }
  /// Refuses `output` (for `flag`) unless its format fits what the VAE gives
  /// for `latentFrames` latent frames: .png for one frame of pixels, .mp4
  /// for a video VAE.
  void checkOutput(const std::string &flag, const std::string &output,
                   int64_t latentFrames) const;
  /// The files `output`'s batch items go to: OUT.png, OUT-1.png, ...
  std::vector<std::string> outputPaths(const std::string &output, int64_t batch) const;
  /// Reads the parameters from --weights' vae/ folder (once), or draws them
  /// from `seed` when there is no --weights (again when the seed changes).
  void loadParameters(uint64_t seed);

  /// Decodes `latents` [B, C, F, H, W] and stages one file per batch item
  /// (and the float pixels when `savePixels` is not empty). Returns the
  /// line dit-run prints about it. With `group`, every decoding rank of the
  /// replica calls it: the leader with the latents, the others with an
  /// undefined tensor; they decode a band each, and only the leader stages
  /// (the others return an empty line). `shape` is the latents' shape.
  std::string stage(StagedOutputs &staged, const at::Tensor &latents,
                    const std::vector<int64_t> &shape, const std::string &output,
                    const std::string &savePixels, VaeDecodeGroup *group = nullptr) const;

private:
  std::string family, weights, vaeFolder;
  VaeModel model;
  VaeParameters params;
  std::optional<uint64_t> drawnFrom;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DRIVER_PICTUREOUTPUTS_H
