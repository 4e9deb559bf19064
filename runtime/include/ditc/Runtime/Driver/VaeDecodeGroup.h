//===- VaeDecodeGroup.h - a replica's patch-parallel VAE ranks --*- C++ -*-===//
//
// The ranks that decode one replica's final latents (the plan's vae
// section): the replica's leader gathers the latents, sends each decoding
// rank its band of latent rows, the bands decode together (Vae/Bands.h:
// halos, GroupNorm sums, K/V), and the leader gathers the pixel bands back
// in band order. With one band the leader decodes alone and nothing moves.
// The process groups are the Communicator's (Comm); the bands' exchanges
// are what the decoders ask for (Vae/Bands.h): this joins the two.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DRIVER_VAEDECODEGROUP_H
#define DITC_RUNTIME_DRIVER_VAEDECODEGROUP_H

#include "ditc/Runtime/Vae/Bands.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ditc::runtime {

class Group;

/// The plan's band program: the exchanges each band issues per decode pass
/// (manifest vae.exchanges; empty for one band), and the plan for messages.
struct BandProgram {
  std::vector<BandExchange> exchanges;
  std::string plan;
};

class VaeDecodeGroup {
public:
  /// `decoders`: the replica's decoding ranks in band order; `bandGroup`
  /// the process group over them (null for one band or a rank outside);
  /// `transferGroup` the group over them and the leader, which may be
  /// `bandGroup` itself (null when neither is needed or the rank is in
  /// neither). `latentRows`: the rows of each band. Each band exchange
  /// is checked against `program` before it is issued.
  VaeDecodeGroup(int64_t rank, int64_t leader, std::vector<int64_t> decoders,
                 std::vector<int64_t> latentRows, Group *bandGroup,
                 Group *transferGroup, BandProgram program);
  ~VaeDecodeGroup();

  /// True when this rank decodes a band.
  bool decodes() const;
  /// The decoding ranks in band order, and each band's latent rows.
  const std::vector<int64_t> &decoderRanks() const { return decoders; }
  const std::vector<int64_t> &bandRows() const { return latentRows; }
  /// The band exchange of this rank's decode; nullptr for one band.
  Bands *bands();
  /// After a decode: throws RunFailure unless the bands issued whole passes
  /// of the band program (one per latent frame for a video VAE).
  void finishDecode();
  /// This rank's band of the replica's latents [B, C, F, H, W]: the leader
  /// passes the whole latents and sends the other bands; a decoding rank
  /// passes `shape` (the whole latents') and receives its band.
  at::Tensor scatterLatents(const at::Tensor &latents, const std::vector<int64_t> &shape);
  /// The whole pixels ([B, 3, F, H, W] = `shape`) on the leader from every
  /// band's `pixels` (its rows of them), in band order; an undefined tensor
  /// elsewhere.
  at::Tensor gatherPixels(const at::Tensor &pixels, const std::vector<int64_t> &shape);

private:
  int64_t rank, leader;
  std::vector<int64_t> decoders, latentRows;
  Group *transferGroup;
  BandProgram program;
  std::unique_ptr<Bands> exchange;
  int64_t transferIndex(int64_t member) const;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DRIVER_VAEDECODEGROUP_H
