//===- DecodeOnly.cpp - dit-run --decode-only: latents to pictures --------===//
#include "ditc/Runtime/Driver/DecodeOnly.h"
#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Device/CpuDevice.h"
#include "ditc/Runtime/Driver/MemoryCheck.h"
#include "ditc/Runtime/Exec/Threads.h"
#include "ditc/Runtime/Driver/PictureOutputs.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Runtime/IO/OutputPolicy.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Strings.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace ditc::runtime {

namespace {

/// Everything the decode needs, checked before any rank joins.
struct DecodeInputs {
  Manifest manifest;
  std::optional<PictureOutputs> pictures;
  NpyArray latents;
  OutputPolicy policy;
};

void checkInputs(const DecodeOptions &options, DecodeInputs &in) {
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

  in.manifest = loadManifest(options.planDir);
  const Manifest &manifest = in.manifest;
  if (options.distributed && options.worldSize != manifest.worldSize())
    throw BadInput("the plan " + manifest.path + " has " +
                   std::to_string(manifest.worldSize()) + " ranks but the launch has " +
                   std::to_string(options.worldSize) + " (--nproc or WORLD_SIZE)");
  in.pictures.emplace(manifest, options.weights);
  const VaeModel &vae = in.pictures->vae();

  in.latents = readNpy(options.latents);
  const auto &shape = in.latents.shape;
  int64_t channels = vae.latentChannels();
  if (shape.size() != 5 || shape[1] != channels || shape[0] < 1 || shape[2] < 1 ||
      shape[3] < 1 || shape[4] < 1 || (!vae.decodesVideo() && shape[2] != 1))
    throw BadInput(options.latents + ": latents of shape " + describeShape(shape) +
                   "; the VAE (" + vae.configPath() + ", " + vae.className() +
                   ") decodes [B, " + std::to_string(channels) +
                   (vae.decodesVideo() ? ", F, H, W] (z_dim " : ", 1, H, W] (latent channels ") +
                   std::to_string(channels) + (vae.decodesVideo() ? ")" : ", one frame)"));
  int64_t batch = shape[0], frames = shape[2], height = shape[3], width = shape[4];
  // The plan's bands cover its own latent rows.
  std::vector<int64_t> bands = manifest.vaeBands();
  if (!manifest.vaeGroups.empty() && height != manifest.latentHeight)
    throw BadInput(options.latents + ": latents of shape " + describeShape(shape) + " have " +
                   std::to_string(height) + " rows, but the plan's VAE bands (" +
                   manifest.path + ": vae.row_split) cover its " +
                   std::to_string(manifest.latentHeight) + " latent rows");
  in.pictures->checkOutput("--output", options.output, frames);

  if (options.memoryCheck) {
    // A band's decode: the widest band's rows and their halos.
    int64_t rows = manifest.vaeGroups.empty() ? height
                                              : *std::max_element(bands.begin(), bands.end()) + 2;
    int64_t need = vae.decodePeakBytes(batch, frames, rows, width);
    if (std::optional<MemoryLimit> limit = hostMemoryAvailable())
      if (need > limit->bytes)
        throw BadInput("decoding " + options.latents + " " + describeShape(shape) +
                       " needs about " + std::to_string(need >> 20) + " MiB at its peak" +
                       (manifest.vaeGroups.empty() ? "" : " per band") + "; " +
                       limit->source + " gives " + std::to_string(limit->bytes >> 20) +
                       " MiB (--skip-memory-check runs it anyway)");
  }

  in.policy.readsInput("the plan folder", options.planDir);
  in.policy.readsInput("--latents", options.latents);
  in.policy.readsInput("--weights", options.weights);
  for (const std::string &path : in.pictures->outputPaths(options.output, batch))
    in.policy.claimOutput("--output", path);
  if (!options.savePixels.empty())
    in.policy.claimOutput("--save-pixels", options.savePixels);
}

} // namespace

void validateDecodeOnly(const DecodeOptions &options) {
  DecodeInputs in;
  checkInputs(options, in);
}

void runDecodeOnly(const DecodeOptions &options) {
  DecodeInputs in;
  checkInputs(options, in);
  PictureOutputs &pictures = *in.pictures;
  const auto &shape = in.latents.shape;
  at::Tensor z = at::from_blob(in.latents.data.data(), shape, at::kFloat);
  StagedOutputs staged;
  if (!options.distributed) {
    // Without --weights, the VAE's parameters are drawn from seed 0, as a
    // denoising run without --weights draws the transformer's.
    pictures.loadParameters(0);
    configureThreads(0);
    std::string line = pictures.stage(staged, z, shape, options.output, options.savePixels);
    staged.commit();
    // One line for people and benchmarks (bench/vae_decode.py reads it).
    std::fprintf(stderr, "dit-run: %s\n", line.c_str());
    return;
  }
  // Over the plan's ranks: replica 0 decodes (its leader holds the latents,
  // its VAE ranks decode a band each); every other rank only joins, so that
  // the rendezvous and the final agreement see the whole world.
  const Manifest &m = in.manifest;
  int64_t rank = options.rank;
  std::vector<int64_t> decoders = m.vaeDecoders(0);
  bool leader = rank == m.replicaLeader(0);
  bool decodes = m.ranks[size_t(rank)].coords.at("dp") == 0 &&
                 std::count(decoders.begin(), decoders.end(), rank) > 0;
  if (decodes)
    pictures.loadParameters(0);
  // The host's cores go to its decoding ranks; the others only wait.
  int64_t busy = 0;
  for (int64_t peer : ranksOnThisHost(rank, m.worldSize()))
    busy += std::count(decoders.begin(), decoders.end(), peer);
  configureThreads(std::max<int64_t>(1, CpuDevice::usableCores() / std::max<int64_t>(1, busy)));
  // The same vote as a denoising run's: the plan and this rank's programs
  // (their hashes from the manifest, checked when it was read).
  Vote vote{m.planHash, ""};
  for (const std::optional<std::string> &id : {m.ranks[size_t(rank)].program,
                                                m.ranks[size_t(rank)].program2})
    if (id)
      vote.programs += (vote.programs.empty() ? "" : ",") + *id + ":" +
                       m.programEntry(*id).sha256;
  if (vote.programs.empty())
    vote.programs = "-";
  Communicator comm(m, rank, vote, {}, options.rendezvous,
                    openRankDevice(rank, options.rendezvous.backend));
  std::string line;
  VaeDecodeGroup vae(rank, comm.replicaLeader(), decoders, m.vaeBands(), comm.vaeBandGroup(),
                     comm.vaeTransferGroup(), {m.vaeExchanges, m.path});
  if (leader || decodes)
    line = pictures.stage(staged, leader ? z : at::Tensor(), shape, options.output,
                          options.savePixels, &vae);
  // Outputs land only when every rank has finished.
  comm.waitForEveryRank("decode-finish");
  staged.commit();
  if (leader)
    std::fprintf(stderr, "dit-run: rank %lld: %s\n", (long long)rank, line.c_str());
}

} // namespace ditc::runtime
