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
  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    auto [y, rstd] = buildRmsNorm(rewriter, op.getLoc(), op.getX(),
                                  op.getWeight(), op.getEps().convertToDouble(),
                                  op.getUnitOffset(), statElemOf(op.getRstd()));
    rewriter.replaceOp(op, {y, rstd});
    return success();
  }
};

struct FusedResidualRmsNormLowering : OpRewritePattern<FusedResidualRmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedResidualRmsNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value sum =
        buildElementwise(rewriter, loc, ValueRange{op.getX(), op.getResidual()},
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return arith::AddFOp::create(b, l, a[0], a[1]);
                         });
    auto [y, rstd] = buildRmsNorm(rewriter, loc, sum, op.getWeight(),
                                  op.getEps().convertToDouble(),
                                  op.getUnitOffset(), statElemOf(op.getRstd()));
    rewriter.replaceOp(op, {y, sum, rstd});
    return success();
  }
};

struct LayerNormLowering : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getX();
    auto type = cast<RankedTensorType>(x.getType());
    unsigned rank = type.getRank();
    Type elem = type.getElementType(), st = statElemOf(op.getRstd());
    double n = double(type.getShape().back());
    Value sum =
        reduceLastDim(rewriter, loc, x, st, 0.0,
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        return arith::AddFOp::create(b, l, a[0], a[1]);
                      });
    SmallVector<OpFoldResult> statSizes = sizesOf(rewriter, loc, sum);
    Value mean = buildMap(rewriter, loc, statSizes, st, ValueRange{sum}, {},
                          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                            return arith::DivFOp::create(
                                b, l, a[0], constFloat(b, l, st, n));
                          });
    // sum((x - mean)^2) over the last dimension.
    Value acc = filledTensor(rewriter, loc, statSizes, st, 0.0);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.back() = utils::IteratorType::reduction;
    Value sq =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{acc.getType()}, ValueRange{x, mean},
            ValueRange{acc},
            SmallVector<AffineMap>{identityMap(ctx, rank),
                                   dropLastDimMap(ctx, rank),
                                   dropLastDimMap(ctx, rank)},
            iters,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value d =
                  arith::SubFOp::create(b, l, castFloat(b, l, a[0], st), a[1]);
              yieldValue(b, l,
                         arith::AddFOp::create(
                             b, l, arith::MulFOp::create(b, l, d, d), a[2]));
            })
            .getResult(0);
    double eps = op.getEps().convertToDouble();
    Value rstd = buildMap(
        rewriter, loc, statSizes, st, ValueRange{sq}, {},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value var =
              arith::DivFOp::create(b, l, a[0], constFloat(b, l, st, n));
          Value v = arith::AddFOp::create(b, l, var, constFloat(b, l, st, eps));
          Value one = constFloat(b, l, st, 1.0);
          return arith::DivFOp::create(b, l, one,
                                       math::SqrtOp::create(b, l, v));
        });
    AffineMap wMap =
        AffineMap::get(rank, 0, {rewriter.getAffineDimExpr(rank - 1)}, ctx);
    SmallVector<Value> ins = {x, mean, rstd, op.getWeight()};
    SmallVector<AffineMap> maps = {identityMap(ctx, rank),
                                   dropLastDimMap(ctx, rank),
                                   dropLastDimMap(ctx, rank), wMap};
    if (op.getBias()) {
      ins.push_back(op.getBias());
      maps.push_back(wMap);
    }
    Value y = buildMap(
        rewriter, loc, sizesOf(rewriter, loc, x), elem, ins, maps,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value d =
              arith::SubFOp::create(b, l, castFloat(b, l, a[0], st), a[1]);
          Value normed = arith::MulFOp::create(b, l, d, a[2]);
          Value v =
              arith::MulFOp::create(b, l, normed, castFloat(b, l, a[3], st));
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
  LogicalResult matchAndRewrite(QkNormOp op,
                                PatternRewriter &rewriter) const override {
    bool perHead = op.getMode() == QkNormMode::per_head;
    double eps = op.getEps().convertToDouble();
    auto [q, rq] =
        normHeads(rewriter, op.getLoc(), op.getQ(), op.getQWeight(), eps,
                  op.getUnitOffset(), perHead, statElemOf(op.getQRstd()));
    auto [k, rk] =
        normHeads(rewriter, op.getLoc(), op.getK(), op.getKWeight(), eps,
                  op.getUnitOffset(), perHead, statElemOf(op.getKRstd()));
    rewriter.replaceOp(op, {q, k, rq, rk});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

/// Maps and iterator kinds for the three reductions norm backwards need.
struct NormMaps {
  NormMaps(OpBuilder &b, unsigned rank)
      : ctx(b.getContext()), rank(rank), id(identityMap(ctx, rank)),
        row(dropLastDimMap(ctx, rank)),
        last(AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, ctx)) {}
  /// Reduce over the last dimension (per row), or over all rows (per column).
  SmallVector<bool> overLast() const {
    SmallVector<bool> r(rank, false);
    r.back() = true;
    return r;
  }
  SmallVector<bool> overRows() const {
    SmallVector<bool> r(rank, true);
    r.back() = false;
    return r;
  }
  MLIRContext *ctx;
  unsigned rank;
  AffineMap id, row, last;
};

/// g = w, or 1 + w with the Gemma offset, in the statistic type.
Value normGain(OpBuilder &b, Location l, Value w, Type st, bool unitOffset) {
  Value g = castFloat(b, l, w, st);
  return unitOffset ? arith::AddFOp::create(b, l, g, constFloat(b, l, st, 1.0))
                          .getResult()
                    : g;
}

struct RmsNormBackwardLowering : OpRewritePattern<RmsNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RmsNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = op.getDy(), x = op.getX(), w = op.getWeight(),
          rstd = op.getRstd();
    auto xt = cast<RankedTensorType>(x.getType());
    Type elem = xt.getElementType(), st = statElemOf(rstd);
    bool unit = op.getUnitOffset();
    NormMaps m(rewriter, xt.getRank());
    double n = double(xt.getShape().back());
    auto f = [&](OpBuilder &b, Location l, Value v) {
      return castFloat(b, l, v, st);
    };
    // s[row] = Σ dy·g·x̂
    Value s = buildReduction(
        rewriter, loc, sizesOf(rewriter, loc, rstd), st, 0.0,
        ValueRange{dy, x, w, rstd}, {m.id, m.id, m.last, m.row}, m.row,
        m.overLast(), [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value xhat = arith::MulFOp::create(b, l, f(b, l, a[1]), a[3]);
          Value dyv = f(b, l, a[0]);
          Value gain = normGain(b, l, a[2], st, unit);
          Value t = arith::MulFOp::create(
              b, l, arith::MulFOp::create(b, l, dyv, gain), xhat);
          return arith::AddFOp::create(b, l, a[4], t);
        });
    // dx = rstd·(dy·g − x̂·s/N) (+ residual_grad, added after rounding to
    // the element type as a separate tfm.add would).
    SmallVector<Value> dxInputs{dy, x, w, rstd, s};
    SmallVector<AffineMap> dxMaps{m.id, m.id, m.last, m.row, m.row};
    Value residualGrad = op.getResidualGrad();
    if (residualGrad) {
      dxInputs.push_back(residualGrad);
      dxMaps.push_back(m.id);
    }
    Value dx = buildMap(
        rewriter, loc, sizesOf(rewriter, loc, x), elem, dxInputs, dxMaps,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value xhat = arith::MulFOp::create(b, l, f(b, l, a[1]), a[3]);
          Value dyv = f(b, l, a[0]);
          Value gain = normGain(b, l, a[2], st, unit);
          Value dyg = arith::MulFOp::create(b, l, dyv, gain);
          Value mean =
              arith::DivFOp::create(b, l, a[4], constFloat(b, l, st, n));
          Value v = arith::MulFOp::create(
              b, l, a[3],
              arith::SubFOp::create(b, l, dyg,
                                    arith::MulFOp::create(b, l, xhat, mean)));
          Value rounded = castFloat(b, l, v, elem);
          if (!residualGrad)
            return rounded;
          // As tfm.add lowers: widened to the compute type, summed, rounded.
          Type ct = computeType(elem);
          Value term = castFloat(b, l, rounded, ct);
          Value residual = castFloat(b, l, a[5], ct);
          Value sum = arith::AddFOp::create(b, l, residual, term);
          return castFloat(b, l, sum, elem);
        });
    // dw = Σ_rows dy·x̂
    Value dwAcc = buildReduction(
        rewriter, loc, {rewriter.getIndexAttr(xt.getShape().back())}, st, 0.0,
        ValueRange{dy, x, rstd}, {m.id, m.id, m.row}, m.last, m.overRows(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value xhat = arith::MulFOp::create(b, l, f(b, l, a[1]), a[2]);
          return arith::AddFOp::create(
              b, l, a[3], arith::MulFOp::create(b, l, f(b, l, a[0]), xhat));
        });
    Value dw = roundTensor(rewriter, loc, dwAcc, elem);
    rewriter.replaceOp(op, {dx, dw});
    return success();
  }
};

