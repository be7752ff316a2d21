//===- TensorPipelines.cpp - the target-independent stages ----------------===//
//
// tfm-lower-to-linalg (stage 1 of both paths) and the pieces of
// bufferization both paths share. Passes are created through their
// generated typed constructors and options; PipelineUtils.h and
// docs/passes.md give the equivalent tfm-opt spelling.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "tfm/Analysis/Passes.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Recompute/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tfm::detail::addAutodiff(OpPassManager &pm, const std::string &func,
                              const std::string &recompute) {
  if (func.empty())
    return;
  TfmAutodiffPassOptions autodiff;
  autodiff.funcName = func;
  pm.addPass(createTfmAutodiffPass(autodiff));
  if (recompute == "save-all")
    return;
  TfmPlanRecomputePassOptions plan;
  plan.budget = recompute;
  plan.frontier = false;
  pm.addPass(createTfmPlanRecomputePass(plan));
}

void tfm::detail::addBufferization(OpPassManager &pm) {
  // Entry points get C wrappers (_mlir_ciface_*) that take memref
  // descriptors by pointer; the runtime calls those.
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // Entries write only the arguments they update in place.
  pm.addPass(tfm::createTfmReadOnlyArgumentsPass());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions oneShot;
  oneShot.bufferizeFunctionBoundaries = true;
  oneShot.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  oneShot.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(oneShot));
  pm.addPass(createCanonicalizerPass());
}

void tfm::detail::addDeallocation(OpPassManager &pm) {
  bufferization::buildBufferDeallocationPipeline(pm);
  // Arguments updated in place (the optimizer step's) go back to the caller
  // as they are, not as copies.
  pm.addPass(tfm::createTfmReturnArgumentsInPlacePass());
  pm.addPass(createConvertBufferizationToMemRefPass());
}

namespace {
struct OptionErrorPass : PassWrapper<OptionErrorPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OptionErrorPass)
  explicit OptionErrorPass(std::string message) : message(std::move(message)) {}
  StringRef getArgument() const override { return "tfm-option-error"; }
  void runOnOperation() override {
    getOperation().emitError(message);
    signalPassFailure();
  }
  std::string message;
};
} // namespace

void tfm::detail::addOptionError(OpPassManager &pm, std::string message) {
  pm.addPass(std::make_unique<OptionErrorPass>(std::move(message)));
}

void tfm::buildTfmLowerToLinalgPipeline(OpPassManager &pm) {
  // What the entry's generated code will rely on, recorded for
  // CompiledFunction's argument checks: index bounds from the tfm ops, then
  // (below) equal dimensions from the linalg ops.
  pm.addNestedPass<func::FuncOp>(createTfmRecordEntryBoundsPass());
  // CSE runs on tfm ops, not after lowering: merging identical `linalg.fill`
  // inits makes generics in different scf.index_switch cases share one
  // destination, and one-shot bufferization (MLIR 22) then lets two yielded
  // results alias (test/Autodiff/gradcheck-repeat.test catches it).
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createTfmConvertToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createTfmRecordEntryDimsPass());
}

void tfm::buildTfmFusePipeline(OpPassManager &pm) {
  // func.func(tfm-fuse-glu, tfm-pack-projections, tfm-fuse-attention,
  // tfm-fuse-residual-rmsnorm, tfm-fuse-lm-head-loss), canonicalize. GLUs
  // first: their gate and up must not be packed as plain projections.
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createTfmFuseGluPass());
  func.addPass(createTfmPackProjectionsPass());
  func.addPass(createTfmFuseAttentionPass());
  func.addPass(createTfmFuseResidualRmsNormPass());
  func.addPass(createTfmFuseLmHeadLossPass());
  pm.addPass(createCanonicalizerPass());
}
