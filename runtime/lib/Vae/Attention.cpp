//===- Attention.cpp - the VAE mid blocks' one-head attention -------------===//
#include "ditc/Runtime/Vae/Attention.h"

#include <cmath>
#include <vector>

namespace ditc::runtime {

at::Tensor pixelAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                          DecodeWork &work) {
  static constexpr int64_t kQueryRows = 1024;
  int64_t n = q.size(0), pixels = q.size(1), channels = q.size(2);
  at::Tensor kT = k.transpose(1, 2).contiguous();
  at::Tensor values = v.contiguous();
  double scale = 1.0 / std::sqrt(double(channels));
  work.attentionFlops += 2.0 * double(n) * double(pixels) * double(channels) *
                         2.0 * double(pixels);
  std::vector<at::Tensor> rows;
  for (int64_t begin = 0; begin < pixels; begin += kQueryRows) {
    int64_t count = std::min(kQueryRows, pixels - begin);
    at::Tensor scores = at::matmul(q.narrow(1, begin, count), kT).mul_(scale);
    rows.push_back(at::matmul(at::softmax(scores, -1), values));
  }
  return at::cat(rows, 1);
}

} // namespace ditc::runtime
