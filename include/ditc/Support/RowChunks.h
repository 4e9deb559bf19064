//===- RowChunks.h - How an overlapped all_reduce is cut into rows -*- C++ -*-===//
//
// The runtime computes a row-parallel linear whose plan op carries
// overlap_row_chunks in row chunks and all-reduces each chunk on its own;
// the cost model prices those chunks. Both read the cut from here, so the
// model counts the messages the executor sends.
//
//===----------------------------------------------------------------------===//

#ifndef DITC_SUPPORT_ROWCHUNKS_H
#define DITC_SUPPORT_ROWCHUNKS_H

#include <cstdint>
#include <utility>
#include <vector>

namespace ditc {

/// The row tile of the runtime's GEMM products (runtime/lib/Exec/Kernels.cpp): a
/// tile's bits do not depend on the rows outside it.
constexpr int64_t kGemmTileRows = 256;

/// Consecutive row ranges (first, count) covering `items` batch elements of
/// `rowsPerItem` rows each: at most max(1, chunks / items) per element, each
/// starting at a row tile of its element and a whole number of tiles but
/// the element's last, so the product of a range has the bits of those rows
/// of the whole product (the runtime's tiles restart at each element). The
/// executor and the collective tracer cut an overlapped all_reduce by it,
/// and the cost model counts its messages by it.
std::vector<std::pair<int64_t, int64_t>> tileRowChunks(int64_t items, int64_t rowsPerItem,
                                                       int64_t chunks);

/// The batch elements and rows per element that tileRowChunks cuts for a
/// tensor of `shape`: the executor flattens every dimension but the last
/// into rows, and an element is an index of the first (one element below
/// rank 2). No rows where there are no elements.
struct RowCut {
  int64_t items = 1;
  int64_t rowsPerItem = 0;
};
RowCut rowCutOf(const std::vector<int64_t> &shape);

/// tileRowChunks(items, rowsPerItem, chunks).size(), without the ranges:
/// the cost model counts chunks for every configuration it prices.
int64_t tileRowChunkCount(int64_t items, int64_t rowsPerItem, int64_t chunks);

} // namespace ditc

#endif // DITC_SUPPORT_ROWCHUNKS_H
