//===- GpuSimPipeline.cpp - the GPU path's kernels as CPU loops -----------===//
//
// Testing only: the GPU path's kernel formation, with one thread per
// attention or reduced row (no shuffles) and every launch run as CPU loops,
// between the CPU path's bufferization and LLVM lowering. It combines the
// two paths; neither depends on it.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "tfm/Pipelines/Pipelines.h"

using namespace mlir;

void tfm::buildTfmTrainGpuSimPipeline(OpPassManager &pm,
                                      const std::string &func, bool fuse) {
  if (fuse)
    buildTfmFusePipeline(pm);
  detail::addAutodiff(pm, func);
  buildTfmLowerToLinalgCudaPipeline(pm, /*lanes=*/1);
  buildTfmBufferizeCpuPipeline(pm);
  buildTfmMapToGpuPipeline(pm, /*lanes=*/1, /*outline=*/false);
  buildTfmLowerCpuToLlvmPipeline(pm);
}
