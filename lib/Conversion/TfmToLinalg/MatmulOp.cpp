//===- MatmulOp.cpp - tfm.matmul to linalg.matmul -------------------------===//
//
// [..., K] x [N, K]ᵀ: the leading dimensions collapse into M so one 2-D
// linalg.matmul (transposed-B form for HF weights) does the work; after
// bufferization tfm-linalg-matmul-to-blas can hand it to BLAS.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

struct MatmulLowering : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elem = resultType.getElementType();
    Type acc = computeType(elem);
    bool nt = op.getTranspose() == Transpose::nt;
    Value x = collapseToMatrix(rewriter, loc, op.getX());
    int64_t n =
        cast<RankedTensorType>(op.getW().getType()).getDimSize(nt ? 0 : 1);
    SmallVector<OpFoldResult> mn = {tensor::getMixedSize(rewriter, loc, x, 0),
                                    rewriter.getIndexAttr(n)};
    // Accumulate in f32 for bf16/f16 inputs; round once at the end.
    Value init = filledTensor(rewriter, loc, mn, acc, 0.0);
    Value product;
    if (acc == elem) {
      product = nt ? linalg::MatmulTransposeBOp::create(
                         rewriter, loc, TypeRange{init.getType()},
                         ValueRange{x, op.getW()}, ValueRange{init})
                         .getResult(0)
                   : linalg::MatmulOp::create(
                         rewriter, loc, TypeRange{init.getType()},
                         ValueRange{x, op.getW()}, ValueRange{init})
                         .getResult(0);
    } else {
      MLIRContext *ctx = rewriter.getContext();
      AffineExpr m = rewriter.getAffineDimExpr(0),
                 nn = rewriter.getAffineDimExpr(1),
                 k = rewriter.getAffineDimExpr(2);
      SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {m, k}, ctx),
                                     nt ? AffineMap::get(3, 0, {nn, k}, ctx)
                                        : AffineMap::get(3, 0, {k, nn}, ctx),
                                     AffineMap::get(3, 0, {m, nn}, ctx)};
      product =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{init.getType()},
              ValueRange{x, op.getW()}, ValueRange{init}, maps,
              SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                               utils::IteratorType::parallel,
                                               utils::IteratorType::reduction},
              [&](OpBuilder &b, Location l, ValueRange a) {
                yieldValue(b, l, mulAdd(b, l, a[0], a[1], a[2], acc));
              })
              .getResult(0);
    }
    // Bias and rounding to the result type in one pass.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<Value> ins = {product};
    SmallVector<AffineMap> maps = {identityMap(ctx, 2)};
    if (op.getBias()) {
      ins.push_back(op.getBias());
      maps.push_back(AffineMap::get(2, 0, {rewriter.getAffineDimExpr(1)}, ctx));
    }
    Value out = product;
    if (op.getBias() || acc != elem)
      out = buildMap(rewriter, loc, mn, elem, ins, maps,
                     [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                       Value v = a[0];
                       if (a.size() > 1) {
                         // HF adds the bias in the element type.
                         v = castFloat(b, l, castFloat(b, l, v, elem), acc);
                         v = arith::AddFOp::create(b, l, v,
                                                   castFloat(b, l, a[1], acc));
                       }
                       return castFloat(b, l, v, elem);
                     });
    SmallVector<OpFoldResult> leading = sizesOf(rewriter, loc, op.getX());
    leading.pop_back();
    rewriter.replaceOp(
        op, expandFromMatrix(rewriter, loc, out, resultType, leading));
    return success();
  }
};

/// dw = dyᵀ·x (nt, [N, K]) or xᵀ·dy (nn, [K, N]) over all rows: one
/// transposed-A matmul on the collapsed [M, ·] matrices.
struct MatmulGradWeightLowering : OpRewritePattern<MatmulGradWeightOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulGradWeightOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elem = resultType.getElementType(), acc = computeType(elem);
    Value dy = collapseToMatrix(rewriter, loc, op.getDy());
    Value x = collapseToMatrix(rewriter, loc, op.getX());
    bool nt = op.getTranspose() == Transpose::nt;
    Value lhs = nt ? dy : x, rhs = nt ? x : dy;
    SmallVector<OpFoldResult> sizes = {
        rewriter.getIndexAttr(resultType.getDimSize(0)),
        rewriter.getIndexAttr(resultType.getDimSize(1))};
    Value init = filledTensor(rewriter, loc, sizes, acc, 0.0);
    Value product;
    if (acc == elem) {
      product = linalg::MatmulTransposeAOp::create(
                    rewriter, loc, TypeRange{init.getType()},
                    ValueRange{lhs, rhs}, ValueRange{init})
                    .getResult(0);
    } else {
      MLIRContext *ctx = rewriter.getContext();
      AffineExpr i = rewriter.getAffineDimExpr(0),
                 j = rewriter.getAffineDimExpr(1),
                 m = rewriter.getAffineDimExpr(2);
      product = buildReduction(
          rewriter, loc, sizes, acc, 0.0, ValueRange{lhs, rhs},
          {AffineMap::get(3, 0, {m, i}, ctx),
           AffineMap::get(3, 0, {m, j}, ctx)},
          AffineMap::get(3, 0, {i, j}, ctx), {false, false, true},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return mulAdd(b, l, a[0], a[1], a[2], acc);
          });
      product = roundTensor(rewriter, loc, product, elem);
    }
    rewriter.replaceOp(op, product);
    return success();
  }
};

struct SumLeadingLowering : OpRewritePattern<SumLeadingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SumLeadingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getX();
    auto xt = cast<RankedTensorType>(x.getType());
    unsigned rank = xt.getRank();
    Type elem = xt.getElementType(), acc = computeType(elem);
    SmallVector<bool> reduced(rank, true);
    reduced.back() = false;
    SmallVector<OpFoldResult> sizes = {
        rewriter.getIndexAttr(xt.getShape().back())};
    Value sum = buildReduction(
        rewriter, loc, sizes, acc, 0.0, ValueRange{x},
        {identityMap(rewriter.getContext(), rank)},
        AffineMap::get(rank, 0, {rewriter.getAffineDimExpr(rank - 1)},
                       rewriter.getContext()),
        reduced, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(b, l, a[1], castFloat(b, l, a[0], acc));
        });
    rewriter.replaceOp(op, roundTensor(rewriter, loc, sum, elem));
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmMatmulToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, MatmulGradWeightLowering, SumLeadingLowering>(
      patterns.getContext());
}
