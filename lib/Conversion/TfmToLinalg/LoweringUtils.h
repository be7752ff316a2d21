//===- LoweringUtils.h - helpers shared by tfm-to-linalg patterns -*- C++
//-*-===//
//
// Builders for the few shapes of linalg.generic the tfm ops need:
// element-wise maps (with broadcasting maps), reductions over the last
// dimension, and typed scalar arithmetic in the compute type (f32, or f64
// for f64 tensors: bf16/f16 values are widened on load, rounded on store).
//
// Patterns create ops one statement at a time, never as two arguments of
// one call (`f(X::create(..), Y::create(..))`): C++ leaves the order of
// argument evaluation to the compiler (gcc goes right to left, clang left
// to right), and with it the order of the ops in the printed IR.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CONVERSION_TFMTOLINALG_LOWERINGUTILS_H
#define TFM_LIB_CONVERSION_TFMTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm::lowering {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// linalg.yield of one value or several.
inline void yieldValues(OpBuilder &b, Location loc, ValueRange values) {
  linalg::YieldOp::create(b, loc, values);
}
inline void yieldValue(OpBuilder &b, Location loc, Value value) {
  linalg::YieldOp::create(b, loc, ValueRange{value});
}

/// The arithmetic type for elements of type `elem`.
Type computeType(Type elem);

/// Converts a float scalar between float types (extf/truncf or nothing).
Value castFloat(OpBuilder &b, Location loc, Value v, Type to);

/// A float constant of type `type`.
Value constFloat(OpBuilder &b, Location loc, Type type, double value);

/// x·y + acc with x and y widened to `type`: the body of a contraction
/// accumulating in `type` (acc already is).
Value mulAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc,
             Type type);

/// The sizes of a ranked tensor, static or `tensor.dim`.
SmallVector<OpFoldResult> sizesOf(OpBuilder &b, Location loc, Value tensor);

/// tensor.empty of the given sizes.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elem);

/// tensor.empty filled with `value` (converted to `elem`).
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Type elem, double value);

/// A parallel linalg.generic writing a tensor of `sizes` x `elem`. Input i is
/// read through `inputMaps[i]` (identity when the list is empty). `body`
/// gets the input elements, returns the output element (in `elem`).
Value buildMap(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
               Type elem, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
               BodyFn body);

/// Element-wise over tensors of one shape: inputs are widened to the compute
/// type before `body`, and the result rounded to the element type of
/// `inputs[0]`.
Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       BodyFn body);

/// `x` with its elements rounded (or widened) to `elem` (x itself if equal).
Value roundTensor(OpBuilder &b, Location loc, Value x, Type elem);

/// Reduces the last dimension of `x` into a tensor of `accType` (the shape
/// of `x` without its last dimension), starting from `init`; `combine` gets
/// (element widened to accType, accumulator).
Value reduceLastDim(OpBuilder &b, Location loc, Value x, Type accType,
                    double init, BodyFn combine);

/// A reduction generic writing `outSizes` x `accType` (filled with `init`):
/// iteration space of `rank` dims, inputs read through `inputMaps`, output
/// through `outMap`, `reduced[i]` marks reduction dimensions. `body` gets
/// the input elements then the accumulator, returns the new accumulator.
Value buildReduction(OpBuilder &b, Location loc,
                     ArrayRef<OpFoldResult> outSizes, Type accType, double init,
                     ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                     AffineMap outMap, ArrayRef<bool> reduced, BodyFn body);

/// Identity map of rank `rank`, and the map dropping its last dimension.
AffineMap identityMap(MLIRContext *ctx, unsigned rank);
AffineMap dropLastDimMap(MLIRContext *ctx, unsigned rank);

/// Collapses a tensor to 2-D [prod(leading), last] and back.
Value collapseToMatrix(OpBuilder &b, Location loc, Value x);
Value expandFromMatrix(OpBuilder &b, Location loc, Value m,
                       RankedTensorType type, ArrayRef<OpFoldResult> leading);

/// The slice [start, start + count) of `x` along dimension `dim` (full
/// extent elsewhere), and the insertion of such a part into `into` from
/// `start`. Split, concat, the GLU halves and packed-QKV heads are all this
/// with constants; attention's query tiles and the loss's chunks with
/// run-time bounds (the sliced dimension is then dynamic).
Value sliceAlong(OpBuilder &b, Location loc, Value x, int64_t dim,
                 OpFoldResult start, OpFoldResult count);
Value sliceAlong(OpBuilder &b, Location loc, Value x, int64_t dim,
                 int64_t start, int64_t count);
Value insertAlong(OpBuilder &b, Location loc, Value part, Value into,
                  int64_t dim, OpFoldResult start);
Value insertAlong(OpBuilder &b, Location loc, Value part, Value into,
                  int64_t dim, int64_t start);

/// RMS normalisation over the last dimension: returns {y, rstd}.
std::pair<Value, Value> buildRmsNorm(OpBuilder &b, Location loc, Value x,
                                     Value weight, double eps, bool unitOffset,
                                     Type statElem);

/// RoPE of x [B, T, H, D] at `positions` [B, T]: rotate-half pairs, or
/// (2i, 2i + 1) pairs with `interleaved`. With `inverse`, rotates by the
/// negative angle (the gradient).
Value buildRope(OpBuilder &b, Location loc, Value x, Value positions,
                double theta, int64_t rotaryDim, Attribute scaling,
                bool inverse = false, bool interleaved = false);

} // namespace mlir::tfm::lowering

#endif // TFM_LIB_CONVERSION_TFMTOLINALG_LOWERINGUTILS_H
