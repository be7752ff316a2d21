//===- CpuBlasTest.cpp - the GEMM entry points compiled CPU code calls ----===//
//
// _mlir_ciface_tfm_rt_sgemm accumulates into C; the *_overwrite variant
// (called where the pass dropped a zero fill) must not read C at all. Both
// against a naive f64 loop, on contiguous rows (OpenBLAS) and on a
// column-strided C (the runtime's own loop).
//
//===----------------------------------------------------------------------===//

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

/// MLIR's descriptor of a rank-2 memref, as compiled code passes it.
using Memref2D = StridedMemRefType<float, 2>;

namespace {
Memref2D view(std::vector<float> &v, int64_t rows, int64_t cols,
              int64_t rowStride, int64_t colStride) {
  return {v.data(), v.data(), 0, {rows, cols}, {rowStride, colStride}};
}
} // namespace

extern "C" void _mlir_ciface_tfm_rt_sgemm(Memref2D *, Memref2D *, Memref2D *,
                                          int32_t, int32_t);
extern "C" void _mlir_ciface_tfm_rt_sgemm_overwrite(Memref2D *, Memref2D *,
                                                    Memref2D *, int32_t,
                                                    int32_t);

namespace {

/// C [m, n] (column stride `cs`) = initial + A [m, k] · Bᵀ ([n, k]), by the
/// entry point `overwrite` selects; checked against f64 sums.
void check(bool overwrite, int64_t cs) {
  const int64_t m = 37, n = 29, k = 53;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), b(n * k), c(m * n * cs);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  // The overwrite GEMM must not read C: NaN there would spread.
  float initial = overwrite ? std::numeric_limits<float>::quiet_NaN() : 0.25f;
  for (float &x : c)
    x = initial;
  Memref2D av = view(a, m, k, k, 1), bv = view(b, n, k, k, 1),
           cv = view(c, m, n, n * cs, cs);
  if (overwrite)
    _mlir_ciface_tfm_rt_sgemm_overwrite(&av, &bv, &cv, 0, 1);
  else
    _mlir_ciface_tfm_rt_sgemm(&av, &bv, &cv, 0, 1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = overwrite ? 0.0 : initial;
      for (int64_t p = 0; p < k; ++p)
        want += double(a[i * k + p]) * b[j * k + p];
      ASSERT_NEAR(c[(i * n + j) * cs], want, 1e-4) << i << ", " << j;
    }
}

} // namespace

TEST(CpuBlasTest, AccumulatesIntoC) { check(false, 1); }
TEST(CpuBlasTest, OverwriteDoesNotReadC) { check(true, 1); }
TEST(CpuBlasTest, StridedCAccumulates) { check(false, 2); }
TEST(CpuBlasTest, StridedCOverwriteDoesNotReadC) { check(true, 2); }
