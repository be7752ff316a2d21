//===- ElementwiseOps.cpp - element-wise tfm ops to linalg ----------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

Value silu(OpBuilder &b, Location loc, Value x) {
  // x * sigmoid(x) = x / (1 + exp(-x))
  Type t = x.getType();
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  Value den = arith::AddFOp::create(b, loc, constFloat(b, loc, t, 1.0), e);
  return arith::DivFOp::create(b, loc, x, den);
}

Value geluTanh(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  double c = std::sqrt(2.0 / M_PI);
  Value x3 =
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
  Value inner = arith::AddFOp::create(
      b, loc, x,
      arith::MulFOp::create(b, loc, constFloat(b, loc, t, 0.044715), x3));
  Value th = math::TanhOp::create(
      b, loc, arith::MulFOp::create(b, loc, constFloat(b, loc, t, c), inner));
  Value onePlus = arith::AddFOp::create(b, loc, constFloat(b, loc, t, 1.0), th);
  Value half = arith::MulFOp::create(b, loc, constFloat(b, loc, t, 0.5), x);
  return arith::MulFOp::create(b, loc, half, onePlus);
}

template <typename OpTy> struct UnaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  using Fn = Value (*)(OpBuilder &, Location, Value);
  UnaryLowering(MLIRContext *ctx, Fn fn)
      : OpRewritePattern<OpTy>(ctx), fn(fn) {}
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value r = buildElementwise(rewriter, op.getLoc(), ValueRange{op.getX()},
                               [&](OpBuilder &b, Location loc, ValueRange a) {
                                 return fn(b, loc, a[0]);
                               });
    rewriter.replaceOp(op, r);
    return success();
  }
  Fn fn;
};

Value relu2(OpBuilder &b, Location loc, Value x) {
  Value r = arith::MaximumFOp::create(b, loc, x,
                                      constFloat(b, loc, x.getType(), 0.0));
  return arith::MulFOp::create(b, loc, r, r);
}

