//===- RowChunks.cpp - How an overlapped all_reduce is cut into rows ------===//

#include "ditc/Support/RowChunks.h"

#include <algorithm>

namespace ditc {

/// The rows of each chunk but an element's last.
static int64_t rowsPerChunk(int64_t items, int64_t rowsPerItem, int64_t chunks) {
  int64_t tiles = (rowsPerItem + kGemmTileRows - 1) / kGemmTileRows;
  int64_t pieces = std::max<int64_t>(1, std::min(chunks / std::max<int64_t>(1, items), tiles));
  return std::max<int64_t>(1, (tiles + pieces - 1) / pieces * kGemmTileRows);
}

std::vector<std::pair<int64_t, int64_t>> tileRowChunks(int64_t items, int64_t rowsPerItem,
                                                       int64_t chunks) {
  int64_t perChunk = rowsPerChunk(items, rowsPerItem, chunks);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t item = 0; item < items; ++item)
    for (int64_t first = 0; first < rowsPerItem; first += perChunk)
      out.emplace_back(item * rowsPerItem + first, std::min(perChunk, rowsPerItem - first));
  return out;
}

RowCut rowCutOf(const std::vector<int64_t> &shape) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    rows *= shape[d];
  RowCut cut;
  cut.items = shape.size() >= 2 ? shape[0] : 1;
  cut.rowsPerItem = cut.items > 0 ? rows / cut.items : 0;
  return cut;
}

int64_t tileRowChunkCount(int64_t items, int64_t rowsPerItem, int64_t chunks) {
  if (items <= 0 || rowsPerItem <= 0)
    return 0;
  int64_t perChunk = rowsPerChunk(items, rowsPerItem, chunks);
  return items * ((rowsPerItem + perChunk - 1) / perChunk);
}

} // namespace ditc
