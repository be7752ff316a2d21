//===- MockCublasLt.cpp - a CPU stand-in for libcublasLt (tests only) -----===//
//
// Implements the cuBLASLt calls of lib/Runtime/Cuda/CublasLtGemm.cpp by
// their documented semantics (column-major layouts with leading dimension,
// op() applied to the stored matrix, strided batches, D = alpha op(A) op(B)
// + beta C), computed with a plain loop on host memory. The runtime's
// row-major-to-column-major mapping is thereby checked against a naive
// row-major GEMM on a machine without a GPU (unittests/CudaGemmTest.cpp).
//
//===----------------------------------------------------------------------===//

#include <cublasLt.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {
struct Desc {
  cublasOperation_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
};
struct Layout {
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t batchStride = 0;
};
} // namespace

extern "C" {
cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) {
  static int handle;
  *h = reinterpret_cast<cublasLtHandle_t>(&handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (scale != CUDA_R_32F || (compute != CUBLAS_COMPUTE_32F &&
                              compute != CUBLAS_COMPUTE_32F_FAST_TF32))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  *d = reinterpret_cast<cublasLtMatmulDesc_t>(new Desc());
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  delete reinterpret_cast<Desc *>(d);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                               cublasLtMatmulDescAttributes_t attr,
                               const void *buf, size_t size) {
  auto *desc = reinterpret_cast<Desc *>(d);
  if (size != sizeof(cublasOperation_t))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (attr == CUBLASLT_MATMUL_DESC_TRANSA)
    std::memcpy(&desc->transA, buf, size);
  else if (attr == CUBLASLT_MATMUL_DESC_TRANSB)
    std::memcpy(&desc->transB, buf, size);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (type != CUDA_R_32F || ld < int64_t(rows) || ld < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  *l = reinterpret_cast<cublasLtMatrixLayout_t>(new Layout{rows, cols, ld});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  delete reinterpret_cast<Layout *>(l);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                 cublasLtMatrixLayoutAttribute_t attr,
                                 const void *buf, size_t size) {
  auto *layout = reinterpret_cast<Layout *>(l);
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && size == sizeof(int32_t))
    std::memcpy(&layout->batch, buf, size);
  else if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET &&
           size == sizeof(int64_t))
    std::memcpy(&layout->batchStride, buf, size);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
  static int preference;
  *p = reinterpret_cast<cublasLtMatmulPreference_t>(&preference);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                     cublasLtMatmulPreferenceAttributes_t attr,
                                     const void *buf, size_t size) {
  if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
    return size == sizeof(uint64_t) ? CUBLAS_STATUS_SUCCESS
                                    : CUBLAS_STATUS_INVALID_VALUE;
  if (size != sizeof(uint32_t))
    return CUBLAS_STATUS_INVALID_VALUE;
  uint32_t alignment;
  std::memcpy(&alignment, buf, size);
  // A power of two, at least the element size.
  return alignment >= 4 && (alignment & (alignment - 1)) == 0
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
    cublasLtMatmulPreference_t, int requested,
    cublasLtMatmulHeuristicResult_t *results, int *count) {
  if (requested < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  std::memset(results, 0, sizeof(*results));
  results->state = CUBLAS_STATUS_SUCCESS;
  *count = 1;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t d, const void *alpha,
               const void *A, cublasLtMatrixLayout_t la, const void *B,
               cublasLtMatrixLayout_t lb, const void *beta, const void *C,
               cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
               const cublasLtMatmulAlgo_t *algo, void *, size_t, cudaStream_t) {
  if (!algo)
    return CUBLAS_STATUS_INVALID_VALUE; // the runtime always picks one
  auto *desc = reinterpret_cast<Desc *>(d);
  auto *a = reinterpret_cast<Layout *>(la), *b = reinterpret_cast<Layout *>(lb);
  auto *c = reinterpret_cast<Layout *>(lc),
       *dl = reinterpret_cast<Layout *>(ld);
  bool ta = desc->transA == CUBLAS_OP_T, tb = desc->transB == CUBLAS_OP_T;
  uint64_t m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols;
  uint64_t kb = tb ? b->cols : b->rows, n = tb ? b->rows : b->cols;
  if (k != kb || c->rows != m || c->cols != n || dl->rows != m ||
      dl->cols != n || a->batch != c->batch || b->batch != c->batch || C != D) {
    std::fprintf(stderr,
                 "mock-cublasLt: inconsistent GEMM m=%llu n=%llu k=%llu/%llu\n",
                 (unsigned long long)m, (unsigned long long)n,
                 (unsigned long long)k, (unsigned long long)kb);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  float al = *static_cast<const float *>(alpha),
        be = *static_cast<const float *>(beta);
  for (int32_t p = 0; p < c->batch; ++p) {
    const float *pa = static_cast<const float *>(A) + p * a->batchStride;
    const float *pb = static_cast<const float *>(B) + p * b->batchStride;
    float *pd = static_cast<float *>(D) + p * dl->batchStride;
    for (uint64_t i = 0; i < m; ++i)
      for (uint64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (uint64_t q = 0; q < k; ++q) {
          float av = ta ? pa[q + i * a->ld] : pa[i + q * a->ld];
          float bv = tb ? pb[j + q * b->ld] : pb[q + j * b->ld];
          acc += double(av) * bv;
        }
        float &out = pd[i + j * dl->ld];
        out = float(al * acc + be * out);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
} // extern "C"