template <typename OpTy, typename ArithOp>
struct BinaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value r = buildElementwise(rewriter, op.getLoc(),
                               ValueRange{op.getLhs(), op.getRhs()},
                               [](OpBuilder &b, Location loc, ValueRange a) {
                                 return ArithOp::create(b, loc, a[0], a[1]);
                               });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ScaleLowering : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op,
                                PatternRewriter &rewriter) const override {
    Type elem = op.getType().getElementType();
    double factor = op.getFactor().convertToDouble();
    bool round = op.getRoundFactor();
    Value r = buildElementwise(
        rewriter, op.getLoc(), ValueRange{op.getX()},
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          // A Python scalar is applied as it is; a factor HF holds as a
          // tensor of the model's type (round_factor) is rounded first.
          Value f = round ? castFloat(b, loc, constFloat(b, loc, elem, factor),
                                      a[0].getType())
                          : constFloat(b, loc, a[0].getType(), factor);
          return arith::MulFOp::create(b, loc, a[0], f);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

Value softcap(OpBuilder &b, Location loc, Value x, double cap) {
  Type t = x.getType();
  Value c = constFloat(b, loc, t, cap);
  Value th = math::TanhOp::create(b, loc, arith::DivFOp::create(b, loc, x, c));
  return arith::MulFOp::create(b, loc, th, c);
}

struct SoftcapLowering : OpRewritePattern<SoftcapOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftcapOp op,
                                PatternRewriter &rewriter) const override {
    double cap = op.getCap().convertToDouble();
    Value r = buildElementwise(rewriter, op.getLoc(), ValueRange{op.getX()},
                               [&](OpBuilder &b, Location loc, ValueRange a) {
                                 return softcap(b, loc, a[0], cap);
                               });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// [..., 2I] -> (up = [..., :I], gate = [..., I:]), or with `gateFirst`
/// (gate = [..., :I], up = [..., I:]); returns {up, gate}.
std::pair<Value, Value> splitGlu(OpBuilder &b, Location loc, Value x,
                                 bool gateFirst) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t last = type.getRank() - 1, half = type.getShape().back() / 2;
  Value lo = sliceAlong(b, loc, x, last, 0, half),
        hi = sliceAlong(b, loc, x, last, half, half);
  return gateFirst ? std::pair(hi, lo) : std::pair(lo, hi);
}

/// [..., 2I] -> (up = [..., :I], gate = [..., I:]) -> up * act(gate).
template <typename OpTy> struct GluLowering : OpRewritePattern<OpTy> {
  using Fn = Value (*)(OpBuilder &, Location, Value);
  GluLowering(MLIRContext *ctx, Fn act)
      : OpRewritePattern<OpTy>(ctx), act(act) {}
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto [up, gate] = splitGlu(rewriter, loc, op.getX(), op.getGateFirst());
    // act(gate) is rounded to the element type before the product, as HF's
    // act_fn(gate) * up forms it (a no-op for f32).
    Type elem = cast<RankedTensorType>(up.getType()).getElementType();
    Value r = buildElementwise(
        rewriter, loc, ValueRange{up, gate},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value g = act(b, l, a[1]);
          g = castFloat(b, l, castFloat(b, l, g, elem), g.getType());
          return arith::MulFOp::create(b, l, a[0], g);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
  Fn act;
};

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  Value one = constFloat(b, loc, t, 1.0);
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

/// d σ(x)/dx = σ(x)(1 − σ(x)).
Value sigmoidDerivative(OpBuilder &b, Location loc, Value x) {
  Value s = sigmoid(b, loc, x);
  return arith::MulFOp::create(
      b, loc, s,
      arith::SubFOp::create(b, loc, constFloat(b, loc, x.getType(), 1.0), s));
}

/// d silu(x)/dx = σ(x)(1 + x(1 − σ(x))).
Value siluDerivative(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value s = sigmoid(b, loc, x);
  Value oneMinus = arith::SubFOp::create(b, loc, constFloat(b, loc, t, 1.0), s);
  Value one = constFloat(b, loc, t, 1.0);
  Value inner = arith::AddFOp::create(
      b, loc, one, arith::MulFOp::create(b, loc, x, oneMinus));
  return arith::MulFOp::create(b, loc, s, inner);
}

/// d gelu_tanh(x)/dx = ½(1 + t) + ½x(1 − t²)c(1 + 3·0.044715x²).
Value geluTanhDerivative(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  auto cst = [&](double v) { return constFloat(b, loc, t, v); };
  double c = std::sqrt(2.0 / M_PI);
  Value x2 = arith::MulFOp::create(b, loc, x, x);
  Value cC = cst(c), cA = cst(0.044715), half = cst(0.5), one = cst(1.0);
  Value x3 = arith::MulFOp::create(b, loc, x2, x);
  Value poly =
      arith::AddFOp::create(b, loc, x, arith::MulFOp::create(b, loc, cA, x3));
  Value inner = arith::MulFOp::create(b, loc, cC, poly);
  Value th = math::TanhOp::create(b, loc, inner);
  Value left = arith::MulFOp::create(b, loc, half,
                                     arith::AddFOp::create(b, loc, one, th));
  Value th2 = arith::MulFOp::create(b, loc, th, th);
  Value sech2 = arith::SubFOp::create(b, loc, one, th2);
  Value dPoly = arith::AddFOp::create(
      b, loc, one, arith::MulFOp::create(b, loc, cst(3 * 0.044715), x2));
  Value dInner = arith::MulFOp::create(b, loc, cC, dPoly);
  Value halfX = arith::MulFOp::create(b, loc, half, x);
  Value right = arith::MulFOp::create(
      b, loc, halfX, arith::MulFOp::create(b, loc, sech2, dInner));
  return arith::AddFOp::create(b, loc, left, right);
}

Value relu2Derivative(OpBuilder &b, Location loc, Value x) {
  Value r = arith::MaximumFOp::create(b, loc, x,
                                      constFloat(b, loc, x.getType(), 0.0));
  return arith::MulFOp::create(b, loc, constFloat(b, loc, x.getType(), 2.0), r);
}

template <typename OpTy> struct UnaryBackwardLowering : OpRewritePattern<OpTy> {
  using Fn = Value (*)(OpBuilder &, Location, Value);
  UnaryBackwardLowering(MLIRContext *ctx, Fn derivative)
      : OpRewritePattern<OpTy>(ctx), derivative(derivative) {}
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value r = buildElementwise(
        rewriter, op.getLoc(), ValueRange{op.getDy(), op.getX()},
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          return arith::MulFOp::create(b, loc, a[0], derivative(b, loc, a[1]));
        });
    rewriter.replaceOp(op, r);
    return success();
  }
  Fn derivative;
};

