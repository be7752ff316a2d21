//===- PipelineUtils.h - stages shared by the CPU and GPU paths -*- C++ -*-===//
//
// Target-independent pieces both paths build on, so neither path's file
// calls the other's (TensorPipelines.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_PIPELINES_PIPELINEUTILS_H
#define TFM_LIB_PIPELINES_PIPELINEUTILS_H

#include "mlir/Pass/PassManager.h"

namespace mlir::tfm::detail {

/// Adds tfm-autodiff{func=<func>} unless `func` is empty.
/// tfm-autodiff{func} (nothing when `func` is empty), then
/// tfm-plan-recompute{budget=recompute} unless it is save-all.
void addAutodiff(OpPassManager &pm, const std::string &func,
                 const std::string &recompute = "save-all");

/// C wrappers for the entry points, then one-shot bufferization of the
/// whole module with identity-layout function boundaries:
///   func.func(llvm-request-c-wrappers), tfm-read-only-arguments,
///   eliminate-empty-tensors,
///   one-shot-bufferize{bufferize-function-boundaries=1
///     function-boundary-type-conversion=identity-layout-map
///     allow-return-allocs-from-loops=1}, canonicalize
void addBufferization(OpPassManager &pm);

/// buffer-deallocation-pipeline, tfm-return-arguments-in-place,
/// convert-bufferization-to-memref.
void addDeallocation(OpPassManager &pm);

/// A pass that fails with `message` on the module: how a pipeline built
/// from invalid options reports them through the pass manager (a pipeline
/// builder cannot return an error).
void addOptionError(OpPassManager &pm, std::string message);

} // namespace mlir::tfm::detail

#endif // TFM_LIB_PIPELINES_PIPELINEUTILS_H
