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

#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"
#include "tfm/Runtime/Safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace mlir::tfm {

/// One f32 buffer per argument of `func` (empty for arguments without a
/// #tfm.param). Errors name the tensor: missing, mis-shaped, non-float, or
/// a checkpoint tensor the model does not use.
llvm::Expected<std::vector<std::vector<float>>>
bindParameters(func::FuncOp func, const Checkpoint &checkpoint);

/// A gradient under its checkpoint name.
struct NamedGradient {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// `tensors` (f32, named as a checkpoint names them) as a checkpoint in
/// memory that owns them; `origin` stands for the file in messages.
llvm::Expected<Checkpoint> checkpointOf(std::vector<NamedGradient> tensors,
                                        llvm::StringRef origin);

/// The shape the checkpoint stores one (per-layer) value of `shape` of an
/// expert_major ([E·r, C]) or rank_major ([R, r·E]) parameter under; `shape`
/// itself for every other mapping.
std::vector<int64_t> expertFactorStoredShape(ParamAttr param,
                                             llvm::ArrayRef<int64_t> shape);

/// The inverse of bindParameters, for gradients and for trained parameters
/// alike: `grads[i]` is the gradient (or value) of argument i, whose weight map
/// is `params[i]` (null: not a parameter) and shape `shapes[i]` (taken before
/// compilation rewrote the function). Stacked parameters are split per layer,
/// fused ones split back into their sources, split ones summed into their
/// source, and tied ones written under every name the checkpoint stores.
/// Returned in checkpoint-name order.
llvm::Expected<std::vector<NamedGradient>>
unbindGradients(llvm::ArrayRef<ParamAttr> params,
                llvm::ArrayRef<std::vector<int64_t>> shapes,
                llvm::ArrayRef<const float *> grads,
                const Checkpoint &checkpoint);

} // namespace mlir::tfm

#endif // TFM_RUNTIME_WEIGHTBINDER_H
