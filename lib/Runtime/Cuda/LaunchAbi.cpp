//===- LaunchAbi.cpp - the mgpu* functions compiled host code calls -------===//
//
// gpu.binary / gpu.launch_func translate (MLIR 22, SelectObjectAttr) to
// calls of these, with the signatures of upstream's CudaRuntimeWrappers
// (which Debian does not ship). A global constructor of the compiled module
// loads the PTX with mgpuModuleLoadJIT; each launch without an async token
// is create stream / launch / synchronise / destroy. Here every "created"
// stream is the runtime's one stream, so launches, cuBLASLt GEMMs and
// host accesses are ordered.
//
//===----------------------------------------------------------------------===//

#include "CudaInternal.h"

#include <cstdint>
#include <map>
#include <string>

using namespace mlir::tfm::cuda::detail;

namespace {
bool usable() { return state().ready && state().stickyError.empty(); }

std::map<std::pair<void *, std::string>, CUfunction> &functionCache() {
  static std::map<std::pair<void *, std::string>, CUfunction> cache;
  return cache;
}
} // namespace

extern "C" {

void *tfm_mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  if (usable())
    check(api().cuModuleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

void *tfm_mgpuModuleLoadJIT(void *data, int optLevel) {
  CUmodule module = nullptr;
  if (!usable())
    return nullptr;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(intptr_t(optLevel)), log,
                    reinterpret_cast<void *>(intptr_t(sizeof(log) - 1))};
  CUresult result = api().cuModuleLoadDataEx(&module, data, 3, options, values);
  if (result != CUDA_SUCCESS && log[0])
    fail(std::string("cuModuleLoadDataEx (PTX JIT): ") + log);
  else
    check(result, "cuModuleLoadDataEx (PTX JIT)");
  return module;
}

void tfm_mgpuModuleUnload(void *module) {
  for (auto it = functionCache().begin(); it != functionCache().end();)
    it = it->first.first == module ? functionCache().erase(it) : std::next(it);
  if (state().ready && module)
    api().cuModuleUnload(static_cast<CUmodule>(module));
}

void *tfm_mgpuModuleGetFunction(void *module, const char *name) {
  // Compiled host code asks before every launch; the answer never changes
  // while the module is loaded.
  auto key = std::make_pair(module, std::string(name));
  if (auto it = functionCache().find(key); it != functionCache().end())
    return it->second;
  CUfunction function = nullptr;
  if (usable() && module &&
      check(api().cuModuleGetFunction(&function, static_cast<CUmodule>(module),
                                      name),
            "cuModuleGetFunction"))
    functionCache()[key] = function;
  return function;
}

void *tfm_mgpuStreamCreate() { return state().stream; }
void tfm_mgpuStreamDestroy(void *) {}

void tfm_mgpuStreamSynchronize(void *stream) {
  if (usable())
    check(api().cuStreamSynchronize(static_cast<CUstream>(stream)),
          "cuStreamSynchronize");
}

void tfm_mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                          intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                          intptr_t blockZ, int32_t smem, void *stream,
                          void **params, void **extra, size_t /*count*/) {
  if (!usable() || !function)
    return;
  if (gridX > INT32_MAX || gridY > 65535 || gridZ > 65535) {
    fail("cuLaunchKernel: grid larger than the device allows");
    return;
  }
  check(api().cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY,
                             gridZ, blockX, blockY, blockZ, smem,
                             static_cast<CUstream>(stream), params, extra),
        "cuLaunchKernel");
}

} // extern "C"
