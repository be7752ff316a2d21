//===- CublasLtGemm.cpp - f32 GEMMs of compiled steps through cuBLASLt ----===//
//
// tfm-linalg-matmul-to-blas{prefix=tfm_cuda} turns every f32 GEMM into
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

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

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
  /// The operand's columns are contiguous: it is already column-major, so
  /// its op() flag flips.
  bool flipped = false;
};

/// Row-major [r, c] (last two dims of the descriptor) as column-major [c, r]
/// when rows are contiguous; a column-contiguous operand (a transposed
/// view) is the column-major [r, c] itself, with its transpose flag flipped.
template <int Rank>
bool columnMajorView(const Memref<Rank> &m, const char *name, Operand &out,
                     bool canFlip) {
  int64_t r = m.sizes[Rank - 2], c = m.sizes[Rank - 1];
  int64_t rowStride = m.strides[Rank - 2], colStride = m.strides[Rank - 1];
  out.data = m.aligned + m.offset;
  out.batchStride = Rank == 3 ? m.strides[0] : 0;
  if (colStride == 1 || c <= 1) {
    out.rows = c;
    out.cols = r;
    out.ld = r <= 1 ? std::max<int64_t>(c, 1) : rowStride;
    return true;
  }
  if (canFlip && rowStride == 1) {
    out.rows = r;
    out.cols = c;
    out.ld = colStride;
    out.flipped = true;
    return true;
  }
  fail(llvm::formatv(
      "tfm_cuda_sgemm: operand {0} has strides [{1}, {2}]; cuBLASLt needs "
      "contiguous rows or columns{3}",
      name, rowStride, colStride, canFlip ? "" : " (rows, for the result)"));
  return false;
}

/// The largest power of two (up to 256) dividing the operand's address and,
/// when batched, its batch stride in bytes.
uint32_t alignmentOf(const Operand &x, int64_t batch) {
  uint64_t bits = reinterpret_cast<uintptr_t>(x.data) | 256;
  if (batch > 1)
    bits |= uint64_t(x.batchStride) * sizeof(float);
  return uint32_t(bits & -bits);
}

bool useTf32() {
  static const bool tf32 = [] {
    const char *v = std::getenv("TFM_CUDA_TF32");
    return v && std::strcmp(v, "1") == 0;
  }();
  return tf32;
}

/// The heuristic's choice per problem (operations, shapes, leading
/// dimensions, batch and strides, alignments): a step runs the same few
/// GEMM shapes once per layer, so the query runs once per shape.
using AlgoKey = std::array<int64_t, 20>;
std::map<AlgoKey, cublasLtMatmulAlgo_t> &algoCache() {
  static std::map<AlgoKey, cublasLtMatmulAlgo_t> cache;
  return cache;
}

