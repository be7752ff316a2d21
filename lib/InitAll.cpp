//===- InitAll.cpp - register everything tfm provides ---------------------===//

#include "tfm/InitAll.h"

#include "tfm/Adapters/Passes.h"
#include "tfm/Analysis/Passes.h"
#include "tfm/Analysis/TfmCosts.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Autodiff/TfmAdjoints.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/GPU/Passes.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Recompute/Passes.h"
#include "tfm/Training/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::tfm::registerAllTfmDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<TfmDialect>();
  registerTfmAdjoints(registry);
  registerTfmCostModels(registry);
}

void mlir::tfm::registerAllTfmPasses() {
  registerAllPasses();
  registerTfmPasses();
  registerTfmConversionPasses();
  registerTfmGPUPasses();
  registerTfmAutodiffPasses();
  registerTfmAnalysisPasses();
  registerTfmRecomputePasses();
  registerTfmTrainingPasses();
  registerTfmAdaptersPasses();
  registerTfmPipelines();
}
