//===- RowChunksTest.cpp - the row chunks of an overlapped all_reduce -----===//
//
// The executor cuts a row-parallel linear's all_reduce by tileRowChunks and
// the cost model counts the chunks by tileRowChunkCount: the ranges cover
// every row once, in order, start on a GEMM tile of their element, and
// number what the count says.
//
//===----------------------------------------------------------------------===//
#include "ditc/Support/RowChunks.h"

#include <gtest/gtest.h>

using namespace ditc;

TEST(RowChunks, CoverEveryRowOnTileBoundariesAndMatchTheirCount) {
  for (int64_t items : {0, 1, 2, 3, 8})
    for (int64_t rows : {0, 1, 255, 256, 257, 512, 1000, 32760})
      for (int64_t chunks : {1, 2, 3, 4, 16}) {
        auto ranges = tileRowChunks(items, rows, chunks);
        SCOPED_TRACE(testing::Message() << items << " x " << rows << " rows, "
                                        << chunks << " chunks");
        EXPECT_EQ(int64_t(ranges.size()), tileRowChunkCount(items, rows, chunks));
        int64_t next = 0;
        for (auto [first, count] : ranges) {
          EXPECT_EQ(first, next);
          EXPECT_GT(count, 0);
          EXPECT_EQ((first % rows) % kGemmTileRows, 0);
          EXPECT_LE(first % rows + count, rows); // within its element
          next = first + count;
        }
        EXPECT_EQ(next, items * rows);
        // At most max(1, chunks / items) per element.
        if (items > 0)
          EXPECT_LE(int64_t(ranges.size()),
                    items * std::max<int64_t>(1, chunks / items));
      }
}

// Every dimension but the last is rows; the first is the batch elements.
TEST(RowChunks, ATensorsCutIsItsFirstDimensionAndItsRows) {
  RowCut cut = rowCutOf({2, 32760, 64});
  EXPECT_EQ(cut.items, 2);
  EXPECT_EQ(cut.rowsPerItem, 32760);
  cut = rowCutOf({3, 4, 5, 8});
  EXPECT_EQ(cut.items, 3);
  EXPECT_EQ(cut.rowsPerItem, 20);
  cut = rowCutOf({64}); // one row of 64
  EXPECT_EQ(cut.items, 1);
  EXPECT_EQ(cut.rowsPerItem, 1);
  cut = rowCutOf({0, 7, 8}); // no elements, no rows
  EXPECT_EQ(cut.items, 0);
  EXPECT_EQ(cut.rowsPerItem, 0);
}
