//===- TfmIndexOperands.h - operands that index a dimension ----*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMINDEXOPERANDS_H
#define TFM_DIALECT_TFM_IR_TFMINDEXOPERANDS_H

#include "mlir/IR/OpDefinition.h"

#include <optional>

namespace mlir::tfm {

/// Operand `operand`'s elements lie in [0, size of `boundOf`'s dimension
/// `boundDim`), or equal `alsoAllowed`.
struct IndexOperand {
  unsigned operand;
  Value boundOf;
  unsigned boundDim;
  std::optional<int64_t> alsoAllowed;
};

} // namespace mlir::tfm

#include "tfm/Dialect/Tfm/IR/TfmIndexOperands.h.inc"

#endif // TFM_DIALECT_TFM_IR_TFMINDEXOPERANDS_H
