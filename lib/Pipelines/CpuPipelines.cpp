//===- CpuPipelines.cpp - the CPU compilation pipelines -------------------===//
//
// Stages 2 and 3 of the CPU path (stage 1, tfm-lower-to-linalg, is shared
// with the GPU path: TensorPipelines.cpp). Each comment gives the
// equivalent tfm-opt spelling.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tfm::detail;

void tfm::buildTfmBufferizeCpuPipeline(OpPassManager &pm,
                                       const CpuPipelineOptions &options) {
  addBufferization(pm);
  if (options.useBlas) {
    // The CPU runtime has the beta = 0 GEMMs (lib/Runtime/CpuBlas.cpp).
    TfmLinalgMatmulToBlasPassOptions blas;
    blas.foldZeroFill = true;
    pm.addPass(createTfmLinalgMatmulToBlasPass(blas));
  }
  addDeallocation(pm);
}

void tfm::buildTfmLowerCpuToLlvmPipeline(OpPassManager &pm) {
  // tfm-lower-dynamic-expand-shape, tfm-outline-loop-bodies,
  // tfm-vectorize-inner-loops, convert-linalg-to-loops, convert-math-to-libm,
  // convert-scf-to-cf, expand-strided-metadata, lower-affine, convert-to-llvm,
  // reconcile-unrealized-casts
  pm.addNestedPass<func::FuncOp>(createTfmLowerDynamicExpandShapePass());
  pm.addPass(createTfmOutlineLoopBodiesPass());
  pm.addNestedPass<func::FuncOp>(createTfmVectorizeInnerLoopsPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void tfm::buildTfmTrainCpuPipeline(OpPassManager &pm,
                                   const CpuPipelineOptions &options) {
  if (options.fuse)
    buildTfmFusePipeline(pm);
  addAutodiff(pm, options.autodiffFunc, options.recompute);
  buildTfmLowerToLinalgPipeline(pm);
  buildTfmBufferizeCpuPipeline(pm, options);
  buildTfmLowerCpuToLlvmPipeline(pm);
}
