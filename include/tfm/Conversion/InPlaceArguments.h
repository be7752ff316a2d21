//===- InPlaceArguments.h - arguments an entry updates in place -*- C++ -*-===//
//
// The one spelling of "this entry argument is updated in place": one-shot
// bufferization's `bufferization.writable = true` on the tensor argument.
// Builders of such functions (the optimizer step, the Trainer's gradient
// sum) mark arguments with it; tfm-read-only-arguments makes every other
// entry argument read-only, and CompiledFunction copies host data passed
// for a marked argument before the call.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CONVERSION_INPLACEARGUMENTS_H
#define TFM_CONVERSION_INPLACEARGUMENTS_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tfm {

/// Marks argument `i` of `func` as updated in place.
inline void markUpdatedInPlace(FunctionOpInterface func, unsigned i) {
  func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                  BoolAttr::get(func->getContext(), true));
}

/// Whether argument `i` of `func` is marked updated in place (before
/// bufferization, which removes the mark).
inline bool isMarkedUpdatedInPlace(FunctionOpInterface func, unsigned i) {
  auto writable = func.getArgAttrOfType<BoolAttr>(
      i, bufferization::BufferizationDialect::kWritableAttrName);
  return writable && writable.getValue();
}

} // namespace mlir::tfm

#endif // TFM_CONVERSION_INPLACEARGUMENTS_H
