//===- CudaPipelines.cpp - the GPU (NVVM/PTX) compilation pipelines -------===//
//
// The GPU path:
//
//   tfm-lower-to-linalg-cuda  tfm.attention(_backward) -> flash kernels, then
//                           the CPU path's tfm-lower-to-linalg
//   tfm-bufferize-cuda      tensors -> memrefs, f32 GEMMs -> tfm_cuda_sgemm*
//                           (cuBLASLt in the runtime), deallocation
//   tfm-map-to-gpu          linalg -> parallel loops -> one gpu.launch per
//                           loop nest -> outlined kernels in one gpu.module
//   tfm-lower-gpu-to-llvm   kernels -> NVVM -> PTX (or cubin) in gpu.binary;
//                           host -> LLVM calling the mgpu* launch ABI and the
//                           arena allocator (_mlir_memref_to_llvm_alloc)
//   tfm-train-cuda          tfm-autodiff{func=forward}, then all of the above
//
// Stage 1 ends in the shared tfm-lower-to-linalg (TensorPipelines.cpp).
//
// Note the explicit +ptx80 feature: the default PTX 6.0 cannot target
// sm_90. Passes are created through their generated typed constructors and
// options; comments give the equivalent tfm-opt spelling.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/GPU/Passes.h"
#include "tfm/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::tfm::detail;

namespace {
/// Where libdevice (math functions as __nv_*) and ptxas come from: the
/// option, else $CUDA_HOME / $CUDA_PATH / $CUDA_ROOT, else /usr/local/cuda.
/// Upstream only looks at the environment; lit and CI clean it, and a
/// module with an unresolved __nv_sqrtf is rejected by ptxas.
std::string toolkitPath(const tfm::CudaPipelineOptions &options) {
  if (!options.toolkit.empty())
    return options.toolkit;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *value = std::getenv(var); value && *value)
      return value;
  return "/usr/local/cuda";
}

} // namespace

bool mlir::tfm::isSmName(StringRef chip) {
  unsigned version = 0;
  if (!chip.consume_front("sm_"))
    return false;
  chip.consume_back("a") || chip.consume_back("f");
  return !chip.getAsInteger(10, version) && version >= 50 && version < 1000;
}

void mlir::tfm::buildTfmLowerToLinalgCudaPipeline(OpPassManager &pm,
                                                  int64_t lanes) {
  // Attention first: its flash kernels replace the tfm ops, so the linalg
  // lowering never materialises a score matrix.
  TfmAttentionToGpuPassOptions attention;
  attention.lanes = lanes;
  pm.addNestedPass<func::FuncOp>(createTfmAttentionToGpuPass(attention));
  buildTfmLowerToLinalgPipeline(pm);
}

void mlir::tfm::buildTfmBufferizeCudaPipeline(OpPassManager &pm) {
  // The CPU path's bufferization, but GEMMs go to cuBLASLt
  // (tfm-linalg-matmul-to-blas{prefix=tfm_cuda}) and are placed before the
  // deallocation pipeline, which must see the final uses.
  addBufferization(pm);
  TfmLinalgMatmulToBlasPassOptions gemms;
  gemms.prefix = "tfm_cuda";
  pm.addPass(createTfmLinalgMatmulToBlasPass(gemms));
  addDeallocation(pm);
}

void mlir::tfm::buildTfmMapToGpuPipeline(OpPassManager &pm, int64_t lanes,
                                         bool outline) {
  // tfm-lower-dynamic-expand-shape, tfm-memref-copy-to-linalg,
  // tfm-globals-to-arena, tfm-row-reductions-to-gpu{lanes},
  // tfm-parallel-dims-outermost, convert-linalg-to-parallel-loops,
  // tfm-parallel-loops-to-gpu, gpu-launch-sink-index-computations, then
  // gpu-kernel-outlining, tfm-merge-gpu-modules (or, simulating,
  // tfm-gpu-launch-to-loops), canonicalize.
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(createTfmLowerDynamicExpandShapePass());
  funcs.addPass(createTfmMemRefCopyToLinalgPass());
  funcs.addPass(createTfmGlobalsToArenaPass());
  TfmRowReductionsToGpuPassOptions rows;
  rows.lanes = lanes;
  funcs.addPass(createTfmRowReductionsToGpuPass(rows));
  funcs.addPass(createTfmParallelDimsOutermostPass());
  funcs.addPass(createConvertLinalgToParallelLoopsPass());
  funcs.addPass(createTfmParallelLoopsToGpuPass());
  // Constants go into kernels rather than arriving as parameters: lane
  // arithmetic and shuffle offsets fold.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  if (outline) {
    pm.addPass(createGpuKernelOutliningPass());
    pm.addPass(createTfmMergeGpuModulesPass());
  } else {
    pm.addNestedPass<func::FuncOp>(createTfmGpuLaunchToLoopsPass());
  }
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::buildTfmLowerGpuToLlvmPipeline(
    OpPassManager &pm, const CudaPipelineOptions &options) {
  if (!tfm::isSmName(options.chip))
    return addOptionError(pm, "chip '" + options.chip +
                                  "' is not an NVIDIA SM name (e.g. sm_80, "
                                  "sm_90)");
  // gpu-module-to-binary reports an unknown format but does not fail (MLIR
  // 22), which would leave kernels without a binary: check it here.
  if (!llvm::is_contained({"isa", "bin", "fatbin"}, options.format))
    return addOptionError(pm, "format '" + options.format +
                                  "' is not one of isa, bin, fatbin");
  // Without the toolkit upstream reports the missing path but, for PTX
  // text, carries on and emits kernels calling unlinked libdevice functions
  // (__nv_expf): fail instead, with upstream's message.
  std::string toolkit = toolkitPath(options);
  if (!llvm::sys::fs::is_directory(toolkit))
    return addOptionError(pm, "CUDA path: " + toolkit +
                                  " does not exist or is not a directory.");
  // scf-parallel-for-to-nested-fors, convert-scf-to-cf,
  // expand-strided-metadata, lower-affine, nvvm-attach-target{chip features
  // O=3}, gpu.module(convert-gpu-to-nvvm, canonicalize, cse,
  // reconcile-unrealized-casts), gpu-module-to-binary{format toolkit},
  // tfm-strip-gpu-binary-timings
  pm.addPass(createParallelForToNestedForsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  // The same input compiles to the same bytes: no back-end timings.
  pm.addPass(createTfmStripGpuBinaryTimingsPass());
  // Host: allocations go through the runtime's arena. convert-math-to-libm,
  // finalize-memref-to-llvm{use-generic-functions=1}, gpu-to-llvm,
  // convert-to-llvm, canonicalize, reconcile-unrealized-casts
  pm.addPass(createConvertMathToLibmPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefs;
  memrefs.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefs));
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tfm::buildTfmTrainCudaPipeline(OpPassManager &pm,
                                          const CudaPipelineOptions &options) {
  if (options.fuse)
    buildTfmFusePipeline(pm);
  addAutodiff(pm, options.autodiffFunc, options.recompute);
  buildTfmLowerToLinalgCudaPipeline(pm);
  buildTfmBufferizeCudaPipeline(pm);
  buildTfmMapToGpuPipeline(pm);
  buildTfmLowerGpuToLlvmPipeline(pm, options);
}
