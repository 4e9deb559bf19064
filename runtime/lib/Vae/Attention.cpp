//===- Attention.cpp - the VAE mid blocks' one-head attention -------------===//
#include "ditc/Runtime/Vae/Attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ditc::runtime {

at::Tensor pixelAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                          int64_t queryRows, DecodeWork &work) {
  int64_t n = q.size(0), pixels = q.size(1), channels = q.size(2);
  at::Tensor kT = k.transpose(1, 2).contiguous();
  at::Tensor values = v.contiguous();
  double scale = 1.0 / std::sqrt(double(channels));
  work.attentionFlops += 2.0 * double(n) * double(pixels) * double(channels) *
                         2.0 * double(pixels);
  std::vector<at::Tensor> rows;
  for (int64_t begin = 0; begin < pixels; begin += queryRows) {
    int64_t count = std::min(queryRows, pixels - begin);
    at::Tensor scores = at::matmul(q.narrow(1, begin, count).contiguous(), kT).mul_(scale);
    rows.push_back(at::matmul(at::softmax(scores, -1), values));
  }
  return at::cat(rows, 1);
}

at::Tensor linearPixelTiles(const at::Tensor &x, const at::Tensor &weight,
                            const at::Tensor &bias, int64_t tilePixels) {
  // Each tile contiguous: torch picks its product by strides too, and a
  // band's tile of a transposed activation has other strides than one
  // rank's.
  int64_t pixels = x.size(1);
  at::Tensor out = at::empty({x.size(0), pixels, weight.size(0)}, x.options());
  for (int64_t first = 0; first < pixels; first += tilePixels) {
    int64_t count = std::min(tilePixels, pixels - first);
    out.narrow(1, first, count)
        .copy_(at::linear(x.narrow(1, first, count).contiguous(), weight, bias));
  }
  return out;
}

} // namespace ditc::runtime
