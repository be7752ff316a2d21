//===- Activity.h - which values a trainable argument reaches ---*- C++ -*-===//
//
// Activity analysis for reverse mode (as Enzyme's): a value is *active*
// when a trainable argument reaches it through the forward. Only active
// values need an adjoint: an op whose operand is inactive builds no gradient
// for it, so a frozen weight costs no weight-gradient GEMM, a frozen LM head
// no `dweight`, and a frozen stacked parameter no stacked gradient slot.
// Inside `tfm.repeat` a carried value is active when its initial value is,
// or when any layer kind makes it so (a fixed point over the kinds); a
// layer's weight slice is active when its stacked parameter is.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_AUTODIFF_ACTIVITY_H
#define TFM_AUTODIFF_ACTIVITY_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::tfm {

class ActivityAnalysis {
public:
  /// Analyses `body` (and every block nested in it) with its arguments
  /// active where `isActiveArgument` says so.
  ActivityAnalysis(Block &body,
                   llvm::function_ref<bool(BlockArgument)> isActiveArgument);

  /// Whether a trainable argument reaches `v`; only float tensors are.
  bool isActive(Value v) const { return active.contains(v); }

private:
  void propagate(Block &block);
  void propagate(Operation *op);
  bool markActive(Value v);

  llvm::DenseSet<Value> active;
};

} // namespace mlir::tfm

#endif // TFM_AUTODIFF_ACTIVITY_H
