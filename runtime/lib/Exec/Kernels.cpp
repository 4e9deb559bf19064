//===- Kernels.cpp - GEMM and attention whose bits ignore the thread count ===//
#include "ditc/Runtime/Exec/Kernels.h"
#include "ditc/Runtime/Exec/HostBlas.h"
#include "ditc/Runtime/Plan/Program.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <dlfcn.h>

namespace ditc::runtime {

namespace {
// Tile bounds depend only on shapes (never on the thread count). 256 x 256
// output tiles cost 3-8% of single-thread sgemm throughput against one
// whole call on this project's CPUs (M = 768, K = 512 and 2048), and leave
// a Wan-sized layer (768 tokens, width 512) six tiles, an even count.
constexpr int64_t kTileRows = kGemmTileRows, kTileCols = 256;
// Elements per row block of element-wise ops: 256 KiB of float32, so a
// block, its operands and its temporaries stay in a core's L2 cache, and
// a block is worth the few microseconds each ATen call costs.
constexpr int64_t kBlockElements = 65536;
// Query rows per attention work item: its scores (rows x Lk floats) stay
// in a core's L2 cache for Lk up to about 2000.
constexpr int64_t kAttentionRows = 256;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// While alive, the ATen ops the calling thread runs use one thread.
/// ATen's OpenMP backend parallelizes an op when at::get_num_threads(),
/// the calling thread's OpenMP thread count, exceeds 1 and it does not
/// find itself in a parallel region; the second test alone proved
/// unreliable (an item's element-wise op was split again, at bounds that
/// follow the thread count). The count is per thread, so this changes no
/// other thread.
class SerialOps {
public:
  SerialOps() {
    if (set && get) {
      saved = get();
      set(1);
    }
  }
  ~SerialOps() {
    if (saved > 0)
      set(saved);
  }

private:
  // Resolved in the process, so a libtorch on another OpenMP runtime is
  // still the one told; absent (no OpenMP), ATen's own test suffices.
  static inline void (*const set)(int) = reinterpret_cast<void (*)(int)>(
      ::dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  static inline int (*const get)() =
      reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  int saved = 0;
};

/// Runs fn(i) for every i in [0, n): on ATen's intra-op threads for CPU
/// tensors, each item whole on one thread with its ops serial, so its
/// result does not depend on the thread count; in order on other devices.
template <typename Fn> void forEachItem(bool cpu, int64_t n, const Fn &fn) {
  if (!cpu) {
    for (int64_t i = 0; i < n; ++i)
      fn(i);
    return;
  }
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    SerialOps serial;
    for (int64_t i = begin; i < end; ++i)
      fn(i);
  });
}

/// The work items of a per-head computation: (batch, head, query block).
struct HeadItem {
  int64_t batch, head, row, rows;
};

struct HeadItems {
  HeadItems(int64_t batches, int64_t heads, int64_t queries)
      : heads(heads), queries(queries), blocks(ceilDiv(queries, kAttentionRows)),
        count(batches * heads * blocks) {}
  HeadItem operator[](int64_t i) const {
    int64_t block = i % blocks, bh = i / blocks;
    int64_t row = block * kAttentionRows;
    return {bh / heads, bh % heads, row, std::min(kAttentionRows, queries - row)};
  }
  int64_t heads, queries, blocks, count;
};

/// Rows [item.row, +item.rows) and head item.head's channels of x [B, L, H·d];
/// `allRows` takes every row instead.
at::Tensor slice(const at::Tensor &x, const HeadItem &item, int64_t d,
                 bool allRows = false) {
  at::Tensor t = x.select(0, item.batch).narrow(1, item.head * d, d);
  return allRows ? t : t.narrow(0, item.row, item.rows);
}
} // namespace

namespace {
/// x wᵀ + b of `items` equal runs of rows of x, tiled from the start of
/// each run.
at::Tensor tiledProduct(const at::Tensor &x, int64_t items, const at::Tensor &w,
                        const at::Tensor &b) {
  int64_t k = x.size(-1), n = w.size(0);
  at::Tensor x2 = x.reshape({-1, k});
  int64_t m = x2.size(0);
  int64_t perItem = items > 0 ? m / items : 0;
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = n;
  // The result owns its storage and the tiles write through a 2-d view of
  // it, so once the view is gone nothing else holds the storage (a view
  // keeps its base alive) and a later op may write over the result.
  at::Tensor result = at::empty(shape, x.options());
  at::Tensor y = result.view({m, n});
  at::Tensor wt = w.t();
  // float32 rows of unit stride go to OpenBLAS (HostBlas.h says why).
  bool openBlas = x2.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat &&
                  x2.stride(1) == 1 && w.stride(1) == 1 &&
                  (!b.defined() || b.scalar_type() == at::kFloat) && hostBlasLoaded();
  int64_t colTiles = ceilDiv(n, kTileCols);
  int64_t perItemTiles = ceilDiv(perItem, kTileRows) * colTiles;
  forEachItem(true, items * perItemTiles, [&](int64_t tile) {
    int64_t item = tile / perItemTiles, inItem = tile % perItemTiles;
    int64_t r0 = item * perItem + inItem / colTiles * kTileRows;
    int64_t c0 = inItem % colTiles * kTileCols;
    int64_t rows = std::min(kTileRows, (item + 1) * perItem - r0);
    int64_t cols = std::min(kTileCols, n - c0);
    at::Tensor tileOut = y.narrow(0, r0, rows).narrow(1, c0, cols);
    if (openBlas) {
      float *out = y.data_ptr<float>() + r0 * n + c0;
      if (b.defined()) // the bias rows first, then C = A Bᵀ + C
        tileOut.copy_(b.narrow(0, c0, cols).unsqueeze(0).expand({rows, cols}));
      hostGemmNT(rows, cols, k, x2.data_ptr<float>() + r0 * x2.stride(0), x2.stride(0),
                 w.data_ptr<float>() + c0 * w.stride(0), w.stride(0), out, n, b.defined());
      return;
    }
    at::Tensor lhs = x2.narrow(0, r0, rows), rhs = wt.narrow(1, c0, cols);
    if (b.defined())
      at::addmm_out(tileOut, b.narrow(0, c0, cols), lhs, rhs);
    else
      at::mm_out(tileOut, lhs, rhs);
  });
  return result;
}
} // namespace

