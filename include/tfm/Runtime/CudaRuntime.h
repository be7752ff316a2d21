//===- CudaRuntime.h - the runtime behind compiled GPU steps ----*- C++ -*-===//
//
// What code compiled by --tfm-train-cuda calls, and what tfm-run uses to
// drive it (docs/gpu.md):
//
//  - the mgpu* launch ABI that gpu-to-llvm / gpu.binary translation emit
//    (mgpuModuleLoadJIT, mgpuLaunchKernel, mgpuStreamSynchronize, ...);
//  - _mlir_memref_to_llvm_alloc/free: every buffer of the step comes from one
//    arena of CUDA managed memory, allocated once;
//  - _mlir_ciface_tfm_cuda_sgemm(_batched): f32 GEMMs through cuBLASLt.
//
// libcuda.so.1 and libcublasLt.so are opened with dlopen on first use, so
// binaries linking this library start (and report "no GPU" cleanly) on
// machines without a driver. Errors inside calls from compiled code cannot
// be returned; the first one is kept ("sticky") and later calls do nothing
// until takeError() reports it.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_CUDARUNTIME_H
#define TFM_RUNTIME_CUDARUNTIME_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <string>

namespace mlir::tfm::cuda {

/// Whether this build has the CUDA runtime (headers were found at build time).
bool builtWithCuda();

/// Opens the driver and cuBLASLt, makes device `ordinal`'s primary context
/// current and allocates the arena (`arenaBytes`, 0: 90% of free memory).
/// Idempotent. Fails with a readable reason where there is no driver or GPU.
llvm::Error initialize(int ordinal = 0, size_t arenaBytes = 0);

/// "NVIDIA H200 (sm_90)" once initialised.
std::string deviceDescription();
/// "sm_90" for the current device.
std::string deviceChip();

/// Arena allocation (managed memory: host and device may both access it,
/// the host only after synchronize()).
void *arenaAllocate(size_t bytes);
void arenaFree(void *ptr);
size_t arenaBytesInUse();
size_t arenaPeakBytes();

/// Waits for all work on the runtime's stream.
llvm::Error synchronize();

/// The first error raised inside a call from compiled code, if any; clears it.
llvm::Error takeError();

/// The symbols above under the names compiled code calls, for the JIT.
llvm::orc::SymbolMap symbolMap(llvm::orc::MangleAndInterner interner);

} // namespace mlir::tfm::cuda

#endif // TFM_RUNTIME_CUDARUNTIME_H
