//===- BlockDifferentiator.h - reverse-mode over a list of ops --*- C++ -*-===//
//
// The engine of tfm-autodiff: walks ops in reverse, asks each op's
// DifferentiableOpInterface for its adjoint, and accumulates gradients
// (fan-out sums). It knows no op by name; structured ops (tfm.repeat)
// differentiate their bodies with nested BlockDifferentiators from their
// own rules.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_AUTODIFF_BLOCKDIFFERENTIATOR_H
#define TFM_AUTODIFF_BLOCKDIFFERENTIATOR_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir::tfm {

class BlockDifferentiator {
public:
  /// `primalOf` maps a forward value to the value the backward uses for it
  /// at the builder's insertion point (identity at the top level).
  /// `isActive` says which forward values need a gradient (ActivityAnalysis);
  /// an operand it rejects gets none, so its rule builds no work for it.
  BlockDifferentiator(OpBuilder &builder, std::function<Value(Value)> primalOf,
                      std::function<bool(Value)> isActive)
      : builder(builder), primalOf(std::move(primalOf)),
        isActiveFn(std::move(isActive)) {}

  /// Adds `grad` to the gradient of forward value `v`.
  void accumulate(Value v, Value grad);
  /// The gradient of forward value `v`, or null.
  Value gradOf(Value v) const { return grads.lookup(v); }
  Value primal(Value v) const { return primalOf(v); }
  bool isActive(Value v) const { return isActiveFn(v); }

  /// Differentiates `ops` (in forward order), appending the backward at the
  /// builder's insertion point. Fails, with a diagnostic on the op, when an
  /// op that gradients flow through has no adjoint rule.
  LogicalResult run(ArrayRef<Operation *> ops);

  OpBuilder &builder;

private:
  std::function<Value(Value)> primalOf;
  std::function<bool(Value)> isActiveFn;
  llvm::DenseMap<Value, Value> grads;
};

/// Erases the ops of `block` that nothing reads and that have no effects,
/// from its end back to (not including) `stop` (null: the whole block):
/// adjoint work a rule built for a gradient that was then dropped.
/// `onErase` sees each before it goes.
void eraseDeadBackwardOps(
    Block &block, Operation *stop,
    llvm::function_ref<void(Operation *)> onErase = [](Operation *) {});

/// Registers the adjoint rules of the tfm ops (external models of
/// DifferentiableOpInterface).
} // namespace mlir::tfm

#endif // TFM_AUTODIFF_BLOCKDIFFERENTIATOR_H
