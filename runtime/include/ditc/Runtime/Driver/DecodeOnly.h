//===- DecodeOnly.h - dit-run --decode-only: latents to pictures -*- C++ -*-===//
//
// dit-run PLAN --decode-only --latents L.npy [--weights SNAPSHOT]
//         --output OUT.png|OUT.mp4 [--save-pixels P.npy]
// decodes latents as dit-run writes them ([B, C, F, H, W]) with the plan's
// VAE (PictureOutputs.h), without denoising, so a pipeline can run the
// decode as its own stage. One process, or with --nproc (or under any
// launcher that sets RANK and WORLD_SIZE) the plan's ranks, each decoding
// its band when the plan splits the VAE (its vae section: the leader reads
// the latents, sends the bands and writes). Everything is checked before the
// decode: the plan and its VAE, the latents against both, every VAE tensor's
// name and shape, the estimated peak memory, and every output against the
// run's inputs (OutputPolicy.h).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DRIVER_DECODEONLY_H
#define DITC_RUNTIME_DRIVER_DECODEONLY_H

#include "ditc/Runtime/Comm/Rendezvous.h"

#include <cstdint>
#include <string>

namespace ditc::runtime {

struct DecodeOptions {
  std::string planDir;
  std::string latents;    // --latents: required
  std::string weights;    // --weights: a pipeline folder holding vae/; else seeded
  std::string output;     // --output OUT.png or OUT.mp4: one per batch item
  std::string savePixels; // --save-pixels P.npy: float pixels [B, 3, (F,) H, W]
  bool memoryCheck = true;
  /// Over the plan's ranks: this rank, the world and the rendezvous.
  bool distributed = false;
  int64_t rank = 0, worldSize = 1;
  RendezvousOptions rendezvous;
};

/// Runs the decode; throws BadInput (exit 2) for anything wrong with the
/// inputs and leaves no output behind when it throws.
void runDecodeOnly(const DecodeOptions &options);

/// The checks of runDecodeOnly alone (plan, VAE, latents, outputs), for the
/// launcher to refuse bad input once before it starts the ranks.
void validateDecodeOnly(const DecodeOptions &options);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DRIVER_DECODEONLY_H
