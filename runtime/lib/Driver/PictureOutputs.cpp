//===- PictureOutputs.cpp - latents to PNGs and MP4s with the plan's VAE --===//
#include "ditc/Runtime/Driver/PictureOutputs.h"
#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/IO/Mp4.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Runtime/IO/Png.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Strings.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace ditc::runtime {

namespace {

/// The frame rate of a family's videos: diffusers' Wan examples export at
/// 16 fps (Wan 2.1 and 2.2 are trained at 16), and Wan is the only video
/// family whose VAE dit-run decodes.
int videoFrameRate(const std::string &family) {
  (void)family;
  return 16;
}

} // namespace

bool isPictureOutput(const std::string &output) {
  return endsWith(output, ".png") || endsWith(output, ".mp4");
}

PictureOutputs::PictureOutputs(const Manifest &m, const std::string &weightsDir)
    : family(m.family), weights(weightsDir) {
  std::optional<nlohmann::json> snapshotConfig;
  std::string snapshotPath;
  if (!weights.empty()) {
    vaeFolder = weights + "/vae";
    if (!isDirectoryPath(vaeFolder))
      throw BadInput("--weights " + weights.substr(0, 200) +
                     " has no vae/ folder; pictures and videos are decoded with "
                     "the VAE of a diffusers pipeline folder (vae/config.json "
                     "and its weights)");
    snapshotPath = vaeFolder + "/config.json";
    snapshotConfig = JsonObject::parseFile(snapshotPath);
  }
  if (m.vaeConfig.is_object()) {
    std::string where = m.path + ": model.vae_config";
    if (snapshotConfig) {
      // Compared as the plan records them (ditc compile's LoadModel).
      nlohmann::json plan = withoutDiffusersMetadata(m.vaeConfig, true),
                     given = withoutDiffusersMetadata(*snapshotConfig, true);
      for (const auto &[key, value] : given.items())
        if (!plan.contains(key) || plan.at(key) != value)
          throw BadInput(snapshotPath + ": field '" + key + "' is " + describeJson(value) +
                         " but the plan's VAE (" + where + ") has " +
                         (plan.contains(key) ? describeJson(plan.at(key)) : "no such field") +
                         "; the plan was compiled for another VAE");
      for (const auto &[key, value] : plan.items())
        if (!given.contains(key))
          throw BadInput(snapshotPath + ": field '" + key + "' is missing but the plan's VAE (" +
                         where + ") has " + describeJson(value) +
                         "; the plan was compiled for another VAE");
    }
    model = VaeModel::fromConfig(m.vaeConfig, where, family);
  } else if (snapshotConfig) {
    model = VaeModel::fromConfig(*snapshotConfig, snapshotPath, family);
  } else {
    throw BadInput(m.path + ": the plan records no VAE (model.vae_config: it was "
                   "compiled from a bare transformer config.json) and no --weights "
                   "gives one; compile from a pipeline folder with vae/, or pass "
                   "--weights SNAPSHOT");
  }
  // The plan's band program against this decoder's, before any work: a
  // plan whose vae.exchanges this dit-run would not issue is refused here,
  // not after the denoising.
  if (!m.vaeExchanges.empty()) {
    std::vector<BandExchange> traced = model.traceBandExchanges(int64_t(m.vaeRowSplit.size()));
    const std::vector<BandExchange> &planned = m.vaeExchanges;
    for (size_t i = 0; i < std::max(traced.size(), planned.size()); ++i) {
      if (i < traced.size() && i < planned.size() && traced[i] == planned[i])
        continue;
      throw BadInput(m.path + ": vae.exchanges" +
                     (i < planned.size() ? "[" + std::to_string(i) + "] is " +
                                               planned[i].describe()
                                         : " ends after " + std::to_string(planned.size()) +
                                               " exchanges") +
                     ", but the " + model.className() + " decoder issues " +
                     (i < traced.size() ? traced[i].describe() : "nothing more") +
                     " there (" + std::to_string(traced.size()) +
                     " exchanges per band and pass); the plan's band program is not "
                     "this decoder's");
    }
  }
  if (model.latentChannels() != m.latentChannels)
    throw BadInput(model.configPath() + ": " + std::to_string(model.latentChannels()) +
                   " latent channels differ from the plan's " +
                   std::to_string(m.latentChannels) + " (" + m.path + ")");
}

void PictureOutputs::checkOutput(const std::string &flag, const std::string &output,
                                 int64_t latentFrames) const {
  int64_t frames = model.pixelFrames(latentFrames);
  if (endsWith(output, ".mp4") && !model.decodesVideo())
    throw BadInput(flag + " '" + output.substr(0, 200) + "': " + model.className() +
                   " decodes pictures; write them as .png");
  if (endsWith(output, ".png") && frames != 1)
    throw BadInput(flag + " '" + output.substr(0, 200) + "': " +
                   std::to_string(latentFrames) + " latent frames decode to " +
                   std::to_string(frames) + " frames of video; write them as .mp4");
}

