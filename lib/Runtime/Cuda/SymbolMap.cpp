//===- SymbolMap.cpp - the runtime's functions under their ABI names ------===//
//
// The JIT resolves the names compiled host code calls to the functions of
// this runtime. They are defined under tfm_* names and mapped here, so the
// library never clashes with an upstream libmlir_cuda_runtime in the same
// process.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/CudaRuntime.h"

#include <cstddef>
#include <cstdint>

extern "C" {
void *tfm_mgpuModuleLoad(void *, size_t);
void *tfm_mgpuModuleLoadJIT(void *, int);
void tfm_mgpuModuleUnload(void *);
void *tfm_mgpuModuleGetFunction(void *, const char *);
void *tfm_mgpuStreamCreate();
void tfm_mgpuStreamDestroy(void *);
void tfm_mgpuStreamSynchronize(void *);
void tfm_mgpuLaunchKernel(void *, intptr_t, intptr_t, intptr_t, intptr_t,
                          intptr_t, intptr_t, int32_t, void *, void **, void **,
                          size_t);
void *tfm_cuda_memref_alloc(size_t);
void *tfm_cuda_memref_aligned_alloc(size_t, size_t);
void tfm_cuda_memref_free(void *);
void _mlir_ciface_tfm_cuda_sgemm(void *, void *, void *, int32_t, int32_t);
void _mlir_ciface_tfm_cuda_sgemm_batched(void *, void *, void *, int32_t,
                                         int32_t);
}

llvm::orc::SymbolMap
mlir::tfm::cuda::symbolMap(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char *name, auto *fn) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                               llvm::JITSymbolFlags::Exported};
  };
  add("mgpuModuleLoad", &tfm_mgpuModuleLoad);
  add("mgpuModuleLoadJIT", &tfm_mgpuModuleLoadJIT);
  add("mgpuModuleUnload", &tfm_mgpuModuleUnload);
  add("mgpuModuleGetFunction", &tfm_mgpuModuleGetFunction);
  add("mgpuStreamCreate", &tfm_mgpuStreamCreate);
  add("mgpuStreamDestroy", &tfm_mgpuStreamDestroy);
  add("mgpuStreamSynchronize", &tfm_mgpuStreamSynchronize);
  add("mgpuLaunchKernel", &tfm_mgpuLaunchKernel);
  add("_mlir_memref_to_llvm_alloc", &tfm_cuda_memref_alloc);
  add("_mlir_memref_to_llvm_aligned_alloc", &tfm_cuda_memref_aligned_alloc);
  add("_mlir_memref_to_llvm_free", &tfm_cuda_memref_free);
  add("_mlir_ciface_tfm_cuda_sgemm", &_mlir_ciface_tfm_cuda_sgemm);
  add("_mlir_ciface_tfm_cuda_sgemm_batched",
      &_mlir_ciface_tfm_cuda_sgemm_batched);
  return symbols;
}
