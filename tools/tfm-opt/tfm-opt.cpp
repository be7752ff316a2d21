//===- tfm-opt.cpp - mlir-opt with the tfm dialect and passes -------------===//

#include "tfm/Analysis/Passes.h"
#include "tfm/Autodiff/BlockDifferentiator.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tfm::registerTfmPasses();
  mlir::tfm::registerTfmConversionPasses();
  mlir::tfm::registerTfmPipelines();
  mlir::tfm::registerTfmAutodiffPasses();
  mlir::tfm::registerTfmAnalysisPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR (NVVM, GPU, LLVM).
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::tfm::TfmDialect>();
  mlir::tfm::registerTfmAdjoints(registry);
  mlir::tfm::registerTfmCostModels(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfm optimizer driver\n", registry));
}
