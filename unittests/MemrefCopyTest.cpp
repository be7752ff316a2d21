//===- MemrefCopyTest.cpp - the runtime's strided memref copy -------------===//
//
// tfm_rt_memref_copy replaces MLIR's memrefCopy for JIT'd CPU code. Checked
// against an element-by-element copy written here, for layouts where both
// sides are dense, where rows are padded on one side, where only one side
// is transposed, and for rank 0 and empty shapes.
//
//===----------------------------------------------------------------------===//

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <numeric>
#include <vector>

extern "C" void tfm_rt_memref_copy(int64_t elementSize,
                                   UnrankedMemRefType<char> *source,
                                   UnrankedMemRefType<char> *target);

namespace {
/// A ranked descriptor over float storage, as JIT'd code lays it out.
struct Desc {
  float *allocated, *aligned;
  int64_t offset;
  int64_t sizesAndStrides[8];
};

UnrankedMemRefType<char> unranked(Desc &d, int64_t rank) { return {rank, &d}; }

/// Copies `sizes` from (src, srcStrides, srcOffset) to a fresh target with
/// (dstStrides, dstOffset) through the runtime, and checks each element
/// (and that nothing outside the target's elements was written).
void check(std::vector<int64_t> sizes, std::vector<int64_t> srcStrides,
           int64_t srcOffset, std::vector<int64_t> dstStrides,
           int64_t dstOffset) {
  int64_t rank = sizes.size();
  auto extent = [&](const std::vector<int64_t> &strides, int64_t offset) {
    int64_t last = offset;
    for (int64_t d = 0; d < rank; ++d)
      last += (sizes[d] - 1) * strides[d];
    return last + 1;
  };
  std::vector<float> src(extent(srcStrides, srcOffset));
  std::iota(src.begin(), src.end(), 1.0f);
  std::vector<float> dst(extent(dstStrides, dstOffset), -1.0f);
  Desc s{src.data(), src.data(), srcOffset, {}};
  Desc t{dst.data(), dst.data(), dstOffset, {}};
  for (int64_t d = 0; d < rank; ++d) {
    s.sizesAndStrides[d] = t.sizesAndStrides[d] = sizes[d];
    s.sizesAndStrides[rank + d] = srcStrides[d];
    t.sizesAndStrides[rank + d] = dstStrides[d];
  }
  UnrankedMemRefType<char> us = unranked(s, rank), ut = unranked(t, rank);
  tfm_rt_memref_copy(sizeof(float), &us, &ut);

  std::vector<float> want(dst.size(), -1.0f);
  int64_t count = 1;
  for (int64_t n : sizes)
    count *= n;
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, at = srcOffset, to = dstOffset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      at += rest % sizes[d] * srcStrides[d];
      to += rest % sizes[d] * dstStrides[d];
      rest /= sizes[d];
    }
    want[to] = src[at];
  }
  EXPECT_EQ(dst, want);
}
} // namespace

TEST(MemrefCopyTest, DenseBothSides) {
  check({3, 4, 5}, {20, 5, 1}, 0, {20, 5, 1}, 0);
}

TEST(MemrefCopyTest, PaddedRowsAndOffsets) {
  // A [2, 3, 4] slice of a [2, 3, 7] buffer into a stacked [*, 2, 3, 4] one.
  check({2, 3, 4}, {21, 7, 1}, 2, {12, 4, 1}, 24);
  // Dense innermost pair on one side only.
  check({2, 3, 4}, {12, 4, 1}, 0, {24, 8, 1}, 3);
}

TEST(MemrefCopyTest, TransposedTarget) {
  check({3, 5}, {5, 1}, 0, {1, 3}, 0);
  check({2, 3, 5}, {15, 5, 1}, 1, {15, 1, 3}, 0);
}

TEST(MemrefCopyTest, RankZeroAndEmpty) {
  check({}, {}, 3, {}, 1);
  check({0, 4}, {4, 1}, 0, {4, 1}, 0);
  check({3, 1, 4}, {4, 9, 1}, 0, {4, 4, 1}, 0);
}
