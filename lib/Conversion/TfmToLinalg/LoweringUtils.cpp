//===- LoweringUtils.cpp - helpers shared by tfm-to-linalg patterns -------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::tfm::lowering;

Type mlir::tfm::lowering::computeType(Type elem) {
  if (elem.isF64())
    return elem;
  return Float32Type::get(elem.getContext());
}

Value mlir::tfm::lowering::castFloat(OpBuilder &b, Location loc, Value v,
                                     Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (cast<FloatType>(from).getWidth() < cast<FloatType>(to).getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

Value mlir::tfm::lowering::constFloat(OpBuilder &b, Location loc, Type type,
                                      double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

SmallVector<OpFoldResult>
mlir::tfm::lowering::sizesOf(OpBuilder &b, Location loc, Value tensor) {
  return tensor::getMixedSizes(b, loc, tensor);
}

Value mlir::tfm::lowering::emptyTensor(OpBuilder &b, Location loc,
                                       ArrayRef<OpFoldResult> sizes,
                                       Type elem) {
  return tensor::EmptyOp::create(b, loc, sizes, elem);
}

Value mlir::tfm::lowering::filledTensor(OpBuilder &b, Location loc,
                                        ArrayRef<OpFoldResult> sizes, Type elem,
                                        double value) {
  Value empty = emptyTensor(b, loc, sizes, elem);
  Value scalar = constFloat(b, loc, elem, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

AffineMap mlir::tfm::lowering::identityMap(MLIRContext *ctx, unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx);
}

AffineMap mlir::tfm::lowering::dropLastDimMap(MLIRContext *ctx, unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx).getMajorSubMap(rank - 1);
}

Value mlir::tfm::lowering::buildMap(OpBuilder &b, Location loc,
                                    ArrayRef<OpFoldResult> sizes, Type elem,
                                    ValueRange inputs,
                                    ArrayRef<AffineMap> inputMaps,
                                    BodyFn body) {
  unsigned rank = sizes.size();
  Value init = emptyTensor(b, loc, sizes, elem);
  SmallVector<AffineMap> maps;
  for (size_t i = 0; i < inputs.size(); ++i)
    maps.push_back(inputMaps.empty() ? identityMap(b.getContext(), rank)
                                     : inputMaps[i]);
  maps.push_back(identityMap(b.getContext(), rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value out = body(nb, nloc, args.drop_back());
        yieldValue(nb, nloc, out);
      });
  return generic.getResult(0);
}

Value mlir::tfm::lowering::buildElementwise(OpBuilder &b, Location loc,
                                            ValueRange inputs, BodyFn body) {
  auto type = cast<RankedTensorType>(inputs[0].getType());
  Type elem = type.getElementType();
  Type ct = computeType(elem);
  return buildMap(b, loc, sizesOf(b, loc, inputs[0]), elem, inputs, {},
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    SmallVector<Value> wide;
                    for (Value a : args)
                      wide.push_back(castFloat(nb, nloc, a, ct));
                    return castFloat(nb, nloc, body(nb, nloc, wide), elem);
                  });
}

Value mlir::tfm::lowering::roundTensor(OpBuilder &b, Location loc, Value x,
                                       Type elem) {
  if (cast<RankedTensorType>(x.getType()).getElementType() == elem)
    return x;
  return buildMap(b, loc, sizesOf(b, loc, x), elem, ValueRange{x}, {},
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    return castFloat(nb, l, a[0], elem);
                  });
}

Value mlir::tfm::lowering::reduceLastDim(OpBuilder &b, Location loc, Value x,
                                         Type accType, double init,
                                         BodyFn combine) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> sizes = sizesOf(b, loc, x);
  sizes.pop_back();
  Value acc = filledTensor(b, loc, sizes, accType, init);
  SmallVector<AffineMap> maps = {identityMap(b.getContext(), rank),
                                 dropLastDimMap(b.getContext(), rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.back() = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{acc.getType()}, ValueRange{x}, ValueRange{acc}, maps,
      iters, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value e = castFloat(nb, nloc, args[0], accType);
        yieldValue(nb, nloc, combine(nb, nloc, {e, args[1]}));
      });
  return generic.getResult(0);
}

Value mlir::tfm::lowering::buildReduction(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> outSizes, Type accType,
    double init, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
    AffineMap outMap, ArrayRef<bool> reduced, BodyFn body) {
  Value acc = filledTensor(b, loc, outSizes, accType, init);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(outMap);
  SmallVector<utils::IteratorType> iters;
  for (bool r : reduced)
    iters.push_back(r ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, maps,
             iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               yieldValue(nb, nloc, body(nb, nloc, args));
             })
      .getResult(0);
}

/// [[0 .. rank-2], [rank-1]]: the leading dimensions as matrix rows.
static SmallVector<ReassociationIndices> rowsAndLastDim(int64_t rank) {
  ReassociationIndices lead, last{rank - 1};
  for (int64_t i = 0; i < rank - 1; ++i)
    lead.push_back(i);
  return {lead, last};
}

Value mlir::tfm::lowering::collapseToMatrix(OpBuilder &b, Location loc,
                                            Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (rank == 2)
    return x;
  return tensor::CollapseShapeOp::create(b, loc, x, rowsAndLastDim(rank));
}

