//===- CpuBlas.cpp - the GEMM that compiled CPU code calls ----------------===//
//
// Called from code produced by tfm-linalg-matmul-to-blas as
// _mlir_ciface_tfm_rt_sgemm(A, B, C, transA, transB): C += op(A)·op(B),
// row-major, with memref descriptors (any offset and strides). The
// *_overwrite variants compute C = op(A)·op(B) (BLAS's beta = 0): the pass
// calls them where C was just filled with zeros, and drops the fill.
//
//===----------------------------------------------------------------------===//

#include <cblas.h>
#include <cstdint>

namespace {
struct Memref2D {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
  float *data() const { return aligned + offset; }
  bool rowContiguous() const { return strides[1] == 1 || sizes[1] <= 1; }
};
} // namespace

namespace {

/// C = beta·C + op(A)·op(B), beta 0 or 1 (with 0, C is not read).
void sgemm(Memref2D *a, Memref2D *b, Memref2D *c, int32_t transA,
           int32_t transB, float beta) {
  int64_t m = c->sizes[0], n = c->sizes[1];
  int64_t k = transA ? a->sizes[0] : a->sizes[1];
  if (m == 0 || n == 0)
    return;
  if (a->rowContiguous() && b->rowContiguous() && c->rowContiguous()) {
    // Leading dimensions must be at least the row length even for one row.
    auto ld = [](const Memref2D *x) {
      return x->sizes[0] <= 1 ? (x->sizes[1] > 0 ? x->sizes[1] : 1)
                              : x->strides[0];
    };
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
                1.0f, a->data(), int(ld(a)), b->data(), int(ld(b)), beta,
                c->data(), int(ld(c)));
    return;
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        float bv = transB ? b->data()[j * b->strides[0] + p * b->strides[1]]
                          : b->data()[p * b->strides[0] + j * b->strides[1]];
        float av = transA ? a->data()[p * a->strides[0] + i * a->strides[1]]
                          : a->data()[i * a->strides[0] + p * a->strides[1]];
        acc += av * bv;
      }
      float &out = c->data()[i * c->strides[0] + j * c->strides[1]];
      out = beta == 0.0f ? acc : out + acc;
    }
}

} // namespace

extern "C" void _mlir_ciface_tfm_rt_sgemm(Memref2D *a, Memref2D *b, Memref2D *c,
                                          int32_t transA, int32_t transB) {
  sgemm(a, b, c, transA, transB, 1.0f);
}

extern "C" void _mlir_ciface_tfm_rt_sgemm_overwrite(Memref2D *a, Memref2D *b,
                                                    Memref2D *c, int32_t transA,
                                                    int32_t transB) {
  sgemm(a, b, c, transA, transB, 0.0f);
}

namespace {
struct Memref3D {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[3];
  int64_t strides[3];
};

/// Batch slice i of a rank-3 descriptor as a rank-2 one.
Memref2D slice(const Memref3D &m, int64_t i) {
  return {m.allocated,
          m.aligned,
          m.offset + i * m.strides[0],
          {m.sizes[1], m.sizes[2]},
          {m.strides[1], m.strides[2]}};
}
} // namespace

/// C[i] += op(A[i])·op(B[i]) for every batch index i.
extern "C" void _mlir_ciface_tfm_rt_sgemm_batched(Memref3D *a, Memref3D *b,
                                                  Memref3D *c, int32_t transA,
                                                  int32_t transB) {
  for (int64_t i = 0; i < c->sizes[0]; ++i) {
    Memref2D ai = slice(*a, i), bi = slice(*b, i), ci = slice(*c, i);
    sgemm(&ai, &bi, &ci, transA, transB, 1.0f);
  }
}

/// C[i] = op(A[i])·op(B[i]) for every batch index i.
extern "C" void _mlir_ciface_tfm_rt_sgemm_batched_overwrite(
    Memref3D *a, Memref3D *b, Memref3D *c, int32_t transA, int32_t transB) {
  for (int64_t i = 0; i < c->sizes[0]; ++i) {
    Memref2D ai = slice(*a, i), bi = slice(*b, i), ci = slice(*c, i);
    sgemm(&ai, &bi, &ci, transA, transB, 0.0f);
  }
}
