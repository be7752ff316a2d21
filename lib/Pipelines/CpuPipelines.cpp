//===- CpuPipelines.cpp - the CPU compilation pipelines -------------------===//
//
// Upstream passes are named by their registered flags so the pipelines read
// like the tfm-opt command lines they are equivalent to
// (docs/passes.md). The recipe follows shared/LOWERING-NOTES.md.
//
//===----------------------------------------------------------------------===//

#include "tfm/Pipelines/Pipelines.h"
#include "PipelineUtils.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Conversion/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tfm::detail;

void mlir::tfm::detail::addTextual(OpPassManager &pm, const std::string &pipeline) {
  // The pipelines name upstream and tfm passes; make sure they are
  // registered whichever tool (or library user) builds them.
  static bool registered = (registerAllPasses(), registerTfmConversionPasses(), true);
  (void)registered;
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error(llvm::Twine("invalid built-in pipeline: ") + pipeline);
}

void mlir::tfm::detail::addAutodiff(OpPassManager &pm, const std::string &func) {
  if (func.empty())
    return;
  TfmAutodiffPassOptions autodiff;
  autodiff.funcName = func;
  pm.addPass(createTfmAutodiffPass(autodiff));
}

void mlir::tfm::buildTfmLowerToLinalgPipeline(OpPassManager &pm) {
  // CSE runs on tfm ops, not after lowering: merging identical `linalg.fill`
  // inits makes generics in different scf.index_switch cases share one
  // destination, and one-shot bufferization (MLIR 22) then lets two yielded
  // results alias (test/Autodiff/gradcheck-repeat.test catches it).
  pm.addPass(createCSEPass());
  pm.addPass(createConvertTfmToLinalgPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tfm::buildTfmBufferizeCpuPipeline(OpPassManager &pm,
                                             const CpuPipelineOptions &options) {
  // Entry points get C wrappers (_mlir_ciface_*) that take memref
  // descriptors by pointer; the runtime calls those.
  addTextual(pm, "func.func(llvm-request-c-wrappers),"
                 "eliminate-empty-tensors,"
                 "one-shot-bufferize{bufferize-function-boundaries=1 "
                 "function-boundary-type-conversion=identity-layout-map "
                 "allow-return-allocs-from-loops=1},"
                 "canonicalize");
  if (options.useBlas)
    pm.addPass(createConvertLinalgMatmulToBlasPass());
  addTextual(pm, "buffer-deallocation-pipeline,convert-bufferization-to-memref");
}

void mlir::tfm::buildTfmLowerCpuToLlvmPipeline(OpPassManager &pm) {
  pm.addPass(createLowerDynamicExpandShapePass());
  addTextual(pm, "convert-linalg-to-loops,convert-math-to-libm,"
                 "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
                 "convert-to-llvm,reconcile-unrealized-casts");
}

void mlir::tfm::buildTfmTrainCpuPipeline(OpPassManager &pm,
                                         const CpuPipelineOptions &options) {
  addAutodiff(pm, options.autodiffFunc);
  buildTfmLowerToLinalgPipeline(pm);
  buildTfmBufferizeCpuPipeline(pm, options);
  buildTfmLowerCpuToLlvmPipeline(pm);
}

void mlir::tfm::registerTfmPipelines() {
  PassPipelineRegistration<>("tfm-lower-to-linalg",
                             "Lower tfm ops to linalg/tensor/scf (CPU stage 1)",
                             buildTfmLowerToLinalgPipeline);
  PassPipelineRegistration<>("tfm-bufferize-cpu",
                             "Bufferize, call BLAS for GEMMs, insert deallocations "
                             "(CPU stage 2)",
                             [](OpPassManager &pm) { buildTfmBufferizeCpuPipeline(pm); });
  PassPipelineRegistration<>("tfm-lower-cpu-to-llvm",
                             "Lower loops and memrefs to the LLVM dialect (CPU stage 3)",
                             buildTfmLowerCpuToLlvmPipeline);
  PassPipelineRegistration<>("tfm-train-cpu",
                             "The training step of @forward (loss and gradients, "
                             "tfm-autodiff) compiled for the CPU down to LLVM",
                             [](OpPassManager &pm) {
                               CpuPipelineOptions options;
                               options.autodiffFunc = "forward";
                               buildTfmTrainCpuPipeline(pm, options);
                             });
  registerTfmCudaPipelines();
}
