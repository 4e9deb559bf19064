//===- DecodeOnly.cpp - dit-run --decode-only: latents to pictures --------===//
#include "ditc/Runtime/Driver/DecodeOnly.h"
#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/Driver/MemoryCheck.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Runtime/IO/Mp4.h"
#include "ditc/Runtime/IO/Png.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Runtime/Vae/VaeModel.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"

#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <sys/stat.h>

namespace ditc::runtime {

namespace {

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

/// The VAE folder of `--weights`: SNAPSHOT/vae.
std::string vaeFolder(const std::string &weights) {
  std::string folder = weights + "/vae";
  if (!isDirectory(folder))
    throw BadInput("--weights " + weights + " has no vae/ folder; --decode-only "
                   "reads the VAE from a diffusers pipeline folder (model_index.json, "
                   "vae/config.json and its weights)");
  return folder;
}

/// The frame rate of a family's videos: diffusers' Wan examples export at
/// 16 fps (Wan 2.1 and 2.2 are trained at 16).
int videoFrameRate(const std::string &family) {
  (void)family; // Wan is the only video family whose VAE dit-run decodes.
  return 16;
}

} // namespace

void runDecodeOnly(const DecodeOptions &options) {
  if (options.latents.empty())
    throw BadInput("--decode-only needs --latents L.npy: the latents to decode, "
                   "[B, C, F, H, W] as dit-run --output writes them");
  if (options.weights.empty())
    throw BadInput("--decode-only needs --weights SNAPSHOT: a diffusers pipeline "
                   "folder whose vae/ holds the VAE's config.json and weights");
  bool video = endsWith(options.output, ".mp4");
  if (!video && !endsWith(options.output, ".png"))
    throw BadInput("--output '" + options.output.substr(0, 200) +
                   "' does not end in .png or .mp4; --decode-only writes one PNG "
                   "(pictures) or MP4 (videos) per batch item (OUT.png, OUT-1.png, ...)");
  if (!options.savePixels.empty() && !endsWith(options.savePixels, ".npy"))
    throw BadInput("--save-pixels '" + options.savePixels.substr(0, 200) +
                   "' does not end in .npy");

  Manifest manifest = loadManifest(options.planDir);
  std::string folder = vaeFolder(options.weights);
  nlohmann::json configJson = JsonObject::parseFile(folder + "/config.json");
  VaeModel vae = VaeModel::fromConfig(configJson, folder + "/config.json", manifest.family);

  NpyArray latents = readNpy(options.latents);
  const auto &shape = latents.shape;
  int64_t channels = vae.latentChannels();
  if (shape.size() != 5 || shape[1] != channels || shape[0] < 1 || shape[2] < 1 ||
      shape[3] < 1 || shape[4] < 1 || (!vae.decodesVideo() && shape[2] != 1))
    throw BadInput(options.latents + ": latents of shape " + describeShape(shape) +
                   "; the VAE (" + vae.configPath() + ", " + vae.className() +
                   ") decodes [B, " + std::to_string(channels) +
                   (vae.decodesVideo() ? ", F, H, W] (z_dim " : ", 1, H, W] (latent channels ") +
                   std::to_string(channels) + (vae.decodesVideo() ? ")" : ", one frame)"));
  if (manifest.latentChannels != channels)
    throw BadInput(vae.configPath() + ": " + std::to_string(channels) +
                   " latent channels differ from the plan's " +
                   std::to_string(manifest.latentChannels) + " (" + manifest.path + ")");
  int64_t batch = shape[0], frames = shape[2], height = shape[3], width = shape[4];
  int64_t pixelFrames = vae.pixelFrames(frames);
  if (video && !vae.decodesVideo())
    throw BadInput("--output '" + options.output.substr(0, 200) + "': " + vae.className() +
                   " decodes pictures; write them as .png");
  if (!video && pixelFrames != 1)
    throw BadInput("--output '" + options.output.substr(0, 200) + "': " +
                   std::to_string(frames) + " latent frames decode to " +
                   std::to_string(pixelFrames) + " frames of video; write them as .mp4");

  if (options.memoryCheck) {
    int64_t need = vae.decodePeakBytes(batch, frames, height, width);
    if (std::optional<MemoryLimit> limit = hostMemoryAvailable())
      if (need > limit->bytes)
        throw BadInput("decoding " + options.latents + " " + describeShape(shape) +
                       " needs about " + std::to_string(need >> 20) + " MiB at its peak; " +
                       limit->source + " gives " + std::to_string(limit->bytes >> 20) +
                       " MiB (--skip-memory-check runs it anyway)");
  }

  OutputPolicy policy;
  policy.readsInput("the plan folder", options.planDir);
  policy.readsInput("--latents", options.latents);
  policy.readsInput("--weights", options.weights);
  for (int64_t b = 0; b < batch; ++b)
    policy.claimOutput("--output", batchItemPath(options.output, b));
  if (!options.savePixels.empty())
    policy.claimOutput("--save-pixels", options.savePixels);

  checkpoint::TransformerWeights weights(folder, "vae");
  VaeParameters params = loadVaeParameters(vae.parameters(), weights);

  at::Tensor z = at::from_blob(latents.data.data(), {batch, channels, frames, height, width},
                               at::kFloat);
  DecodeWork work;
  auto started = std::chrono::steady_clock::now();
  at::Tensor pixels = vae.decode(params, z, &work).contiguous(); // [B, 3, F, H, W]
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - started)
                  .count();

  StagedOutputs staged;
  int64_t outH = pixels.size(3), outW = pixels.size(4);
  if (!options.savePixels.empty()) {
    // Pictures as [B, 3, H, W], videos as [B, 3, F, H, W].
    std::vector<int64_t> saved = pixels.sizes().vec();
    if (!vae.decodesVideo())
      saved.erase(saved.begin() + 2);
    staged.stage(options.savePixels, encodeNpy(saved, pixels.data_ptr<float>()));
  }
  const float *data = pixels.data_ptr<float>();
  int64_t item = 3 * pixelFrames * outH * outW;
  int fps = videoFrameRate(manifest.family);
  for (int64_t b = 0; b < batch; ++b)
    staged.stage(batchItemPath(options.output, b),
                 video ? encodePixelsAsMp4(data + b * item, pixelFrames, outH, outW, fps)
                       : encodePixelsAsPng(data + b * item, outH, outW));
  staged.commit();
  // One line for people and benchmarks (bench/vae_decode.py reads it).
  std::string what = video ? std::to_string(batch) + " video" + (batch == 1 ? "" : "s") +
                                 " of " + std::to_string(pixelFrames) + " frames at " +
                                 std::to_string(fps) + " fps"
                           : std::to_string(batch) + " image" + (batch == 1 ? "" : "s");
  std::fprintf(stderr,
               "dit-run: decoded %s with %s to %s of %lldx%lld in %.1f ms "
               "(%.3f GFLOP, %.2f GFLOP/s; convolutions %.3f GFLOP; %d threads)\n",
               describeShape(shape).c_str(), vae.className().c_str(), what.c_str(),
               (long long)outW, (long long)outH, ms, work.flops() / 1e9,
               work.flops() / 1e6 / std::max(ms, 1e-3), work.convolutionFlops / 1e9,
               at::get_num_threads());
}

} // namespace ditc::runtime
