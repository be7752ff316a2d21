//===- ApplyLoraPass.cpp - the tfm-apply-lora pass ------------------------===//

#include "tfm/Adapters/ApplyLora.h"
#include "tfm/Adapters/Passes.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMAPPLYLORAPASS
#include "tfm/Adapters/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

struct TfmApplyLoraPass
    : mlir::tfm::impl::TfmApplyLoraPassBase<TfmApplyLoraPass> {
  using TfmApplyLoraPassBase::TfmApplyLoraPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(funcName);
    if (!forward) {
      module.emitError() << "tfm-apply-lora: no function @" << funcName;
      return signalPassFailure();
    }
    llvm::Expected<LoraConfig> config = configFromOptions();
    if (!config) {
      forward.emitError() << "tfm-apply-lora: "
                          << llvm::toString(config.takeError());
      return signalPassFailure();
    }
    llvm::Expected<LoraSummary> summary = applyLora(forward, *config);
    if (!summary) {
      forward.emitError() << "tfm-apply-lora: "
                          << llvm::toString(summary.takeError());
      return signalPassFailure();
    }
    forward.emitRemark() << summary->describe();
  }

  llvm::Expected<LoraConfig> configFromOptions() {
    if (!configPath.empty())
      return readLoraConfig(configPath);
    LoraConfig c;
    c.r = rank;
    c.alpha = alpha;
    c.useRslora = useRslora;
    c.setTargetModules(
        std::vector<std::string>(targetModules.begin(), targetModules.end()));
    c.targetParameters.assign(targetParameters.begin(), targetParameters.end());
    if (!targetRegex.empty())
      c.targetRegex = targetRegex;
    return c;
  }
};

} // namespace
