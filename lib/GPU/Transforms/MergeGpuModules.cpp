//===- MergeGpuModules.cpp - one gpu.module for all outlined kernels ------===//
//
// gpu-kernel-outlining puts every kernel into a gpu.module of its own: a
// training step would be hundreds of PTX modules, each loaded, assembled and
// checked separately. Merging them into one module `tfm_kernels` gives one
// PTX module (one cuModuleLoadData, one ptxas run) per compiled step.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/Passes.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMMERGEGPUMODULESPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmMergeGpuModulesPass
    : mlir::tfm::impl::TfmMergeGpuModulesPassBase<TfmMergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty())
      return;
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPoint(gpuModules.front());
    auto merged =
        gpu::GPUModuleOp::create(rewriter, module.getLoc(), "tfm_kernels");
    if (ArrayAttr targets = gpuModules.front().getTargetsAttr())
      merged.setTargetsAttr(targets);
    SymbolTable mergedSymbols(merged);
    llvm::StringMap<StringAttr> renamed; // "module::func" -> new func name
    for (gpu::GPUModuleOp source : gpuModules) {
      SymbolTable sourceSymbols(source);
      for (Operation &op :
           llvm::make_early_inc_range(source.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        std::string key = (source.getName() + "::" + symbol.getName()).str();
        // A clash (two private helpers of the same name) is renamed, with
        // its uses in its own module, before it moves.
        if (mergedSymbols.lookup(symbol.getNameAttr()) &&
            failed(sourceSymbols.renameToUnique(&op, {&mergedSymbols}))) {
          op.emitOpError("cannot be renamed while merging GPU modules");
          return signalPassFailure();
        }
        rewriter.moveOpBefore(&op, merged.getBody(), merged.getBody()->end());
        renamed[key] = mergedSymbols.insert(&op);
      }
      rewriter.eraseOp(source);
    }
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      std::string key = (kernel.getRootReference().getValue() +
                         "::" + kernel.getLeafReference().getValue())
                            .str();
      auto it = renamed.find(key);
      if (it == renamed.end()) {
        launch.emitOpError("launches a kernel outside the merged GPU modules");
        return WalkResult::interrupt();
      }
      rewriter.modifyOpInPlace(launch, [&] {
        launch.setKernelAttr(SymbolRefAttr::get(
            merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
      });
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
