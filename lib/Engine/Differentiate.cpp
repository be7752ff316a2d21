//===- Differentiate.cpp - add the vector-Jacobian product of a function --===//

#include "tfm/Engine/Differentiate.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Recompute/Passes.h"
#include "tfm/Support/Error.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::tfm;

llvm::Expected<std::string> mlir::tfm::differentiate(ModuleOp module,
                                                     llvm::StringRef func,
                                                     bool seedAllResults) {
  DiagnosticCollector diagnostics(module.getContext());
  PassManager pm(module.getContext());
  TfmAutodiffPassOptions options;
  options.funcName = func.str();
  options.seedAllResults = seedAllResults;
  pm.addPass(createTfmAutodiffPass(options));
  if (failed(pm.run(module)))
    return diagnostics.takeError("tfm-autodiff failed: ");
  return getVjpFuncName(func);
}

llvm::Error mlir::tfm::planRecompute(ModuleOp module, llvm::StringRef budget) {
  DiagnosticCollector diagnostics(module.getContext());
  PassManager pm(module.getContext());
  TfmPlanRecomputePassOptions options;
  options.budget = budget.str();
  options.frontier = false; // nobody reads the memory report here
  pm.addPass(createTfmPlanRecomputePass(options));
  if (failed(pm.run(module)))
    return diagnostics.takeError("");
  return llvm::Error::success();
}
