//===- Bands.h - one rank's band of a patch-parallel VAE decode -*- C++ -*-===//
//
// Patch parallelism splits a decode's latent rows into bands, one per rank;
// upsampling doubles every band with the image, so each rank keeps its band
// from the latents to the pixels. Three things cross band edges, and each
// has an exchange here that makes the bands' decode the one-rank decode:
//   - every 3x3 convolution reads one row beyond each edge: the halo, sent
//     by the neighbours (zeros at the image's edges, as the padding is);
//   - GroupNorm's statistics span the whole image: the bands all-reduce
//     their partial sums;
//   - the mid block's attention is global: the bands all-gather K and V.
// The decoders take a Bands, or nullptr for a one-rank decode. The plan's
// band program lists these exchanges in order (manifest vae.exchanges);
// TracingBands records a decoder's, so dit-run can compare the two.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_VAE_BANDS_H
#define DITC_RUNTIME_VAE_BANDS_H

#include "ditc/Runtime/Plan/Manifest.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace ditc::runtime {

class Bands {
public:
  virtual ~Bands() = default;
  /// The number of bands and this rank's.
  virtual int64_t count() const = 0;
  virtual int64_t index() const = 0;
  /// The latent rows of every band, in band order.
  virtual const std::vector<int64_t> &latentRows() const = 0;
  /// `x` ([..., rows, width]) with `halo` rows of the band above before its
  /// first row and of the band below after its last: zeros at the image's
  /// top and bottom. Every band calls it together.
  virtual at::Tensor withHalo(const at::Tensor &x, int64_t halo) = 0;
  /// The element-wise sum of every band's `x` (same shape everywhere).
  virtual at::Tensor allReduceSum(const at::Tensor &x) = 0;
  /// The attention's keys and values ([N, pixels, C] each) of every band
  /// concatenated along the pixels in band order, band b holding
  /// `pixels[b]`: one exchange for both.
  virtual std::pair<at::Tensor, at::Tensor>
  gatherKeysValues(const at::Tensor &keys, const at::Tensor &values,
                   const std::vector<int64_t> &pixels) = 0;
};

/// Bands that only record: the exchanges a decoder issues, as band
/// programs name them (update_halo with its rows, all_reduce_stats,
/// all_gather_kv), with zeros standing for the neighbours' rows and every
/// band's statistics equal to this band's. Band 0 of `latentRows`.
class TracingBands : public Bands {
public:
  explicit TracingBands(std::vector<int64_t> latentRows) : rows(std::move(latentRows)) {}
  int64_t count() const override { return int64_t(rows.size()); }
  int64_t index() const override { return 0; }
  const std::vector<int64_t> &latentRows() const override { return rows; }
  at::Tensor withHalo(const at::Tensor &x, int64_t halo) override;
  at::Tensor allReduceSum(const at::Tensor &x) override;
  std::pair<at::Tensor, at::Tensor> gatherKeysValues(const at::Tensor &keys,
                                                     const at::Tensor &values,
                                                     const std::vector<int64_t> &pixels) override;
  /// What the decoder issued, in order.
  const std::vector<BandExchange> &issued() const { return trace; }

private:
  std::vector<int64_t> rows;
  std::vector<BandExchange> trace;
};

/// GroupNorm over every band's rows together: each row's float32 sum and
/// 2-norm over its columns (the same values whichever band holds the row),
/// gathered per (item, group) in float64 and all-reduced across the bands,
/// then applied as one fused scale and shift per channel. `x` is
/// [B, C, ...spatial]; with nullptr or one band, over this tensor alone.
at::Tensor bandGroupNorm(Bands *bands, const at::Tensor &x, int64_t groups,
                         const at::Tensor &weight, const at::Tensor &bias, double eps);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_BANDS_H