at::Tensor tiledLinear(const at::Tensor &x, const at::Tensor &w, const at::Tensor &b) {
  if (!x.is_cpu())
    return b.defined() ? at::linear(x, w, b) : at::linear(x, w);
  // The tiles restart at each batch element (dim 0), so a request's rows
  // meet the same tiles whether it runs alone or batched with others (its
  // guidance branches, dit.split): OpenBLAS computes a row with a kernel
  // that depends on the row's place in the tile, and so do its bits.
  return tiledProduct(x, x.dim() >= 2 ? x.size(0) : 1, w, b);
}

at::Tensor tiledLinearRows(const at::Tensor &rows, const at::Tensor &w,
                           const at::Tensor &b) {
  if (!rows.is_cpu())
    return b.defined() ? at::linear(rows, w, b) : at::linear(rows, w);
  return tiledProduct(rows, 1, w, b);
}

at::Tensor RowBlock::of(const at::Tensor &t) const {
  if (t.dim() == 3)
    return t.select(0, batch).narrow(0, row, rows);
  return t.reshape({-1, t.size(-1)}).narrow(0, row, rows);
}

at::Tensor RowBlock::batchOf(const at::Tensor &t) const { return t.select(0, batch); }

at::Tensor rowBlocks(at::IntArrayRef shape, const at::TensorOptions &options,
                     const std::function<void(const RowBlock &, at::Tensor &)> &fn,
                     at::Tensor into) {
  at::Tensor out = into.defined() ? into : at::empty(shape, options);
  int64_t width = shape.back();
  int64_t batches = shape.size() == 3 ? shape[0] : 1;
  int64_t rows = width ? out.numel() / width / batches : 0;
  int64_t blockRows = std::max<int64_t>(1, kBlockElements / std::max<int64_t>(1, width));
  bool cpu = options.device().is_cpu();
  if (!cpu)
    blockRows = std::max<int64_t>(1, rows);
  int64_t blocks = ceilDiv(rows, blockRows);
  forEachItem(cpu, batches * blocks, [&](int64_t i) {
    int64_t row = i % blocks * blockRows;
    RowBlock block{i / blocks, row, std::min(blockRows, rows - row)};
    at::Tensor o = block.of(out);
    fn(block, o);
  });
  return out;
}

at::Tensor keyMaskBias(const at::Tensor &mask, at::ScalarType dtype) {
  at::Tensor valid = mask.to(at::kFloat) > 0.5;
  // -1e30 is finite in float32 and bfloat16 alike (float32's lowest would
  // round to -inf in bfloat16), and it swamps any score: exp(-1e30 - max)
  // is exactly 0.
  at::Tensor zero = at::zeros({}, mask.options().dtype(dtype));
  at::Tensor masked = at::full({}, -1e30, mask.options().dtype(dtype));
  return at::where(valid, zero, masked).contiguous();
}

at::Tensor jointKeyBias(const at::Tensor &textBias, int64_t keys, bool textPrefix) {
  at::Tensor image = at::zeros({textBias.size(0), keys - textBias.size(1)}, textBias.options());
  return textPrefix ? at::cat({textBias, image}, 1) : at::cat({image, textBias}, 1);
}

at::Tensor tokenMean(const at::Tensor &x, const at::Tensor &mask) {
  at::Tensor wide = x.to(at::kFloat);
  if (!mask.defined())
    return wide.mean(1).to(x.scalar_type());
  at::Tensor m = mask.to(at::kFloat).unsqueeze(-1);
  return ((wide * m).sum(1) / m.sum(1)).to(x.scalar_type());
}