std::vector<std::string> PictureOutputs::outputPaths(const std::string &output,
                                                     int64_t batch) const {
  std::vector<std::string> paths;
  for (int64_t b = 0; b < batch; ++b)
    paths.push_back(batchItemPath(output, b));
  return paths;
}

void PictureOutputs::loadParameters(uint64_t seed) {
  if (weights.empty()) {
    // Drawn parameters are a function of the seed, like the transformer's.
    if (!drawnFrom || *drawnFrom != seed)
      params = seededVaeParameters(model.parameters(), seed);
    drawnFrom = seed;
    return;
  }
  if (!params.empty())
    return;
  checkpoint::TransformerWeights files(vaeFolder, "vae");
  params = loadVaeParameters(model.parameters(), files);
}

std::string PictureOutputs::stage(StagedOutputs &staged, const at::Tensor &latents,
                                  const std::vector<int64_t> &shape,
                                  const std::string &output,
                                  const std::string &savePixels,
                                  VaeDecodeGroup *group) const {
  DecodeWork work;
  auto started = std::chrono::steady_clock::now();
  at::Tensor band = group ? group->scatterLatents(latents, shape) : latents;
  at::Tensor pixels; // [B, 3, F, H, W]
  if (band.defined()) {
    pixels = model.decode(params, band, &work, group ? group->bands() : nullptr);
    if (group)
      group->finishDecode();
  }
  // Where the decode ran, for the line: "" for the leader alone.
  std::string where, whose;
  if (group && !(group->decoderRanks().size() == 1 && group->decodes())) {
    const std::vector<int64_t> &ranks = group->decoderRanks(), &rows = group->bandRows();
    where = " on ranks [";
    whose = "latent row bands [";
    for (size_t i = 0; i < ranks.size(); ++i) {
      where += (i ? ", " : "") + std::to_string(ranks[i]);
      whose += (i ? ", " : "") + std::to_string(rows[i]);
    }
    where += "]";
    whose += group->decodes() ? "]; this rank's band " : "]; this rank decodes none: ";
  }
  if (group) {
    int64_t s = model.spatialCompression();
    pixels = group->gatherPixels(pixels, {shape[0], model.pixelChannels(),
                                          model.pixelFrames(shape[2]), shape[3] * s,
                                          shape[4] * s});
    if (!pixels.defined())
      return "";
  }
  pixels = pixels.contiguous();
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - started)
                  .count();
  int64_t batch = pixels.size(0), frames = pixels.size(2);
  int64_t height = pixels.size(3), width = pixels.size(4);
  bool video = endsWith(output, ".mp4");
  if (!savePixels.empty()) {
    // Pictures as [B, 3, H, W], videos as [B, 3, F, H, W].
    std::vector<int64_t> saved = pixels.sizes().vec();
    if (!model.decodesVideo())
      saved.erase(saved.begin() + 2);
    staged.stage(savePixels, encodeNpy(saved, pixels.data_ptr<float>()));
  }
  const float *data = pixels.data_ptr<float>();
  int64_t item = 3 * frames * height * width;
  int fps = videoFrameRate(family);
  for (int64_t b = 0; b < batch; ++b)
    staged.stage(batchItemPath(output, b),
                 video ? encodePixelsAsMp4(data + b * item, frames, height, width, fps)
                       : encodePixelsAsPng(data + b * item, height, width));
  std::string what = video ? std::to_string(batch) + " video" + (batch == 1 ? "" : "s") +
                                 " of " + std::to_string(frames) + " frames at " +
                                 std::to_string(fps) + " fps"
                           : std::to_string(batch) + " image" + (batch == 1 ? "" : "s");
  // On several bands the FLOPs are this rank's band's, the time the whole
  // decode's (scatter, bands, gather).
  char line[768];
  std::snprintf(line, sizeof(line),
                "decoded %s with %s to %s of %lldx%lld in %.1f ms%s "
                "(%s%.3f GFLOP, %.2f GFLOP/s; convolutions %.3f GFLOP; %d threads)",
                describeShape(shape).c_str(), model.className().c_str(), what.c_str(),
                (long long)width, (long long)height, ms, where.c_str(), whose.c_str(),
                work.flops() / 1e9, work.flops() / 1e6 / std::max(ms, 1e-3),
                work.convolutionFlops / 1e9, at::get_num_threads());
  return line;
}

} // namespace ditc::runtime
