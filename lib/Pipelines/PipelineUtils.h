//===- PipelineUtils.h - helpers shared by the CPU and GPU pipelines -----===//

#ifndef TFM_LIB_PIPELINES_PIPELINEUTILS_H
#define TFM_LIB_PIPELINES_PIPELINEUTILS_H

#include "mlir/Pass/PassManager.h"

namespace mlir::tfm::detail {

/// Appends a textual pipeline of upstream passes (named by their flags so
/// the pipelines read like the equivalent tfm-opt command lines; a typo is
/// caught by the pipeline lit tests).
void addTextual(OpPassManager &pm, const std::string &pipeline);

/// Adds tfm-autodiff{func=<func>} unless `func` is empty.
void addAutodiff(OpPassManager &pm, const std::string &func);

} // namespace mlir::tfm::detail

#endif // TFM_LIB_PIPELINES_PIPELINEUTILS_H
