//===- SplitLayers.h - a model's layers over several scans ------*- C++ -*-===//
//
// One tfm.repeat runs every layer of a model with one body per layer kind,
// so whatever is decided per compiled value holds for all layers alike: a
// stacked weight is trainable in every layer or in none. Splitting the scan
// at a layer boundary gives the layers on each side their own scan and
// their own stacked weights, so per-layer choices (freezing the first
// layers, LoRA on some of them) become per-value ones the activity
// analysis sees: a scan whose weights are all frozen and whose input no
// trainable value reaches gets no backward at all.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_SPLITLAYERS_H
#define TFM_DIALECT_TFM_TRANSFORMS_SPLITLAYERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace mlir::tfm {

/// Splits each forward tfm.repeat in the body of `func` that runs across a
/// model layer of `boundaries` (layer b: layers below b and from b on run
/// in different scans) into consecutive scans, each with `first_layer` set
/// and only the layer kinds it runs. Its stacked weights must be arguments
/// of `func` with a stacked `#tfm.param` used by that scan alone: each is
/// replaced, where it stood, by one argument per scan that reads it (the
/// same HF name template, `layers` its own HF layers). Stacked outputs are
/// concatenated back. A scan that runs backward, or a weight it cannot
/// split, is an error naming it; nothing is changed then.
llvm::Error splitRepeatLayers(func::FuncOp func,
                              llvm::ArrayRef<int64_t> boundaries);

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_SPLITLAYERS_H
