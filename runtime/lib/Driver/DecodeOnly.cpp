//===- DecodeOnly.cpp - dit-run --decode-only: latents to pictures --------===//
#include "ditc/Runtime/Driver/DecodeOnly.h"
#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/Driver/MemoryCheck.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Runtime/IO/Png.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Runtime/Vae/AutoencoderKL.h"
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

/// Peak bytes of the decode: the widest activation at full resolution (the
/// last up block's), held as input, output and one temporary per resnet.
int64_t decodePeakBytes(const AutoencoderKLConfig &config, int64_t batch,
                        int64_t height, int64_t width) {
  int64_t s = config.spatialCompression();
  int64_t widest = 0;
  for (int64_t c : config.blockOutChannels)
    widest = std::max(widest, c);
  long double pixels = (long double)batch * height * s * width * s;
  long double bytes = pixels * (long double)widest * 4.0L * 4.0L;
  return bytes > 9e18L ? INT64_MAX : int64_t(bytes);
}

} // namespace

void runDecodeOnly(const DecodeOptions &options) {
  if (options.latents.empty())
    throw BadInput("--decode-only needs --latents L.npy: the latents to decode, "
                   "[B, C, 1, H, W] as dit-run --output writes them");
  if (options.weights.empty())
    throw BadInput("--decode-only needs --weights SNAPSHOT: a diffusers pipeline "
                   "folder whose vae/ holds the VAE's config.json and weights");
  if (!endsWith(options.output, ".png"))
    throw BadInput("--output '" + options.output.substr(0, 200) +
                   "' does not end in .png; --decode-only writes one PNG per "
                   "batch item (OUT.png, OUT-1.png, ...)");
  if (!options.savePixels.empty() && !endsWith(options.savePixels, ".npy"))
    throw BadInput("--save-pixels '" + options.savePixels.substr(0, 200) +
                   "' does not end in .npy");

  Manifest manifest = loadManifest(options.planDir);
  std::string folder = vaeFolder(options.weights);
  nlohmann::json configJson = JsonObject::parseFile(folder + "/config.json");
  std::string className = configJson.is_object() && configJson.contains("_class_name") &&
                                  configJson["_class_name"].is_string()
                              ? configJson["_class_name"].get<std::string>()
                              : "";
  if (className != "AutoencoderKL")
    throw BadInput(folder + "/config.json: the VAE class '" + className.substr(0, 100) +
                   "' (model family " + manifest.family +
                   ") is not supported yet; dit-run decodes AutoencoderKL (FLUX.1, "
                   "SD3/3.5). Write latents (--output OUT.npy) and decode them elsewhere");
  AutoencoderKLConfig config =
      parseAutoencoderKLConfig(configJson, folder + "/config.json");
  if (config.outChannels != 3)
    throw BadInput(config.path + ": field 'out_channels' is " +
                   std::to_string(config.outChannels) +
                   "; a PNG needs 3 (RGB) channels");

  NpyArray latents = readNpy(options.latents);
  const auto &shape = latents.shape;
  if (shape.size() != 5 || shape[1] != config.latentChannels || shape[2] != 1 ||
      shape[0] < 1 || shape[3] < 1 || shape[4] < 1)
    throw BadInput(options.latents + ": latents of shape " + describeShape(shape) +
                   "; the VAE (" + config.path + ") decodes [B, " +
                   std::to_string(config.latentChannels) +
                   ", 1, H, W] (latent_channels " + std::to_string(config.latentChannels) +
                   ", one frame)");
  if (manifest.latentChannels != config.latentChannels)
    throw BadInput(config.path + ": latent_channels " +
                   std::to_string(config.latentChannels) + " differs from the plan's " +
                   std::to_string(manifest.latentChannels) + " (" + manifest.path + ")");
  int64_t batch = shape[0], height = shape[3], width = shape[4];

  if (options.memoryCheck) {
    int64_t need = decodePeakBytes(config, batch, height, width);
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
    policy.claimOutput("--output", batchImagePath(options.output, b));
  if (!options.savePixels.empty())
    policy.claimOutput("--save-pixels", options.savePixels);

  checkpoint::TransformerWeights weights(folder, "vae");
  VaeParameters params =
      loadVaeParameters(autoencoderKLDecoderParameters(config), weights);

  at::Tensor z = at::from_blob(latents.data.data(), {batch, shape[1], height, width},
                               at::kFloat);
  DecodeWork work;
  auto started = std::chrono::steady_clock::now();
  at::Tensor pixels =
      decodeAutoencoderKL(config, params, denormalizeLatents(config, z), &work)
          .contiguous();
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - started)
                  .count();

  StagedOutputs staged;
  int64_t outH = pixels.size(2), outW = pixels.size(3);
  if (!options.savePixels.empty())
    staged.stage(options.savePixels,
                 encodeNpy(pixels.sizes().vec(), pixels.data_ptr<float>()));
  const float *data = pixels.data_ptr<float>();
  for (int64_t b = 0; b < batch; ++b)
    staged.stage(batchImagePath(options.output, b),
                 encodePixelsAsPng(data + b * 3 * outH * outW, outH, outW));
  staged.commit();
  // One line for people and benchmarks (bench/vae_decode.py reads it).
  std::fprintf(stderr,
               "dit-run: decoded %s with %s to %lld image%s of %lldx%lld in %.1f ms "
               "(%.3f GFLOP, %.2f GFLOP/s; convolutions %.3f GFLOP; %d threads)\n",
               describeShape(shape).c_str(), "AutoencoderKL", (long long)batch,
               batch == 1 ? "" : "s", (long long)outW, (long long)outH, ms,
               work.flops() / 1e9, work.flops() / 1e6 / std::max(ms, 1e-3),
               work.convolutionFlops / 1e9, at::get_num_threads());
}

} // namespace ditc::runtime
