//===- BlasKernels.h - choose OpenBLAS's kernels for this CPU ---*- C++ -*-===//
//
// OpenBLAS built for many CPUs (Debian's DYNAMIC_ARCH build) picks its
// kernels by CPU model number when it is loaded. A release that does not
// know the model falls back to its oldest x86-64 kernels (Prescott, SSE3):
// OpenBLAS 0.3.21 does so on Emerald Rapids and runs SGEMM at a quarter of
// the speed its AVX-512 kernels reach there. The choice is made by feature
// instead: the kernels a CPU's instruction set can run.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_BLASKERNELS_H
#define TFM_RUNTIME_BLASKERNELS_H

#include <string>

namespace mlir::tfm::rt {

/// Makes OpenBLAS use the newest kernels this CPU supports when it fell back
/// to its generic ones for an unknown model. Does nothing when the user chose
/// (OPENBLAS_CORETYPE is set), when OpenBLAS recognised the CPU, or when the
/// BLAS is not a DYNAMIC_ARCH OpenBLAS. Idempotent and thread-safe; call it
/// before the first GEMM. Returns the name of the kernels in use.
std::string selectBlasKernels();

} // namespace mlir::tfm::rt

#endif // TFM_RUNTIME_BLASKERNELS_H
