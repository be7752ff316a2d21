//===- WeightBinder.h - checkpoint tensors to model arguments ---*- C++ -*-===//
//
// Reads the weight map (#tfm.param on the arguments of the model function)
// and builds each parameter from checkpoint tensors: direct, stacked over
// layers via the {layer} template, fused (concatenated) or split, and tied
// aliases. No model-specific code.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_WEIGHTBINDER_H
#define TFM_RUNTIME_WEIGHTBINDER_H

#include "tfm/Runtime/Safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace mlir::tfm {

/// One f32 buffer per argument of `func` (empty for arguments without a
/// #tfm.param). Errors name the tensor: missing, mis-shaped, non-float, or
/// a checkpoint tensor the model does not use.
llvm::Expected<std::vector<std::vector<float>>>
bindParameters(func::FuncOp func, const Checkpoint &checkpoint);

} // namespace mlir::tfm

#endif // TFM_RUNTIME_WEIGHTBINDER_H
