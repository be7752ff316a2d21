//===- StackedValues.h - tfm.repeat stack types and kind sets -*- C++ -*-===//
//
// What code that builds tfm.repeat ops with new stacked inputs or outputs
// (tfm-autodiff's saved slots, tfm-plan-recompute's plan) needs.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_IR_STACKEDVALUES_H
#define TFM_DIALECT_TFM_IR_STACKEDVALUES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tfm {

/// `t` (a ranked tensor) stacked over `layers`: [layers, ...t].
inline RankedTensorType prependLayers(Type t, int64_t layers) {
  auto r = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape{layers};
  shape.append(r.getShape().begin(), r.getShape().end());
  return RankedTensorType::get(shape, r.getElementType());
}

/// A `weight_kinds` / `stacked_kinds` attribute from per-value kind sets
/// (null: every kind): absent when every value covers every kind, else each
/// null entry spelled out.
inline ArrayAttr kindSetsAttr(MLIRContext *ctx,
                              ArrayRef<DenseI64ArrayAttr> sets,
                              unsigned numKinds) {
  if (llvm::all_of(sets, [](DenseI64ArrayAttr s) { return !s; }))
    return ArrayAttr();
  SmallVector<int64_t> kinds;
  for (unsigned k = 0; k < numKinds; ++k)
    kinds.push_back(k);
  auto all = DenseI64ArrayAttr::get(ctx, kinds);
  SmallVector<Attribute> attrs;
  for (DenseI64ArrayAttr s : sets)
    attrs.push_back(s ? s : all);
  return ArrayAttr::get(ctx, attrs);
}

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_IR_STACKEDVALUES_H
