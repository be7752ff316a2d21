//===- WeightPacking.h - fuse stacked parameters of a layer scan -*- C++
//-*-===//
//
// The weight-map half of the packing fusions: several stacked parameters of
// a tfm.repeat become one argument whose #tfm.param has `mapping = fuse`
// over their HF names, so a checkpoint binds and gradients unbind exactly as
// before (WeightBinder). The pattern half (which matmuls to pack) is each
// pass's own.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_DIALECT_TFM_TRANSFORMS_WEIGHTPACKING_H
#define TFM_LIB_DIALECT_TFM_TRANSFORMS_WEIGHTPACKING_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {

/// The stacked input of `repeat` that block argument `arg` of one of its
/// layer bodies is (an index into getWeights()), if it is one.
std::optional<unsigned> stackedInputOf(RepeatOp repeat, Value arg);

/// The block argument of stacked input `weight` in the body of `kind`
/// (null when that kind does not read it).
BlockArgument blockArgOf(RepeatOp repeat, unsigned weight, unsigned kind);

/// Whether stacked inputs `weights` of `repeat` can be fused into one
/// parameter along the first per-layer dimension: each is an argument of the
/// enclosing function read only by this repeat, with a trainable `direct`
/// #tfm.param without older names or tied aliases; all cover the same
/// layers and kinds, and have one element type and equal shapes but for
/// that dimension.
bool canPackStackedWeights(RepeatOp repeat, ArrayRef<unsigned> weights);

/// One new parameter: the stacked inputs `weights` (canPackStackedWeights)
/// concatenated along per-layer dimension 0 in that order, with `kind`.
struct WeightGroup {
  SmallVector<unsigned> weights;
  std::string kind;
};

/// Replaces each group of stacked inputs by one new parameter named after
/// them (`model.layers.{layer}.self_attn.{q,k,v}_proj.weight`) with
/// `mapping = fuse` over their HF names. For each layer kind that reads
/// them, `rewrite` gets the kind and the new block argument of each group,
/// and must leave the old ones (blockArgOf) unused; they, the repeat
/// operands and the function arguments are then erased.
void packStackedWeights(
    RepeatOp repeat, ArrayRef<WeightGroup> groups,
    function_ref<void(unsigned kind, ArrayRef<Value> packed)> rewrite);

/// The `nt` matmul that reads block argument `w` as its weight (or bias,
/// with `asBias`) and is its only reader; null otherwise.
MatmulOp soleMatmulOf(Value w, bool asBias = false);

/// matmul(x, packed weight, packed bias) before the first of the matmuls
/// `parts` it replaces (their outputs side by side along the last dim).
Value buildPackedMatmul(RewriterBase &rewriter, Value x, Value weight,
                        Value bias, ArrayRef<MatmulOp> parts);

/// The HF name of a fused parameter over `names`: the common prefix and
/// suffix around the differing middles in braces.
std::string fusedName(ArrayRef<StringRef> names);

} // namespace mlir::tfm

#endif // TFM_LIB_DIALECT_TFM_TRANSFORMS_WEIGHTPACKING_H
