//===- DecodeOnly.cpp - dit-run --decode-only: latents to pictures --------===//
#include "ditc/Runtime/Driver/DecodeOnly.h"
#include "ditc/Runtime/Driver/MemoryCheck.h"
#include "ditc/Runtime/Driver/PictureOutputs.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Strings.h"

#include <cstdio>

namespace ditc::runtime {

void runDecodeOnly(const DecodeOptions &options) {
  if (options.latents.empty())
    throw BadInput("--decode-only needs --latents L.npy: the latents to decode, "
                   "[B, C, F, H, W] as dit-run --output writes them");
  if (!isPictureOutput(options.output))
    throw BadInput("--output '" + options.output.substr(0, 200) +
                   "' does not end in .png or .mp4; --decode-only writes one PNG "
                   "(pictures) or MP4 (videos) per batch item (OUT.png, OUT-1.png, ...)");
  if (!options.savePixels.empty() && !endsWith(options.savePixels, ".npy"))
    throw BadInput("--save-pixels '" + options.savePixels.substr(0, 200) +
                   "' does not end in .npy");

  Manifest manifest = loadManifest(options.planDir);
  PictureOutputs pictures(manifest, options.weights);
  const VaeModel &vae = pictures.vae();

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
  int64_t batch = shape[0], frames = shape[2], height = shape[3], width = shape[4];
  pictures.checkOutput("--output", options.output, frames);

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
  for (const std::string &path : pictures.outputPaths(options.output, batch))
    policy.claimOutput("--output", path);
  if (!options.savePixels.empty())
    policy.claimOutput("--save-pixels", options.savePixels);

  // Without --weights, the VAE's parameters are drawn from seed 0, as a
  // denoising run without --weights draws the transformer's.
  pictures.loadParameters(0);
  at::Tensor z = at::from_blob(latents.data.data(), {batch, channels, frames, height, width},
                               at::kFloat);
  StagedOutputs staged;
  std::string line = pictures.stage(staged, z, z.sizes().vec(), options.output,
                                   options.savePixels);
  staged.commit();
  // One line for people and benchmarks (bench/vae_decode.py reads it).
  std::fprintf(stderr, "dit-run: %s\n", line.c_str());
}

} // namespace ditc::runtime
