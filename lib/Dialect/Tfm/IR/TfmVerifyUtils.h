//===- TfmVerifyUtils.h - shape checks shared by tfm verifiers --*- C++ -*-===//
//
// Model dimensions are static and batch/sequence are dynamic, so verifiers
// compare shapes dimension by dimension where both sides are known.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_DIALECT_TFM_IR_TFMVERIFYUTILS_H
#define TFM_LIB_DIALECT_TFM_IR_TFMVERIFYUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace mlir::tfm::detail {

/// The ranked tensor type of `v` (tfm operands are ranked tensors).
inline RankedTensorType rankedOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// True when the dimensions may be equal (either is dynamic, or both agree).
inline bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Prints a shape as [?, ?, 64].
std::string formatShape(ArrayRef<int64_t> shape);

/// Checks `type` against `expected` (kDynamic in `expected` accepts any
/// size): rank and each dimension. The message names `what`.
LogicalResult checkShape(Operation *op, StringRef what, Type type,
                         ArrayRef<int64_t> expected);

/// Checks that `type` has element type `elem`.
LogicalResult checkElementType(Operation *op, StringRef what, Type type,
                               Type elem);

/// Element type of statistics (rstd, lse, loss) for inputs of type `elem`.
Type statElementType(Type elem);

/// Checks that a statistic result has the statistic element type and shape.
LogicalResult checkStat(Operation *op, StringRef what, Type type,
                        Type inputElem, ArrayRef<int64_t> expected);

/// Checks that dimensions `dims` of `type` are static: model dimensions
/// (features, heads, head size, vocabulary) are static in tfm; only batch
/// and sequence are dynamic, and lowerings rely on it.
LogicalResult checkStaticDims(Operation *op, StringRef what, Type type,
                              ArrayRef<int64_t> dims);

/// Checks that `type` equals `expected` (a gradient has the type of its
/// primal).
LogicalResult checkSameType(Operation *op, StringRef what, Type type,
                            Type expected);

/// Checks that `value` is strictly positive.
LogicalResult checkPositive(Operation *op, StringRef what, double value);

/// Checks that `docStart` (if given) is [batch, seq] of `tokens`, a
/// [batch, seq, ...] operand.
LogicalResult checkDocStart(Operation *op, Value docStart, Type tokens);

} // namespace mlir::tfm::detail

#endif // TFM_LIB_DIALECT_TFM_IR_TFMVERIFYUTILS_H
