//===- BlasKernelsTest.cpp - OpenBLAS's kernels chosen by CPU feature -----===//
//
// On a CPU model its release does not know, OpenBLAS runs its generic SSE3
// kernels; selectBlasKernels() switches it to those the instruction set
// allows. Checked: on a host with AVX2 and FMA the generic kernels are no
// longer in use (unless the user chose them with OPENBLAS_CORETYPE), and the
// kernels in use still compute GEMMs a naive loop agrees with.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/BlasKernels.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include "gtest/gtest.h"

#include <cblas.h>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

using namespace mlir::tfm;

TEST(BlasKernelsTest, GenericKernelsAreReplacedWhereTheCpuRunsBetter) {
  std::string chosen = rt::selectBlasKernels();
  EXPECT_EQ(chosen, openblas_get_corename());
  EXPECT_EQ(rt::selectBlasKernels(), chosen) << "not idempotent";
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (std::getenv("OPENBLAS_CORETYPE") || !features.lookup("avx2") ||
      !features.lookup("fma"))
    GTEST_SKIP() << "the user chose the kernels, or the CPU has no AVX2/FMA";
  EXPECT_NE(chosen, "Prescott");
}

TEST(BlasKernelsTest, ChosenKernelsComputeTheSameGemm) {
  rt::selectBlasKernels();
  // Sizes past one kernel block and not multiples of the register tiles.
  const int m = 97, n = 131, k = 259;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), b(n * k), c(m * n, 0.5f), want(m * n);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0.5;
      for (int p = 0; p < k; ++p)
        acc += double(a[i * k + p]) * b[j * k + p];
      want[i * n + j] = float(acc);
    }
  // C += A·Bᵀ, row-major: the shape of a linear layer's forward.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a.data(),
              k, b.data(), k, 1.0f, c.data(), n);
  for (int i = 0; i < m * n; ++i)
    ASSERT_NEAR(c[i], want[i], 1e-4f * std::sqrt(float(k))) << "at " << i;
}
