//===- Bands.cpp - halos and whole-image statistics for VAE bands ---------===//
#include "ditc/Runtime/Vae/Bands.h"

#include <algorithm>
#include <vector>

namespace ditc::runtime {

at::Tensor bandGroupNorm(Bands *bands, const at::Tensor &x, int64_t groups,
                         const at::Tensor &weight, const at::Tensor &bias, double eps) {
  int64_t batch = x.size(0), channels = x.size(1);
  // Each row's sum and 2-norm over its columns in float32: a band computes
  // exactly the values one rank computes for the same rows.
  at::Tensor rowSums = x.sum(-1).to(at::kDouble);
  at::Tensor rowNorms = at::linalg_vector_norm(x, 2, {-1}).to(at::kDouble);
  at::Tensor rows = at::stack({rowSums, rowNorms.mul(rowNorms)}); // [2, B, C, ..., rows]
  if (bands && bands->count() > 1) {
    // Every band places its rows' sums at their rows of the whole image,
    // zeros elsewhere, and the bands all-reduce that: each entry is one
    // band's value plus zeros, so every band ends with one rank's row sums,
    // exactly, and sums them below in one rank's order.
    const std::vector<int64_t> &latentRows = bands->latentRows();
    int64_t myRows = x.size(-2);
    int64_t upsampling = myRows / latentRows[size_t(bands->index())];
    int64_t first = 0, all = 0;
    for (size_t b = 0; b < latentRows.size(); ++b) {
      if (int64_t(b) == bands->index())
        first = all;
      all += latentRows[b] * upsampling;
    }
    std::vector<int64_t> shape = rows.sizes().vec();
    shape.back() = all;
    at::Tensor placed = at::zeros(shape, rows.options());
    placed.narrow(-1, first, myRows).copy_(rows);
    rows = bands->allReduceSum(placed);
  }
  at::Tensor sums = rows.reshape({2, batch, groups, -1}).sum(-1); // [2, B, G]
  double elements = double(rows.numel() / (2 * batch * groups)) * double(x.size(-1));
  at::Tensor mean = sums[0] / elements;
  at::Tensor variance = (sums[1] / elements - mean * mean).clamp_min(0.0);
  at::Tensor invStd = (variance + eps).rsqrt();
  // y = x * scale + shift per (item, channel), in one fused pass: batch
  // norm in inference mode over the item's channels with unit statistics.
  int64_t perGroup = channels / groups;
  at::Tensor scale = (invStd.unsqueeze(-1).expand({batch, groups, perGroup}).reshape({batch, channels}) *
                      weight.to(at::kDouble))
                         .to(at::kFloat);
  at::Tensor shift = (bias.to(at::kDouble) -
                      (mean * invStd).unsqueeze(-1).expand({batch, groups, perGroup}).reshape({batch, channels}) *
                          weight.to(at::kDouble))
                         .to(at::kFloat);
  std::vector<int64_t> flat{1, batch * channels, -1};
  at::Tensor unit = at::ones({batch * channels}, x.options());
  at::Tensor zero = at::zeros({batch * channels}, x.options());
  return at::batch_norm(x.reshape(flat), scale.reshape({-1}), shift.reshape({-1}), zero, unit,
                        /*training=*/false, /*momentum=*/0.0, /*eps=*/0.0,
                        /*cudnn_enabled=*/false)
      .reshape(x.sizes());
}

at::Tensor convolveRowTiles(const at::Tensor &input, const at::Tensor &weight,
                            const at::Tensor &bias, int64_t tileRows, int64_t halo,
                            std::vector<int64_t> padding) {
  int64_t rowDim = input.dim() - 2, spatial = input.dim() - 2;
  int64_t rows = input.size(rowDim) - 2 * halo;
  padding[size_t(spatial - 2)] = 0;
  std::vector<int64_t> ones(size_t(spatial), 1), zeros(size_t(spatial), 0);
  at::Tensor out;
  for (int64_t first = 0; first < rows; first += tileRows) {
    int64_t count = std::min(tileRows, rows - first);
    at::Tensor tile = at::convolution(input.narrow(rowDim, first, count + 2 * halo), weight,
                                      bias, ones, padding, ones, /*transposed=*/false,
                                      zeros, /*groups=*/1);
    if (count == rows)
      return tile;
    if (!out.defined()) {
      std::vector<int64_t> shape = tile.sizes().vec();
      shape[size_t(rowDim)] = rows;
      out = at::empty(shape, tile.options());
    }
    out.narrow(rowDim, first, count).copy_(tile);
  }
  return out;
}

at::Tensor withZeroRows(const at::Tensor &input, int64_t halo) {
  std::vector<int64_t> pad(size_t(2 * (input.dim() - 2)), 0);
  // constant_pad_nd lists the last dim first: columns, then rows.
  pad[2] = pad[3] = halo;
  return at::constant_pad_nd(input, pad);
}

at::Tensor TracingBands::withHalo(const at::Tensor &x, int64_t halo) {
  trace.push_back({"update_halo", halo});
  std::vector<int64_t> edge = x.sizes().vec();
  edge[edge.size() - 2] = halo;
  at::Tensor zeros = at::zeros(edge, x.options());
  return at::cat({zeros, x, zeros}, -2);
}

at::Tensor TracingBands::allReduceSum(const at::Tensor &x) {
  trace.push_back({"all_reduce_stats", 0});
  return x * double(count());
}

std::pair<at::Tensor, at::Tensor>
TracingBands::gatherKeysValues(const at::Tensor &keys, const at::Tensor &values,
                               const std::vector<int64_t> &pixels) {
  trace.push_back({"all_gather_kv", 0});
  auto widen = [&](const at::Tensor &x) {
    std::vector<int64_t> rest = x.sizes().vec();
    int64_t all = 0;
    for (int64_t p : pixels)
      all += p;
    rest[1] = all - x.size(1);
    return at::cat({x, at::zeros(rest, x.options())}, 1);
  };
  return {widen(keys), widen(values)};
}

} // namespace ditc::runtime