struct LayerNormBackwardLowering : OpRewritePattern<LayerNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = op.getDy(), x = op.getX(), w = op.getWeight(),
          mean = op.getMean(), rstd = op.getRstd();
    auto xt = cast<RankedTensorType>(x.getType());
    Type elem = xt.getElementType(), st = statElemOf(rstd);
    NormMaps m(rewriter, xt.getRank());
    double n = double(xt.getShape().back());
    auto f = [&](OpBuilder &b, Location l, Value v) {
      return castFloat(b, l, v, st);
    };
    auto xhatOf = [&](OpBuilder &b, Location l, Value xv, Value mv,
                      Value rv) -> Value {
      return arith::MulFOp::create(
          b, l, arith::SubFOp::create(b, l, f(b, l, xv), mv), rv);
    };
    SmallVector<OpFoldResult> rows = sizesOf(rewriter, loc, rstd);
    // a = Σ dy·w, c = Σ dy·w·x̂ per row
    Value a = buildReduction(
        rewriter, loc, rows, st, 0.0, ValueRange{dy, w}, {m.id, m.last}, m.row,
        m.overLast(), [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          Value dyv = f(b, l, v[0]);
          Value wv = f(b, l, v[1]);
          return arith::AddFOp::create(b, l, v[2],
                                       arith::MulFOp::create(b, l, dyv, wv));
        });
    Value c = buildReduction(
        rewriter, loc, rows, st, 0.0, ValueRange{dy, w, x, mean, rstd},
        {m.id, m.last, m.id, m.row, m.row}, m.row, m.overLast(),
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          Value dyv = f(b, l, v[0]);
          Value wv = f(b, l, v[1]);
          Value dyw = arith::MulFOp::create(b, l, dyv, wv);
          return arith::AddFOp::create(
              b, l, v[5],
              arith::MulFOp::create(b, l, dyw, xhatOf(b, l, v[2], v[3], v[4])));
        });
    Value dx = buildMap(
        rewriter, loc, sizesOf(rewriter, loc, x), elem,
        ValueRange{dy, w, x, mean, rstd, a, c},
        {m.id, m.last, m.id, m.row, m.row, m.row, m.row},
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          Value dyv = f(b, l, v[0]);
          Value wv = f(b, l, v[1]);
          Value dyw = arith::MulFOp::create(b, l, dyv, wv);
          Value nn = constFloat(b, l, st, n);
          Value centred = arith::SubFOp::create(
              b, l, dyw, arith::DivFOp::create(b, l, v[5], nn));
          Value xhat = xhatOf(b, l, v[2], v[3], v[4]);
          Value cOverN = arith::DivFOp::create(b, l, v[6], nn);
          Value t = arith::SubFOp::create(
              b, l, centred, arith::MulFOp::create(b, l, xhat, cOverN));
          return castFloat(b, l, arith::MulFOp::create(b, l, v[4], t), elem);
        });
    OpFoldResult nSize = rewriter.getIndexAttr(xt.getShape().back());
    Value dwAcc = buildReduction(
        rewriter, loc, {nSize}, st, 0.0, ValueRange{dy, x, mean, rstd},
        {m.id, m.id, m.row, m.row}, m.last, m.overRows(),
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          Value dyv = f(b, l, v[0]);
          Value xhat = xhatOf(b, l, v[1], v[2], v[3]);
          return arith::AddFOp::create(b, l, v[4],
                                       arith::MulFOp::create(b, l, dyv, xhat));
        });
    Value dbAcc = buildReduction(
        rewriter, loc, {nSize}, st, 0.0, ValueRange{dy}, {m.id}, m.last,
        m.overRows(), [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          return arith::AddFOp::create(b, l, v[1], f(b, l, v[0]));
        });
    auto round = [&](Value acc) {
      return roundTensor(rewriter, loc, acc, elem);
    };
    rewriter.replaceOp(op, {dx, round(dwAcc), round(dbAcc)});
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmNormToLinalgPatterns(RewritePatternSet &patterns) {
  patterns
      .add<RmsNormLowering, FusedResidualRmsNormLowering, LayerNormLowering,
           QkNormLowering, RmsNormBackwardLowering, LayerNormBackwardLowering>(
          patterns.getContext());
}
