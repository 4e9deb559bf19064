//===- Bands.h - one rank's band of a patch-parallel VAE decode -*- C++ -*-===//
//
// Patch parallelism splits a decode's latent rows into bands, one per rank;
// upsampling doubles every band with the image, so each rank keeps its band
// from the latents to the pixels. Three things cross band edges, and each
// has an exchange here that makes the bands' decode the one-rank decode:
//   - every 3x3 convolution reads one row beyond each edge: the halo, sent
//     by the neighbours (zeros at the image's edges, as the padding is);
//   - GroupNorm's statistics span the whole image: the bands all-reduce
//     their rows' sums, each placed at its rows of the image;
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

/// Why bands give one rank's bytes: torch's CPU convolutions and GEMMs
/// pick their blocking, and with it the order of each sum, by the shape of
/// the whole call, so a band's convolution rounds differently from the whole
/// image's (by about 1e-7 a layer). Every row-mixing product of the decoders
/// is therefore computed one latent row's worth of output rows at a time,
/// each tile reading its own input rows plus the halo: band edges fall on
/// latent rows, so every tile has the same shape and inputs on one rank and
/// in a band, and the bands' pixels are the one-rank pixels, bit for bit.
///
/// The convolution of `input` ([N, C, (F,) rows, W]) with `weight` (stride
/// 1), `tileRows` output rows at a time. `input` already holds `halo` rows
/// above and below its output rows (a band's neighbours' rows, or zeros at
/// the image's edges); `padding` pads every spatial dim but the rows (whose
/// entry is ignored).
at::Tensor convolveRowTiles(const at::Tensor &input, const at::Tensor &weight,
                            const at::Tensor &bias, int64_t tileRows, int64_t halo,
                            std::vector<int64_t> padding);

/// `input` ([N, C, (F,) rows, W]) with `halo` zero rows above and below:
/// the one-rank decode's counterpart of Bands::withHalo.
at::Tensor withZeroRows(const at::Tensor &input, int64_t halo);

/// GroupNorm over every band's rows together: each row's float32 sum and
/// 2-norm over its columns (the same values whichever band holds the row),
/// gathered per (item, group) in float64 and all-reduced across the bands,
/// then applied as one fused scale and shift per channel. `x` is
/// [B, C, ...spatial]; with nullptr or one band, over this tensor alone.
at::Tensor bandGroupNorm(Bands *bands, const at::Tensor &x, int64_t groups,
                         const at::Tensor &weight, const at::Tensor &bias, double eps);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_VAE_BANDS_H
