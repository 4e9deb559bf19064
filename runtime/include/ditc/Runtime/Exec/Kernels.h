//===- Kernels.h - GEMM and attention whose bits ignore the thread count -*- C++ -*-===//
//
// The executor's matrix products. On a CPU, OpenBLAS partitions a GEMM by
// its thread count, and the rounding follows the partition: the same product
// computed with 1 and with 2 BLAS threads differs in the last bits. These
// kernels fix the partition instead. A product is cut into tiles whose
// bounds depend only on its shapes; each tile is one single-threaded BLAS
// call (the runner sets OpenBLAS to one thread), and the tiles are spread
// over ATen's intra-op threads. So a rank computes the same bits with any
// thread count, and a cfg or pp rank reproduces the one-rank run bit for bit
// however many ranks share its host (docs/runtime.md, "Threads").
//
// On other devices the tiling buys nothing; the same functions call ATen's
// batched operators.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_KERNELS_H
#define DITC_RUNTIME_KERNELS_H

#include <ATen/ATen.h>

#include <functional>

namespace ditc::runtime {

/// y = x wᵀ + b over the last dimension of x; `b` may be undefined. The
/// GEMM tiles restart at each element of dim 0 (the batch).
at::Tensor tiledLinear(const at::Tensor &x, const at::Tensor &w, const at::Tensor &b);

/// The same for 2-d `rows` that are all one batch element's: the tiles
/// start at row 0 (a row chunk that starts at a tile of its element).
at::Tensor tiledLinearRows(const at::Tensor &rows, const at::Tensor &w,
                           const at::Tensor &b);

/// One block of rows of a [B, S, F] tensor (any other rank is one batch
/// element of rows of its last dimension).
struct RowBlock {
  int64_t batch, row, rows;
  /// This block's rows of t, shaped like the output up to its last dim.
  at::Tensor of(const at::Tensor &t) const;
  /// This block's batch element of t [B, ...] (say modulation [B, 1, W]).
  at::Tensor batchOf(const at::Tensor &t) const;
};

/// A fresh tensor of `shape` whose fixed blocks of rows fn fills, spread
/// over ATen's intra-op threads; each block stays in cache through a chain
/// of element-wise ops. The blocks depend only on the shape and restart at
/// each batch element. That matters for ops whose vectorized and scalar
/// paths round differently (gelu, silu, fused multiply-adds): ATen splits
/// a whole tensor at bounds that follow the thread count, and the elements
/// past a split's last full vector take the scalar path.
/// With `into` (a contiguous tensor of `shape`), fn fills it instead of a
/// fresh tensor: an op whose input dies there writes over it (each element
/// is read before it is written, as in ATen's in-place ops).
at::Tensor rowBlocks(at::IntArrayRef shape, const at::TensorOptions &options,
                     const std::function<void(const RowBlock &, at::Tensor &out)> &fn,
                     at::Tensor into = at::Tensor());

/// softmax(scale · q kᵀ + bias) v per head, for q [B, Lq, H·d] and k, v
/// [B, Lk, H·d] (views with a unit last stride are read in place); returns
/// [B, Lq, H·d]. `keyBias` [B, Lk], when given, is added to every query's
/// scores (keyMaskBias: 0 for a valid key, a large negative for a masked
/// one).
at::Tensor headAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                         int64_t heads, double scale,
                         const at::Tensor &keyBias = at::Tensor());

/// The additive key bias of a text mask [B, L] (1 valid, 0 padding) in
/// `dtype`: 0 for a valid key and -1e30 for a padded one. Finite, not
/// -inf, so that a block whose keys are all padding leaves the online
/// softmax finite (its weights vanish once any valid key is absorbed).
at::Tensor keyMaskBias(const at::Tensor &mask, at::ScalarType dtype);

/// The key bias [B, keys] of a joint attention: `textBias` [B, L] on the
/// text part (the first L keys with `textPrefix`, else the last L) and 0 on
/// the image keys.
at::Tensor jointKeyBias(const at::Tensor &textBias, int64_t keys, bool textPrefix);

/// diffusers' MochiAttentionPool of x [B, L, E] to [B, D]: the mean m (of
/// the valid tokens, with `mask` [B, L]) before the tokens, projected to
/// keys and values by params[0..1] (to_kv), one query per head from m by
/// params[2..3] (to_q), and the result by params[4..5] (to_out); a padded
/// token is no key.
at::Tensor attentionPool(const at::Tensor &x, const at::Tensor &mask, int64_t heads,
                         const std::vector<at::Tensor> &params);

/// The mean of x [B, L, E] over its tokens, summed in float32 even for
/// bfloat16; with `mask` [B, L] (1 valid, 0 padding), of the valid tokens
/// only, as diffusers' (x * mask).sum(1) / mask.sum(1).
at::Tensor tokenMean(const at::Tensor &x, const at::Tensor &mask);

/// Attention over key/value blocks that arrive one at a time (ring
/// attention), merged with an online softmax: per head and query row a
/// running max, a running sum and an unnormalized output.
class OnlineAttention {
public:
  OnlineAttention(const at::Tensor &q, int64_t heads, double scale);
  /// Folds in one block of keys and values, [B, Lk, H·d] each, with an
  /// optional key bias [B, Lk] (keyMaskBias).
  void absorb(const at::Tensor &k, const at::Tensor &v,
              const at::Tensor &keyBias = at::Tensor());
  /// The normalized output, [B, Lq, H·d].
  at::Tensor result() const;

private:
  at::Tensor q; // scaled once
  int64_t heads;
  at::Tensor max, sum, out; // [B, H, Lq, 1], [B, H, Lq, 1], [B, Lq, H·d]
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_KERNELS_H
