//===- DifferentiableOpInterface.h - reverse-mode rules ---------*- C++ -*-===//

#ifndef TFM_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
#define TFM_INTERFACES_DIFFERENTIABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::tfm {

/// What an adjoint rule sees while it builds the gradients of one op.
class AdjointBuilder {
public:
  AdjointBuilder(OpBuilder &builder, Operation *op)
      : builder(builder), op(op) {}
  virtual ~AdjointBuilder() = default;

  OpBuilder &builder;
  Operation *op;
  Location getLoc() const { return op->getLoc(); }

  /// Forward value `v` as available where the backward is built.
  virtual Value primal(Value v) = 0;
  /// Gradient of result `i`; null when nothing differentiable reads it.
  virtual Value resultGrad(unsigned i) = 0;
  /// Adds `grad` to the gradient of operand `i` (fan-out accumulates).
  virtual void addGrad(unsigned i, Value grad) = 0;
  /// Whether operand `i` needs a gradient: a float tensor that a trainable
  /// argument reaches (tfm/Autodiff/Activity.h). Rules build no work for an
  /// operand that does not, and addGrad drops what they give it.
  virtual bool needsGrad(unsigned i) = 0;
  /// Whether forward value `v` needs a gradient (for structured ops, whose
  /// rules differentiate their bodies).
  virtual bool isActive(Value v) = 0;

  /// Gradient of result `i`, or zeros shaped like the (primal) result.
  Value resultGradOrZeros(unsigned i);
  /// `primal(op->getOperand(i))`.
  Value operand(unsigned i) { return primal(op->getOperand(i)); }
};

} // namespace mlir::tfm

#include "tfm/Interfaces/DifferentiableOpInterface.h.inc"

#endif // TFM_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