at::Tensor attentionPool(const at::Tensor &x, const at::Tensor &mask, int64_t heads,
                         const std::vector<at::Tensor> &p) {
  // [mean ; x] -> keys and values, one query from the mean per head.
  int64_t b = x.size(0), e = x.size(2), hd = e / heads;
  at::Tensor pooled = tokenMean(x, mask).unsqueeze(1);
  at::Tensor kv = tiledLinear(at::cat({pooled, x}, 1), p[0], p[1]);
  at::Tensor q = tiledLinear(pooled, p[2], p[3]);
  auto perHead = [&](const at::Tensor &t) {
    return t.reshape({b, t.size(1), heads, hd}).transpose(1, 2);
  };
  at::Tensor k = perHead(kv.narrow(-1, 0, e)), v = perHead(kv.narrow(-1, e, e));
  at::Tensor scores = at::matmul(perHead(q), k.transpose(-1, -2)) / std::sqrt(double(hd));
  if (mask.defined()) { // the mean is a key too, always valid
    int64_t keys = x.size(1) + 1;
    at::Tensor bias = jointKeyBias(keyMaskBias(mask, scores.scalar_type()), keys, false);
    scores = scores + bias.view({b, 1, 1, keys});
  }
  at::Tensor o = at::matmul(at::softmax(scores, -1), v);
  return tiledLinear(o.transpose(1, 2).reshape({b, e}), p[4], p[5]);
}

at::Tensor headAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                         int64_t heads, double scale, const at::Tensor &keyBias) {
  int64_t d = q.size(2) / heads;
  if (!q.is_cpu()) {
    // On a GPU: the device's fused attention (flash or memory-efficient,
    // as scaled_dot_product_attention picks for the dtype and shapes).
    int64_t batch = q.size(0);
    auto perHead = [&](const at::Tensor &t) {
      return t.view({batch, t.size(1), heads, d}).transpose(1, 2);
    };
    std::optional<at::Tensor> mask;
    if (keyBias.defined())
      mask = keyBias.dim() == 2 // [B, keys], or [B, queries, keys]
                 ? keyBias.to(q.scalar_type()).view({batch, 1, 1, keyBias.size(-1)})
                 : keyBias.to(q.scalar_type()).unsqueeze(1);
    at::Tensor o = at::scaled_dot_product_attention(perHead(q), perHead(k), perHead(v), mask,
                                                    /*dropout_p=*/0.0, /*is_causal=*/false,
                                                    scale);
    return o.transpose(1, 2).reshape(q.sizes());
  }
  // Scaling q (L x d) is cheaper than scaling the scores (L x L).
  at::Tensor qs = q * scale;
  at::Tensor out = at::empty(q.sizes(), q.options());
  HeadItems items(q.size(0), heads, q.size(1));
  forEachItem(q.is_cpu(), items.count, [&](int64_t i) {
    HeadItem item = items[i];
    at::Tensor scores = at::mm(slice(qs, item, d), slice(k, item, d, true).t());
    if (keyBias.defined())
      scores.add_(keyBias[item.batch]);
    // In place: the softmax kernel reads each element before it writes it.
    at::_softmax_out(scores, scores, -1, false);
    at::Tensor o = slice(out, item, d);
    at::mm_out(o, scores, slice(v, item, d, true));
  });
  return out;
}

OnlineAttention::OnlineAttention(const at::Tensor &q, int64_t heads, double scale)
    : q(q * scale), heads(heads) {}

void OnlineAttention::absorb(const at::Tensor &k, const at::Tensor &v,
                             const at::Tensor &keyBias) {
  int64_t batch = q.size(0), queries = q.size(1), d = q.size(2) / heads;
  bool first = !out.defined();
  if (first) {
    out = at::empty(q.sizes(), q.options());
    max = at::empty({batch, heads, queries, 1}, q.options());
    sum = at::empty({batch, heads, queries, 1}, q.options());
  }
  HeadItems items(batch, heads, queries);
  forEachItem(q.is_cpu(), items.count, [&](int64_t i) {
    HeadItem item = items[i];
    at::Tensor scores = at::mm(slice(q, item, d), slice(k, item, d, true).t());
    if (keyBias.defined())
      scores.add_(keyBias[item.batch]);
    at::Tensor m = max[item.batch][item.head].narrow(0, item.row, item.rows);
    at::Tensor l = sum[item.batch][item.head].narrow(0, item.row, item.rows);
    at::Tensor o = slice(out, item, d);
    at::Tensor blockMax = scores.amax(-1, true);
    if (first) {
      m.copy_(blockMax);
      scores.sub_(m).exp_();
      l.copy_(scores.sum(-1, true));
      at::mm_out(o, scores, slice(v, item, d, true));
      return;
    }
    // Rescale what was absorbed so far to the new running max.
    at::Tensor newMax = at::maximum(m, blockMax);
    at::Tensor oldScale = (m - newMax).exp_();
    scores.sub_(newMax).exp_();
    l.mul_(oldScale).add_(scores.sum(-1, true));
    o.mul_(oldScale).addmm_(scores, slice(v, item, d, true));
    m.copy_(newMax);
  });
}

at::Tensor OnlineAttention::result() const {
  int64_t batch = q.size(0), queries = q.size(1);
  return (out.view({batch, queries, heads, -1}) / sum.permute({0, 2, 1, 3}))
      .reshape(q.sizes());
}

} // namespace ditc::runtime
