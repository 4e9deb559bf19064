//===- Bands.cpp - halos and whole-image statistics for VAE bands ---------===//
#include "ditc/Runtime/Vae/Bands.h"

#include <algorithm>

namespace ditc::runtime {

at::Tensor rowsWithHalo(Bands *bands, const at::Tensor &x, int64_t halo) {
  if (bands && bands->count() > 1)
    return bands->withHalo(x, halo);
  std::vector<int64_t> pad(2 * size_t(x.dim() - 1), 0);
  pad[2] = pad[3] = halo; // (width: 0, 0), (rows: halo, halo)
  return at::constant_pad_nd(x, pad);
}

at::Tensor bandGroupNorm(Bands *bands, const at::Tensor &x, int64_t groups,
                         const at::Tensor &weight, const at::Tensor &bias, double eps) {
  int64_t batch = x.size(0), channels = x.size(1);
  at::Tensor grouped = x.reshape({batch * groups, -1});
  // Sums and sums of squares in float64, a few groups at a time so the
  // widening copy stays small; float64 keeps E[x^2] - E[x]^2 exact enough
  // that the bands' statistics equal one rank's.
  at::Tensor sums = at::empty({2, batch * groups}, at::kDouble);
  int64_t perChunk = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(1, grouped.size(1)));
  for (int64_t begin = 0; begin < grouped.size(0); begin += perChunk) {
    int64_t count = std::min(perChunk, grouped.size(0) - begin);
    at::Tensor wide = grouped.narrow(0, begin, count).to(at::kDouble);
    sums[0].narrow(0, begin, count).copy_(wide.sum(1));
    sums[1].narrow(0, begin, count).copy_(wide.mul(wide).sum(1));
  }
  double elements = double(grouped.size(1));
  if (bands && bands->count() > 1) {
    sums = bands->allReduceSum(sums);
    // Elements per (item, group) over the whole image: the band's rows are
    // its latent rows times the upsampling so far, the same for every band.
    const std::vector<int64_t> &latentRows = bands->latentRows();
    int64_t allLatentRows = 0;
    for (int64_t band : latentRows)
      allLatentRows += band;
    int64_t myRows = x.size(-2);
    int64_t upsampling = myRows / latentRows[size_t(bands->index())];
    elements = double(grouped.size(1) / myRows) * double(allLatentRows * upsampling);
  }
  at::Tensor mean = sums[0] / elements;
  at::Tensor variance = (sums[1] / elements - mean * mean).clamp_min(0.0);
  at::Tensor invStd = (variance + eps).rsqrt();
  std::vector<int64_t> statShape{batch, groups, 1};
  at::Tensor normalized = (grouped.reshape({batch, groups, -1}) - mean.to(at::kFloat).reshape(statShape)) *
                          invStd.to(at::kFloat).reshape(statShape);
  std::vector<int64_t> affine(size_t(x.dim()), 1);
  affine[1] = channels;
  return normalized.reshape(x.sizes()) * weight.reshape(affine) + bias.reshape(affine);
}

} // namespace ditc::runtime
