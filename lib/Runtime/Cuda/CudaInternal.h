//===- CudaInternal.h - shared state of the CUDA runtime ---------*- C++
//-*-===//
//
// The driver and cuBLASLt entry points (resolved with dlsym), the one stream
// and context of the runtime, and the sticky error of calls from compiled
// code. Internal to lib/Runtime/Cuda.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_CUDA_CUDAINTERNAL_H
#define TFM_RUNTIME_CUDA_CUDAINTERNAL_H

#include <cublasLt.h>
#include <cuda.h>

#include <string>

namespace mlir::tfm::cuda::detail {

// The driver API names are macros for versioned symbols (cuMemAlloc ->
// cuMemAlloc_v2); TFM_CU_NAME expands them before stringifying for dlsym.
#define TFM_CU_STR2(x) #x
#define TFM_CU_NAME(x) TFM_CU_STR2(x)

#define TFM_CU_FUNCTIONS(X)                                                    \
  X(cuInit)                                                                    \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuMemGetInfo)                                                              \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamSynchronize)

#define TFM_LT_FUNCTIONS(X)                                                    \
  X(cublasLtCreate)                                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

struct Api {
#define TFM_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TFM_CU_FUNCTIONS(TFM_DECLARE)
  TFM_LT_FUNCTIONS(TFM_DECLARE)
#undef TFM_DECLARE
};

/// The resolved entry points (valid after a successful initialize()).
Api &api();

/// Runtime state shared by the launch ABI, the arena and the GEMMs.
struct State {
  bool ready = false;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  CUdeviceptr ltWorkspace = 0;
  size_t ltWorkspaceBytes = 0;
  std::string stickyError;
};
State &state();

/// Records the first error of a call from compiled code.
void fail(const std::string &message);
/// Checks a driver result; on failure records "<what>: <driver message>".
bool check(CUresult result, const char *what);

} // namespace mlir::tfm::cuda::detail

#endif // TFM_RUNTIME_CUDA_CUDAINTERNAL_H
