//===- CudaGemmTest.cpp - the cuBLASLt GEMM entry points ------------------===//
//
// _mlir_ciface_tfm_cuda_sgemm(_batched) take row-major memref descriptors and
// call cuBLASLt, which is column-major, with the operands swapped. Checked
// here against a naive row-major GEMM for every transpose combination,
// padded row strides, offsets and batches. cuBLASLt is the CPU stand-in of
// test/MockCuda (it implements cuBLASLt's documented semantics), selected
// by $TFM_CUBLASLT as test/Unit/lit.cfg.py sets it; without it the tests
// skip.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/CudaRuntime.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" void _mlir_ciface_tfm_cuda_sgemm(void *, void *, void *, int32_t,
                                            int32_t);
extern "C" void _mlir_ciface_tfm_cuda_sgemm_batched(void *, void *, void *,
                                                    int32_t, int32_t);

using namespace mlir::tfm;

namespace {
template <int Rank> struct Desc {
  float *allocated, *aligned;
  int64_t offset, sizes[Rank], strides[Rank];
};

/// A batch of row-major [rows, cols] matrices with row stride `ld` >= cols,
/// starting `offset` elements into its buffer.
struct Matrix {
  int64_t batch, rows, cols, ld, offset;
  std::vector<float> buffer;
  Matrix(int64_t batch, int64_t rows, int64_t cols, int64_t pad, int64_t offset,
         std::mt19937 &rng)
      : batch(batch), rows(rows), cols(cols), ld(cols + pad), offset(offset),
        buffer(offset + batch * rows * (cols + pad)) {
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float &v : buffer)
      v = dist(rng);
  }
  float at(int64_t b, int64_t r, int64_t c) const {
    return buffer[offset + (b * rows + r) * ld + c];
  }
  Desc<2> desc2() {
    return {buffer.data(), buffer.data(), offset, {rows, cols}, {ld, 1}};
  }
  Desc<3> desc3() {
    return {buffer.data(),
            buffer.data(),
            offset,
            {batch, rows, cols},
            {rows * ld, ld, 1}};
  }
};

class CudaGemmTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cuda::builtWithCuda() || !std::getenv("TFM_CUBLASLT"))
      GTEST_SKIP() << "no CUDA headers at build time or no cuBLASLt stand-in";
    llvm::Error e = cuda::initialize(0, size_t(64) << 20);
    ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  }

  /// C += op(A) op(B) through the runtime, against the naive product.
  void check(bool transA, bool transB, int64_t batch) {
    std::mt19937 rng(1234 + 4 * transA + 2 * transB + batch);
    const int64_t m = 5, n = 7, k = 3;
    Matrix a(batch, transA ? k : m, transA ? m : k, /*pad=*/2, /*offset=*/3,
             rng);
    Matrix b(batch, transB ? n : k, transB ? k : n, 1, 0, rng);
    Matrix c(batch, m, n, 3, 5, rng);
    Matrix expected = c;
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = expected.at(p, i, j);
          for (int64_t q = 0; q < k; ++q)
            acc += double(transA ? a.at(p, q, i) : a.at(p, i, q)) *
                   (transB ? b.at(p, j, q) : b.at(p, q, j));
          expected.buffer[expected.offset + (p * m + i) * expected.ld + j] =
              float(acc);
        }
    if (batch == 1) {
      auto da = a.desc2(), db = b.desc2(), dc = c.desc2();
      _mlir_ciface_tfm_cuda_sgemm(&da, &db, &dc, transA, transB);
    } else {
      auto da = a.desc3(), db = b.desc3(), dc = c.desc3();
      _mlir_ciface_tfm_cuda_sgemm_batched(&da, &db, &dc, transA, transB);
    }
    llvm::Error e = cuda::takeError();
    ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
    for (size_t i = 0; i < c.buffer.size(); ++i)
      ASSERT_NEAR(c.buffer[i], expected.buffer[i], 1e-5) << "element " << i;
  }
};
} // namespace

TEST_F(CudaGemmTest, Plain) { check(false, false, 1); }
TEST_F(CudaGemmTest, TransposedA) { check(true, false, 1); }
TEST_F(CudaGemmTest, TransposedB) { check(false, true, 1); }
TEST_F(CudaGemmTest, TransposedBoth) { check(true, true, 1); }
TEST_F(CudaGemmTest, Batched) { check(false, true, 4); }
TEST_F(CudaGemmTest, BatchedTransposedA) { check(true, false, 3); }

TEST_F(CudaGemmTest, ColumnStridedOperandIsAnError) {
  std::mt19937 rng(7);
  Matrix a(1, 4, 4, 0, 0, rng), b(1, 4, 4, 0, 0, rng), c(1, 4, 4, 0, 0, rng);
  auto da = a.desc2(), db = b.desc2(), dc = c.desc2();
  da.strides[1] = 2; // every other column: cuBLASLt cannot read it
  da.sizes[1] = 2;
  db.sizes[0] = 2;
  _mlir_ciface_tfm_cuda_sgemm(&da, &db, &dc, 0, 0);
  llvm::Error e = cuda::takeError();
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("strides [4, 2]"),
            std::string::npos);
}

// A transposed view (contiguous columns) is passed to cuBLASLt as it is
// stored, with its transpose flag flipped.
TEST_F(CudaGemmTest, ColumnContiguousOperand) {
  std::mt19937 rng(11);
  const int64_t m = 5, n = 4, k = 3;
  Matrix xt(1, k, m, /*pad=*/1, 0, rng); // A = xt^T, stored column by column
  Matrix b(1, k, n, 0, 0, rng), c(1, m, n, 0, 0, rng);
  Matrix expected = c;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = expected.at(0, i, j);
      for (int64_t q = 0; q < k; ++q)
        acc += double(xt.at(0, q, i)) * b.at(0, q, j);
      expected.buffer[i * n + j] = float(acc);
    }
  Desc<2> da = {xt.buffer.data(), xt.buffer.data(), 0, {m, k}, {1, xt.ld}};
  auto db = b.desc2(), dc = c.desc2();
  _mlir_ciface_tfm_cuda_sgemm(&da, &db, &dc, 0, 0);
  llvm::Error e = cuda::takeError();
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  for (size_t i = 0; i < c.buffer.size(); ++i)
    ASSERT_NEAR(c.buffer[i], expected.buffer[i], 1e-5) << "element " << i;
}

TEST_F(CudaGemmTest, ArenaReusesFreedMemory) {
  size_t before = cuda::arenaBytesInUse();
  void *x = cuda::arenaAllocate(1000), *y = cuda::arenaAllocate(5000);
  ASSERT_NE(x, nullptr);
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x) % 256, 0u);
  EXPECT_EQ(cuda::arenaBytesInUse(), before + 1024 + 5120);
  cuda::arenaFree(x);
  cuda::arenaFree(y);
  EXPECT_EQ(cuda::arenaBytesInUse(), before);
  // Coalesced: one block as large as both fits where they were.
  void *z = cuda::arenaAllocate(6000);
  EXPECT_EQ(z, x);
  cuda::arenaFree(z);
  EXPECT_FALSE(bool(cuda::takeError()));
}
