//===- CudaRuntime.cpp - driver loading, context, stream, errors ----------===//
//
// Nothing here links against libcuda or cuBLASLt: both are opened with
// dlopen when initialize() is first called (a binary linked with the
// driver stub cannot start where no driver exists).
// $TFM_CUDA_DRIVER and $TFM_CUBLASLT name other files to open (the tests
// point them at the CPU stand-ins in test/MockCuda).
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/CudaRuntime.h"
#include "CudaInternal.h"
#include "tfm/Support/Error.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

using namespace mlir::tfm;
using namespace mlir::tfm::cuda;
using namespace mlir::tfm::cuda::detail;

namespace mlir::tfm::cuda {
// Defined in CudaArena.cpp.
llvm::Error createArena(size_t bytes);
} // namespace mlir::tfm::cuda

Api &detail::api() {
  static Api table;
  return table;
}

State &detail::state() {
  static State s;
  return s;
}

void detail::fail(const std::string &message) {
  if (state().stickyError.empty())
    state().stickyError = message;
}

bool detail::check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *text = nullptr;
  if (api().cuGetErrorString)
    api().cuGetErrorString(result, &text);
  fail(llvm::formatv("{0}: {1} (CUresult {2})", what,
                     text ? text : "unknown error", int(result)));
  return false;
}

/// dlopen `$override` if set, else the first of `candidates` that loads.
static llvm::Error openLibrary(const char *override,
                               std::vector<const char *> candidates,
                               const char *what, void *&handle) {
  if (const char *path = std::getenv(override); path && *path)
    candidates = {path};
  std::string tried;
  for (const char *name : candidates) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle)
      return llvm::Error::success();
    tried += std::string("\n  ") + dlerror();
  }
  return makeError(llvm::Twine("cannot load the ") + what + ":" + tried);
}

bool mlir::tfm::cuda::builtWithCuda() { return true; }

llvm::Error mlir::tfm::cuda::initialize(int ordinal, size_t arenaBytes) {
  State &s = state();
  if (s.ready)
    return llvm::Error::success();
  Api &a = api();
  void *driver = nullptr;
  if (llvm::Error e = openLibrary(
          "TFM_CUDA_DRIVER", {"libcuda.so.1", "libcuda.so"},
          "CUDA driver (no NVIDIA driver on this machine?)", driver))
    return e;
#define TFM_RESOLVE(fn)                                                        \
  a.fn = reinterpret_cast<decltype(a.fn)>(dlsym(driver, TFM_CU_NAME(fn)));     \
  if (!a.fn)                                                                   \
    return makeError("the CUDA driver has no " TFM_CU_NAME(fn));
  TFM_CU_FUNCTIONS(TFM_RESOLVE)
#undef TFM_RESOLVE

  auto checked = [&](CUresult r, const char *what) -> llvm::Error {
    if (check(r, what))
      return llvm::Error::success();
    std::string message = s.stickyError;
    s.stickyError.clear();
    return makeError(message);
  };
  if (auto e = checked(a.cuInit(0), "cuInit"))
    return e;
  int count = 0;
  if (auto e = checked(a.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return e;
  if (ordinal < 0 || ordinal >= count)
    return makeError(llvm::formatv("no CUDA device {0} (this machine has {1})",
                                   ordinal, count));
  if (auto e = checked(a.cuDeviceGet(&s.device, ordinal), "cuDeviceGet"))
    return e;
  if (auto e = checked(a.cuDevicePrimaryCtxRetain(&s.context, s.device),
                       "cuDevicePrimaryCtxRetain"))
    return e;
  if (auto e = checked(a.cuCtxSetCurrent(s.context), "cuCtxSetCurrent"))
    return e;
  if (auto e = checked(a.cuStreamCreate(&s.stream, CU_STREAM_NON_BLOCKING),
                       "cuStreamCreate"))
    return e;

  void *lt = nullptr;
  if (llvm::Error e = openLibrary("TFM_CUBLASLT",
                                  {"libcublasLt.so.13", "libcublasLt.so.12",
                                   "libcublasLt.so",
                                   "/usr/local/cuda/lib64/libcublasLt.so.13",
                                   "/usr/local/cuda/lib64/libcublasLt.so"},
                                  "cuBLASLt library", lt))
    return e;
#define TFM_RESOLVE(fn)                                                        \
  a.fn = reinterpret_cast<decltype(a.fn)>(dlsym(lt, #fn));                     \
  if (!a.fn)                                                                   \
    return makeError("cuBLASLt has no " #fn);
  TFM_LT_FUNCTIONS(TFM_RESOLVE)
#undef TFM_RESOLVE
  if (a.cublasLtCreate(&s.lt) != CUBLAS_STATUS_SUCCESS)
    return makeError("cublasLtCreate failed");
  s.ltWorkspaceBytes = 32u << 20;
  if (auto e = checked(a.cuMemAlloc(&s.ltWorkspace, s.ltWorkspaceBytes),
                       "cuMemAlloc (workspace)"))
    return e;
  if (llvm::Error e = createArena(arenaBytes))
    return e;
  s.ready = true;
  return llvm::Error::success();
}

std::string mlir::tfm::cuda::deviceChip() {
  int major = 0, minor = 0;
  api().cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, state().device);
  api().cuDeviceGetAttribute(
      &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, state().device);
  return llvm::formatv("sm_{0}{1}", major, minor);
}

std::string mlir::tfm::cuda::deviceDescription() {
  char name[256] = {0};
  api().cuDeviceGetName(name, sizeof(name) - 1, state().device);
  return llvm::formatv("{0} ({1})", name, deviceChip());
}

llvm::Error mlir::tfm::cuda::synchronize() {
  if (state().ready)
    check(api().cuStreamSynchronize(state().stream), "cuStreamSynchronize");
  return takeError();
}

llvm::Error mlir::tfm::cuda::takeError() {
  std::string message;
  std::swap(message, state().stickyError);
  if (message.empty())
    return llvm::Error::success();
  return makeError("CUDA runtime: " + message);
}