/// C += op(A)·op(B), row-major, `batch` times with the given strides.
void gemm(const Operand &a, const Operand &b, const Operand &c, bool transA,
          bool transB, int64_t m, int64_t n, int64_t k, int64_t batch) {
  // k == 0 leaves C unchanged (beta = 1).
  if (!state().ready || !state().stickyError.empty() || m == 0 || n == 0 ||
      k == 0 || batch == 0)
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
  cublasOperation_t opFirst = (transB != b.flipped) ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond =
      (transA != a.flipped) ? CUBLAS_OP_T : CUBLAS_OP_N;
  bool good =
      ok(api.cublasLtMatmulDescCreate(&desc,
                                      useTf32() ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                : CUBLAS_COMPUTE_32F,
                                      CUDA_R_32F),
         "cublasLtMatmulDescCreate") &&
      ok(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &opFirst, sizeof(opFirst)),
         "set TRANSA") &&
      ok(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &opSecond, sizeof(opSecond)),
         "set TRANSB") &&
      ok(api.cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, b.rows, b.cols, b.ld),
         "layout B") &&
      ok(api.cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, a.rows, a.cols, a.ld),
         "layout A") &&
      ok(api.cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, c.rows, c.cols, c.ld),
         "layout C");
  if (good && batch > 1) {
    int32_t count = int32_t(batch);
    struct {
      cublasLtMatrixLayout_t layout;
      int64_t stride;
    } layouts[] = {
        {la, b.batchStride}, {lb, a.batchStride}, {lc, c.batchStride}};
    for (auto &l : layouts)
      good = good &&
             ok(api.cublasLtMatrixLayoutSetAttribute(
                    l.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                    sizeof(count)),
                "set BATCH_COUNT") &&
             ok(api.cublasLtMatrixLayoutSetAttribute(
                    l.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                    &l.stride, sizeof(l.stride)),
                "set STRIDED_BATCH_OFFSET");
  }
  // Ask for an algorithm that may use the workspace and fits the operands'
  // real alignment (views into activations need not be 256-byte aligned).
  uint64_t workspace = state().ltWorkspaceBytes;
  const Operand *operands[] = {&b, &a, &c};
  AlgoKey key = {opFirst, opSecond, batch, useTf32()};
  for (auto [i, x] : llvm::enumerate(operands)) {
    key[4 + 5 * i] = x->rows;
    key[5 + 5 * i] = x->cols;
    key[6 + 5 * i] = x->ld;
    key[7 + 5 * i] = batch > 1 ? x->batchStride : 0;
    key[8 + 5 * i] = alignmentOf(*x, batch);
  }
  auto cached = algoCache().find(key);
  cublasLtMatmulAlgo_t algo;
  if (cached != algoCache().end()) {
    algo = cached->second;
  } else if (good) {
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t heuristic = {};
    int found = 0;
    good = ok(api.cublasLtMatmulPreferenceCreate(&pref),
              "cublasLtMatmulPreferenceCreate") &&
           ok(api.cublasLtMatmulPreferenceSetAttribute(
                  pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                  sizeof(workspace)),
              "set MAX_WORKSPACE_BYTES");
    cublasLtMatmulPreferenceAttributes_t alignmentAttrs[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (auto [i, attr] : llvm::enumerate(alignmentAttrs)) {
      uint32_t bytes = uint32_t(key[8 + 5 * std::min<size_t>(i, 2)]); // D is C
      good = good && ok(api.cublasLtMatmulPreferenceSetAttribute(
                            pref, attr, &bytes, sizeof(bytes)),
                        "set MIN_ALIGNMENT");
    }
    good = good && ok(api.cublasLtMatmulAlgoGetHeuristic(state().lt, desc, la,
                                                         lb, lc, lc, pref, 1,
                                                         &heuristic, &found),
                      "cublasLtMatmulAlgoGetHeuristic");
    if (good && found == 0) {
      fail(llvm::formatv(
          "cuBLASLt has no algorithm for a {0}x{1}x{2} GEMM (batch {3})", m, n,
          k, batch));
      good = false;
    }
    if (pref)
      api.cublasLtMatmulPreferenceDestroy(pref);
    if (good)
      algoCache()[key] = algo = heuristic.algo;
  }
  float alpha = 1.0f, beta = 1.0f;
  if (good)
    ok(api.cublasLtMatmul(state().lt, desc, &alpha, b.data, la, a.data, lb,
                          &beta, c.data, lc, const_cast<float *>(c.data), lc,
                          &algo, reinterpret_cast<void *>(state().ltWorkspace),
                          workspace, state().stream),
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
  check(api.cuStreamSynchronize(state().stream),
        "cuStreamSynchronize (after GEMM)");
}

/// The entry points: the last two dimensions are the matrices, a leading
/// third one the batch.
template <int Rank>
void sgemmEntry(Memref<Rank> *a, Memref<Rank> *b, Memref<Rank> *c, bool transA,
                bool transB) {
  Operand oa, ob, oc;
  if (!columnMajorView(*a, "A", oa, true) ||
      !columnMajorView(*b, "B", ob, true) ||
      !columnMajorView(*c, "C", oc, false))
    return;
  int64_t m = c->sizes[Rank - 2], n = c->sizes[Rank - 1];
  int64_t k = transA ? a->sizes[Rank - 2] : a->sizes[Rank - 1];
  gemm(oa, ob, oc, transA, transB, m, n, k, Rank == 3 ? c->sizes[0] : 1);
}
} // namespace

extern "C" void _mlir_ciface_tfm_cuda_sgemm(Memref<2> *a, Memref<2> *b,
                                            Memref<2> *c, int32_t transA,
                                            int32_t transB) {
  sgemmEntry(a, b, c, transA, transB);
}

extern "C" void _mlir_ciface_tfm_cuda_sgemm_batched(Memref<3> *a, Memref<3> *b,
                                                    Memref<3> *c,
                                                    int32_t transA,
                                                    int32_t transB) {
  sgemmEntry(a, b, c, transA, transB);
}
