//===- Einsum.h - linalg.generic written as an index-letter spec -*- C++
//-*-===//
//
// The Mamba2 lowerings are two dozen contractions over six or seven named
// indices each (batch, position, source position, group, head in group,
// head dim, state); writing their affine maps by hand hides which index is
// which. `einsum(b, loc, "blgn,bsgn->blsg", ...)` names them instead: output
// letters are parallel loops, the others are reductions.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CONVERSION_TFMTOLINALG_EINSUM_H
#define TFM_LIB_CONVERSION_TFMTOLINALG_EINSUM_H

#include "mlir/IR/Builders.h"

namespace mlir::tfm::lowering {

/// The loop index of a spec letter, inside an einsum body.
using LetterIndex = function_ref<Value(char)>;

/// Gets the operand elements (as stored) then the accumulator (the output
/// element: the running sum of a reduction, the init of a map) and returns
/// the new output element.
using EinsumBody =
    function_ref<Value(OpBuilder &, Location, ValueRange, LetterIndex)>;

struct EinsumOptions {
  /// The output's initial value: a tensor of the output shape, or (when
  /// null) a fill with `init`.
  Value initTensor;
  double init = 0.0;
  /// Sizes of letters no input carries (an output-only position index).
  ArrayRef<std::pair<char, OpFoldResult>> sizes = {};
};

/// A linalg.generic writing a tensor of element type `elem` indexed by the
/// letters after "->". A letter's size comes from the first input that has
/// it (or `options.sizes`).
Value einsum(OpBuilder &b, Location loc, StringRef spec, ValueRange inputs,
             Type elem, EinsumBody body, const EinsumOptions &options = {});

} // namespace mlir::tfm::lowering

#endif // TFM_LIB_CONVERSION_TFMTOLINALG_EINSUM_H
