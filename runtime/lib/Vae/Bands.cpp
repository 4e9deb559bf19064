//===- Bands.cpp - halos and whole-image statistics for VAE bands ---------===//
#include "ditc/Runtime/Vae/Bands.h"

#include <algorithm>

namespace ditc::runtime {

at::Tensor bandGroupNorm(Bands *bands, const at::Tensor &x, int64_t groups,
                         const at::Tensor &weight, const at::Tensor &bias, double eps) {
  int64_t batch = x.size(0), channels = x.size(1);
  // Each row's sum and 2-norm over its columns in float32: a band computes
  // exactly the values one rank computes for the same rows. Then float64
  // over the rows and channels of each group, and across the bands.
  at::Tensor rowSums = x.sum(-1).to(at::kDouble).reshape({batch, groups, -1});
  at::Tensor rowNorms = at::linalg_vector_norm(x, 2, {-1}).to(at::kDouble).reshape({batch, groups, -1});
  at::Tensor sums = at::stack({rowSums.sum(-1), rowNorms.mul(rowNorms).sum(-1)}); // [2, B, G]
  double elements = double(x.numel() / (batch * groups));
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
    elements = elements / double(myRows) * double(allLatentRows * upsampling);
  }
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
