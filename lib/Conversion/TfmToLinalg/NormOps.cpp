//===- NormOps.cpp - normalisation tfm ops to linalg ----------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

Type statElemOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

struct RmsNormLowering : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RmsNormOp op, PatternRewriter &rewriter) const override {
    auto [y, rstd] = buildRmsNorm(rewriter, op.getLoc(), op.getX(), op.getWeight(),
                                  op.getEps().convertToDouble(), op.getUnitOffset(),
                                  statElemOf(op.getRstd()));
    rewriter.replaceOp(op, {y, rstd});
    return success();
  }
};

struct FusedResidualRmsNormLowering : OpRewritePattern<FusedResidualRmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedResidualRmsNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value sum = buildElementwise(rewriter, loc, ValueRange{op.getX(), op.getResidual()},
                                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                   return arith::AddFOp::create(b, l, a[0], a[1]);
                                 });
    auto [y, rstd] = buildRmsNorm(rewriter, loc, sum, op.getWeight(),
                                  op.getEps().convertToDouble(), op.getUnitOffset(),
                                  statElemOf(op.getRstd()));
    rewriter.replaceOp(op, {y, sum, rstd});
    return success();
  }
};

struct LayerNormLowering : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getX();
    auto type = cast<RankedTensorType>(x.getType());
    unsigned rank = type.getRank();
    Type elem = type.getElementType(), st = statElemOf(op.getRstd());
    double n = double(type.getShape().back());
    Value sum = reduceLastDim(rewriter, loc, x, st, 0.0,
                              [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                return arith::AddFOp::create(b, l, a[0], a[1]);
                              });
    SmallVector<OpFoldResult> statSizes = sizesOf(rewriter, loc, sum);
    Value mean = buildMap(rewriter, loc, statSizes, st, ValueRange{sum}, {},
                          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                            return arith::DivFOp::create(b, l, a[0], constFloat(b, l, st, n));
                          });
    // sum((x - mean)^2) over the last dimension.
    Value acc = filledTensor(rewriter, loc, statSizes, st, 0.0);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.back() = utils::IteratorType::reduction;
    Value sq = linalg::GenericOp::create(
                   rewriter, loc, TypeRange{acc.getType()}, ValueRange{x, mean},
                   ValueRange{acc},
                   SmallVector<AffineMap>{identityMap(ctx, rank), dropLastDimMap(ctx, rank),
                                          dropLastDimMap(ctx, rank)},
                   iters,
                   [&](OpBuilder &b, Location l, ValueRange a) {
                     Value d = arith::SubFOp::create(b, l, castFloat(b, l, a[0], st), a[1]);
                     yieldValue(
                         b, l, arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, d, d), a[2]));
                   })
                   .getResult(0);
    double eps = op.getEps().convertToDouble();
    Value rstd = buildMap(rewriter, loc, statSizes, st, ValueRange{sq}, {},
                          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                            Value var = arith::DivFOp::create(b, l, a[0], constFloat(b, l, st, n));
                            Value v = arith::AddFOp::create(b, l, var, constFloat(b, l, st, eps));
                            return arith::DivFOp::create(b, l, constFloat(b, l, st, 1.0),
                                                         math::SqrtOp::create(b, l, v));
                          });
    AffineMap wMap = AffineMap::get(rank, 0, {rewriter.getAffineDimExpr(rank - 1)}, ctx);
    SmallVector<Value> ins = {x, mean, rstd, op.getWeight()};
    SmallVector<AffineMap> maps = {identityMap(ctx, rank), dropLastDimMap(ctx, rank),
                                   dropLastDimMap(ctx, rank), wMap};
    if (op.getBias()) {
      ins.push_back(op.getBias());
      maps.push_back(wMap);
    }
    Value y = buildMap(rewriter, loc, sizesOf(rewriter, loc, x), elem, ins, maps,
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         Value d = arith::SubFOp::create(b, l, castFloat(b, l, a[0], st), a[1]);
                         Value v = arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, d, a[2]),
                                                         castFloat(b, l, a[3], st));
                         if (a.size() > 4)
                           v = arith::AddFOp::create(b, l, v, castFloat(b, l, a[4], st));
                         return castFloat(b, l, v, elem);
                       });
    rewriter.replaceOp(op, {y, mean, rstd});
    return success();
  }
};

/// RMSNorm of one of q/k in `mode`: over head_dim, or over all heads.
std::pair<Value, Value> normHeads(OpBuilder &b, Location loc, Value x, Value w,
                                  double eps, bool unitOffset, bool perHead,
                                  Type st) {
  if (perHead)
    return buildRmsNorm(b, loc, x, w, eps, unitOffset, st);
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  Value flat = tensor::CollapseShapeOp::create(b, loc, x, groups);
  auto [y, rstd] = buildRmsNorm(b, loc, flat, w, eps, unitOffset, st);
  SmallVector<OpFoldResult> shape = sizesOf(b, loc, x);
  Value back = tensor::ExpandShapeOp::create(b, loc, type, y, groups, shape);
  return {back, rstd};
}

struct QkNormLowering : OpRewritePattern<QkNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QkNormOp op, PatternRewriter &rewriter) const override {
    bool perHead = op.getMode() == QkNormMode::per_head;
    double eps = op.getEps().convertToDouble();
    auto [q, rq] = normHeads(rewriter, op.getLoc(), op.getQ(), op.getQWeight(), eps,
                             op.getUnitOffset(), perHead, statElemOf(op.getQRstd()));
    auto [k, rk] = normHeads(rewriter, op.getLoc(), op.getK(), op.getKWeight(), eps,
                             op.getUnitOffset(), perHead, statElemOf(op.getKRstd()));
    rewriter.replaceOp(op, {q, k, rq, rk});
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmNormToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RmsNormLowering, FusedResidualRmsNormLowering, LayerNormLowering,
               QkNormLowering>(patterns.getContext());
}