Value mlir::tfm::lowering::expandFromMatrix(OpBuilder &b, Location loc, Value m,
                                            RankedTensorType type,
                                            ArrayRef<OpFoldResult> leading) {
  int64_t rank = type.getRank();
  if (rank == 2)
    return m;
  SmallVector<OpFoldResult> outShape(leading);
  outShape.push_back(b.getIndexAttr(type.getShape().back()));
  return tensor::ExpandShapeOp::create(b, loc, type, m, rowsAndLastDim(rank),
                                       outShape);
}

Value mlir::tfm::lowering::mulAdd(OpBuilder &b, Location loc, Value x, Value y,
                                  Value acc, Type type) {
  Value lhs = castFloat(b, loc, x, type);
  Value rhs = castFloat(b, loc, y, type);
  Value product = arith::MulFOp::create(b, loc, lhs, rhs);
  return arith::AddFOp::create(b, loc, product, acc);
}

Value mlir::tfm::lowering::sliceAlong(OpBuilder &b, Location loc, Value x,
                                      int64_t dim, OpFoldResult start,
                                      OpFoldResult count) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<OpFoldResult> off(rank, b.getIndexAttr(0)),
      sizes = sizesOf(b, loc, x);
  off[dim] = start;
  sizes[dim] = count;
  // The result type follows the sizes: static where `count` is a constant.
  return tensor::ExtractSliceOp::create(
      b, loc, x, off, sizes,
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

Value mlir::tfm::lowering::sliceAlong(OpBuilder &b, Location loc, Value x,
                                      int64_t dim, int64_t start,
                                      int64_t count) {
  return sliceAlong(b, loc, x, dim, b.getIndexAttr(start),
                    b.getIndexAttr(count));
}

Value mlir::tfm::lowering::insertAlong(OpBuilder &b, Location loc, Value part,
                                       Value into, int64_t dim,
                                       OpFoldResult start) {
  int64_t rank = cast<RankedTensorType>(part.getType()).getRank();
  SmallVector<OpFoldResult> off(rank, b.getIndexAttr(0));
  off[dim] = start;
  return tensor::InsertSliceOp::create(
      b, loc, part, into, off, sizesOf(b, loc, part),
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

Value mlir::tfm::lowering::insertAlong(OpBuilder &b, Location loc, Value part,
                                       Value into, int64_t dim, int64_t start) {
  return insertAlong(b, loc, part, into, dim, b.getIndexAttr(start));
}

std::pair<Value, Value>
mlir::tfm::lowering::buildRmsNorm(OpBuilder &b, Location loc, Value x,
                                  Value weight, double eps, bool unitOffset,
                                  Type statElem) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elem = type.getElementType();
  unsigned rank = type.getRank();
  int64_t n = type.getShape().back();
  // rstd = 1 / sqrt(mean(x^2) + eps), accumulated in the statistic type.
  Value sumSq =
      reduceLastDim(b, loc, x, statElem, 0.0,
                    [&](OpBuilder &nb, Location nloc, ValueRange a) {
                      Value sq = arith::MulFOp::create(nb, nloc, a[0], a[0]);
                      return arith::AddFOp::create(nb, nloc, sq, a[1]);
                    });
  Value rstd =
      buildMap(b, loc, sizesOf(b, loc, sumSq), statElem, ValueRange{sumSq}, {},
               [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                 Value mean = arith::DivFOp::create(
                     nb, nloc, a[0], constFloat(nb, nloc, statElem, double(n)));
                 Value v = arith::AddFOp::create(
                     nb, nloc, mean, constFloat(nb, nloc, statElem, eps));
                 Value one = constFloat(nb, nloc, statElem, 1.0);
                 return arith::DivFOp::create(
                     nb, nloc, one, math::SqrtOp::create(nb, nloc, v));
               });
  // y = (x * rstd) rounded to the element type, times w (HF Llama), or
  // x * rstd * (1 + w) all in the compute type (HF Gemma).
  MLIRContext *ctx = b.getContext();
  AffineMap wMap = AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, ctx);
  Type ct = computeType(elem);
  Value y = buildMap(
      b, loc, sizesOf(b, loc, x), elem, ValueRange{x, rstd, weight},
      {identityMap(ctx, rank), dropLastDimMap(ctx, rank), wMap},
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value xs = castFloat(nb, nloc, a[0], statElem);
        Value normed = arith::MulFOp::create(nb, nloc, xs, a[1]);
        if (unitOffset) {
          Value w = castFloat(nb, nloc, a[2], statElem);
          Value g = arith::AddFOp::create(nb, nloc, w,
                                          constFloat(nb, nloc, statElem, 1.0));
          return castFloat(nb, nloc, arith::MulFOp::create(nb, nloc, normed, g),
                           elem);
        }
        Value rounded = castFloat(nb, nloc, normed, elem);
        Value lhs = castFloat(nb, nloc, rounded, ct);
        Value rhs = castFloat(nb, nloc, a[2], ct);
        Value prod = arith::MulFOp::create(nb, nloc, lhs, rhs);
        return castFloat(nb, nloc, prod, elem);
      });
  return {y, rstd};
}
