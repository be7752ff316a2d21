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
  BlockDifferentiator(OpBuilder &builder, std::function<Value(Value)> primalOf)
      : builder(builder), primalOf(std::move(primalOf)) {}

  /// Adds `grad` to the gradient of forward value `v`.
  void accumulate(Value v, Value grad);
  /// The gradient of forward value `v`, or null.
  Value gradOf(Value v) const { return grads.lookup(v); }
  Value primal(Value v) const { return primalOf(v); }

  /// Differentiates `ops` (in forward order), appending the backward at the
  /// builder's insertion point. Fails, with a diagnostic on the op, when an
  /// op that gradients flow through has no adjoint rule.
  LogicalResult run(ArrayRef<Operation *> ops);

  OpBuilder &builder;

private:
  std::function<Value(Value)> primalOf;
  llvm::DenseMap<Value, Value> grads;
};

/// Registers the adjoint rules of the tfm ops (external models of
/// DifferentiableOpInterface).
} // namespace mlir::tfm

#endif // TFM_AUTODIFF_BLOCKDIFFERENTIATOR_H
