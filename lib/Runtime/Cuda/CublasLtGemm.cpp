//===- CublasLtGemm.cpp - f32 GEMMs of compiled steps through cuBLASLt ----===//
//
// convert-linalg-matmul-to-blas{prefix=tfm_cuda} turns every f32 GEMM into
//
//   _mlir_ciface_tfm_cuda_sgemm(A, B, C, transA, transB)   C += op(A)·op(B)
//   _mlir_ciface_tfm_cuda_sgemm_batched(...)               per batch index
//
// on row-major memref descriptors. cuBLASLt is column-major: a row-major
// r×c matrix with row stride ld is the column-major c×r matrix with leading
// dimension ld, so C^T = op(B)^T·op(A)^T is computed with the operands
// swapped and nothing transposed in memory. Batches use cuBLASLt's strided
// batch layout. Accumulation is exact f32 (CUBLAS_COMPUTE_32F, no TF32)
// unless TFM_CUDA_TF32=1.
//
//===----------------------------------------------------------------------===//

#include "CudaInternal.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace mlir::tfm::cuda::detail;

namespace {
template <int Rank> struct Memref {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

/// One operand as cuBLASLt sees it (column-major).
struct Operand {
  const float *data;
  int64_t rows, cols, ld, batchStride;
};

/// Row-major [r, c] (last two dims of the descriptor) as column-major [c, r].
template <int Rank> bool columnMajorView(const Memref<Rank> &m, const char *name, Operand &out) {
  int64_t r = m.sizes[Rank - 2], c = m.sizes[Rank - 1];
  int64_t rowStride = m.strides[Rank - 2], colStride = m.strides[Rank - 1];
  if (colStride != 1 && c > 1) {
    fail(llvm::formatv("tfm_cuda_sgemm: operand {0} has column stride {1}; cuBLASLt needs "
                       "contiguous rows",
                       name, colStride));
    return false;
  }
  out.data = m.aligned + m.offset;
  out.rows = c;
  out.cols = r;
  out.ld = r <= 1 ? std::max<int64_t>(c, 1) : rowStride;
  out.batchStride = Rank == 3 ? m.strides[0] : 0;
  return true;
}

bool useTf32() {
  const char *v = std::getenv("TFM_CUDA_TF32");
  return v && std::strcmp(v, "1") == 0;
}

/// C += op(A)·op(B), row-major, `batch` times with the given strides.
void gemm(const Operand &a, const Operand &b, const Operand &c, bool transA, bool transB,
          int64_t m, int64_t n, int64_t k, int64_t batch) {
  if (!state().ready || !state().stickyError.empty() || m == 0 || n == 0 || batch == 0)
    return;
  Api &api = ::api();
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  auto ok = [](cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS)
      return true;
    fail(llvm::formatv("{0} failed (cublasStatus {1})", what, int(s)));
    return false;
  };
  // Column-major problem: C^T[n, m] += op(B)^T[n, k] · op(A)^T[k, m].
  cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  bool good =
      ok(api.cublasLtMatmulDescCreate(&desc,
                                      useTf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                      CUDA_R_32F),
         "cublasLtMatmulDescCreate") &&
      ok(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst,
                                            sizeof(opFirst)),
         "set TRANSA") &&
      ok(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond,
                                            sizeof(opSecond)),
         "set TRANSB") &&
      ok(api.cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, b.rows, b.cols, b.ld), "layout B") &&
      ok(api.cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, a.rows, a.cols, a.ld), "layout A") &&
      ok(api.cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, c.rows, c.cols, c.ld), "layout C");
  if (good && batch > 1) {
    int32_t count = int32_t(batch);
    struct {
      cublasLtMatrixLayout_t layout;
      int64_t stride;
    } layouts[] = {{la, b.batchStride}, {lb, a.batchStride}, {lc, c.batchStride}};
    for (auto &l : layouts)
      good = good &&
             ok(api.cublasLtMatrixLayoutSetAttribute(l.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                     &count, sizeof(count)),
                "set BATCH_COUNT") &&
             ok(api.cublasLtMatrixLayoutSetAttribute(
                    l.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &l.stride,
                    sizeof(l.stride)),
                "set STRIDED_BATCH_OFFSET");
  }
  (void)k;
  float alpha = 1.0f, beta = 1.0f;
  if (good)
    ok(api.cublasLtMatmul(state().lt, desc, &alpha, b.data, la, a.data, lb, &beta, c.data, lc,
                          const_cast<float *>(c.data), lc, /*algo=*/nullptr,
                          reinterpret_cast<void *>(state().ltWorkspace),
                          state().ltWorkspaceBytes, state().stream),
       "cublasLtMatmul");
  if (la)
    api.cublasLtMatrixLayoutDestroy(la);
  if (lb)
    api.cublasLtMatrixLayoutDestroy(lb);
  if (lc)
    api.cublasLtMatrixLayoutDestroy(lc);
  if (desc)
    api.cublasLtMatmulDescDestroy(desc);
  // Host code may read results next (managed memory): keep launches ordered.
  check(api.cuStreamSynchronize(state().stream), "cuStreamSynchronize (after GEMM)");
}


/// The entry points: the last two dimensions are the matrices, a leading
/// third one the batch.
template <int Rank>
void sgemmEntry(Memref<Rank> *a, Memref<Rank> *b, Memref<Rank> *c, bool transA, bool transB) {
  Operand oa, ob, oc;
  if (!columnMajorView(*a, "A", oa) || !columnMajorView(*b, "B", ob) ||
      !columnMajorView(*c, "C", oc))
    return;
  int64_t m = c->sizes[Rank - 2], n = c->sizes[Rank - 1];
  int64_t k = transA ? a->sizes[Rank - 2] : a->sizes[Rank - 1];
  gemm(oa, ob, oc, transA, transB, m, n, k, Rank == 3 ? c->sizes[0] : 1);
}
} // namespace

extern "C" void _mlir_ciface_tfm_cuda_sgemm(Memref<2> *a, Memref<2> *b, Memref<2> *c,
                                            int32_t transA, int32_t transB) {
  sgemmEntry(a, b, c, transA, transB);
}

extern "C" void _mlir_ciface_tfm_cuda_sgemm_batched(Memref<3> *a, Memref<3> *b, Memref<3> *c,
                                                    int32_t transA, int32_t transB) {
  sgemmEntry(a, b, c, transA, transB);
}