struct SoftcapBackwardLowering : OpRewritePattern<SoftcapBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftcapBackwardOp op,
                                PatternRewriter &rewriter) const override {
    double cap = op.getCap().convertToDouble();
    Value r = buildElementwise(
        rewriter, op.getLoc(), ValueRange{op.getDy(), op.getX()},
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          Type t = a[1].getType();
          Value th = math::TanhOp::create(
              b, loc,
              arith::DivFOp::create(b, loc, a[1], constFloat(b, loc, t, cap)));
          Value one = constFloat(b, loc, t, 1.0);
          Value d = arith::SubFOp::create(
              b, loc, one, arith::MulFOp::create(b, loc, th, th));
          return arith::MulFOp::create(b, loc, a[0], d);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// dx = [dy·act(gate) | dy·up·act'(gate)] for x = [up | gate].
template <typename OpTy> struct GluBackwardLowering : OpRewritePattern<OpTy> {
  using Fn = Value (*)(OpBuilder &, Location, Value);
  GluBackwardLowering(MLIRContext *ctx, Fn act, Fn derivative)
      : OpRewritePattern<OpTy>(ctx), act(act), derivative(derivative) {}
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t half = type.getShape().back() / 2;
    auto [up, gate] = splitGlu(rewriter, loc, x, op.getGateFirst());
    // One generic over [..., 2, I] writes the packed result: half h of row
    // r is dup = dy · act(gate) or dgate = dy · up · act'(gate), in the
    // compute type, rounded to the element type. The inputs ignore h, so
    // each row of dy, up and gate comes from memory once (the second half
    // reads it from cache), and no half is written then copied.
    Type elem = type.getElementType(), ct = computeType(elem);
    MLIRContext *ctx = rewriter.getContext();
    unsigned rank = type.getRank(), iterRank = rank + 1;
    SmallVector<OpFoldResult> outSizes = sizesOf(rewriter, loc, x);
    outSizes.back() = rewriter.getIndexAttr(half);
    outSizes.insert(outSizes.end() - 1, rewriter.getIndexAttr(2));
    Value init = emptyTensor(rewriter, loc, outSizes, elem);
    SmallVector<AffineExpr> rowDims;
    for (unsigned d = 0; d < iterRank; ++d)
      if (d != rank - 1)
        rowDims.push_back(rewriter.getAffineDimExpr(d));
    AffineMap in = AffineMap::get(iterRank, 0, rowDims, ctx);
    int64_t dupHalf = op.getGateFirst() ? 1 : 0;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()},
        ValueRange{op.getDy(), up, gate}, ValueRange{init},
        SmallVector<AffineMap>{in, in, in, identityMap(ctx, iterRank)},
        SmallVector<utils::IteratorType>(iterRank,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value dy = castFloat(b, l, a[0], ct), u = castFloat(b, l, a[1], ct),
                g = castFloat(b, l, a[2], ct);
          Value dup = arith::MulFOp::create(b, l, dy, act(b, l, g));
          Value dyUp = arith::MulFOp::create(b, l, dy, u);
          Value dgate = arith::MulFOp::create(b, l, dyUp, derivative(b, l, g));
          Value h = linalg::IndexOp::create(b, l, rank - 1);
          Value isDup = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, h,
              arith::ConstantIndexOp::create(b, l, dupHalf));
          yieldValue(b, l,
                     castFloat(b, l,
                               arith::SelectOp::create(b, l, isDup, dup, dgate),
                               elem));
        });
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 1 < int64_t(rank); ++d)
      groups.push_back({d});
    groups.push_back({int64_t(rank) - 1, int64_t(rank)});
    Value out = tensor::CollapseShapeOp::create(rewriter, loc, type.clone(elem),
                                                generic.getResult(0), groups);
    rewriter.replaceOp(op, out);
    return success();
  }
  Fn act, derivative;
};

} // namespace

void mlir::tfm::populateTfmElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<UnaryLowering<SiluOp>>(ctx, silu);
  patterns.add<UnaryLowering<GeluTanhOp>>(ctx, geluTanh);
  patterns.add<UnaryLowering<Relu2Op>>(ctx, relu2);
  patterns.add<UnaryLowering<SigmoidOp>>(ctx, sigmoid);
  patterns.add<BinaryLowering<AddOp, arith::AddFOp>,
               BinaryLowering<MulOp, arith::MulFOp>, ScaleLowering,
               SoftcapLowering>(ctx);
  patterns.add<GluLowering<SwigluOp>>(ctx, silu);
  patterns.add<GluLowering<GegluOp>>(ctx, geluTanh);
  patterns.add<UnaryBackwardLowering<SiluBackwardOp>>(ctx, siluDerivative);
  patterns.add<UnaryBackwardLowering<GeluTanhBackwardOp>>(ctx,
                                                          geluTanhDerivative);
  patterns.add<UnaryBackwardLowering<Relu2BackwardOp>>(ctx, relu2Derivative);
  patterns.add<UnaryBackwardLowering<SigmoidBackwardOp>>(ctx,
                                                         sigmoidDerivative);
  patterns.add<SoftcapBackwardLowering>(ctx);
  patterns.add<GluBackwardLowering<SwigluBackwardOp>>(ctx, silu,
                                                      siluDerivative);
  patterns.add<GluBackwardLowering<GegluBackwardOp>>(ctx, geluTanh,
                                                     geluTanhDerivative);
}
