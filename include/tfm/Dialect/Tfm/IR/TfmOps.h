//===- TfmOps.h - tfm operations --------------------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMOPS_H
#define TFM_DIALECT_TFM_IR_TFMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"
#include "tfm/Dialect/Tfm/IR/TfmDialect.h"
#include "tfm/Dialect/Tfm/IR/TfmIndexOperands.h"

namespace mlir::tfm {

/// The most layers a pass that produces something per layer (an HF name,
/// a point of the memory timeline) enumerates; an IR file can say 2^62,
/// no model has more than this (the importer stops at 10,000). Counting
/// and lowering are closed-form and have no limit.
constexpr int64_t kMaxEnumeratedLayers = 100000;
/// The head layout of packed QKV [B, T, Hq + 2*Hkv, D]: the Hq query heads
/// first, then the Hkv key heads, then the Hkv value heads.
struct PackedQkvHeads {
  int64_t numQ, numKv;
  struct Range {
    int64_t start, count;
  };
  Range query() const { return {0, numQ}; }
  Range key() const { return {numQ, numKv}; }
  Range value() const { return {numQ + numKv, numKv}; }
  int64_t total() const { return numQ + 2 * numKv; }
};
} // namespace mlir::tfm

namespace mlir::OpTrait::tfm {
/// Refuses a zero-size static dimension in any operand or result (a tensor
/// op on nothing is a bug upstream of it; its kernels assume work to do).
LogicalResult verifyNoEmptyDims(Operation *op);
template <typename ConcreteType>
class NoEmptyDims
    : public ::mlir::OpTrait::TraitBase<ConcreteType, NoEmptyDims> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyNoEmptyDims(op);
  }
};

/// Marks an op tfm-autodiff does not differentiate (Tfm_NotDifferentiable).
template <typename ConcreteType>
class NotDifferentiable
    : public ::mlir::OpTrait::TraitBase<ConcreteType, NotDifferentiable> {};
} // namespace mlir::OpTrait::tfm

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.h.inc"

#endif // TFM_DIALECT_TFM_IR_TFMOPS_H
