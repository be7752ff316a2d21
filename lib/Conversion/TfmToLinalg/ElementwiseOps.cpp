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
  Value x3 = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
  Value inner = arith::AddFOp::create(
      b, loc, x,
      arith::MulFOp::create(b, loc, constFloat(b, loc, t, 0.044715), x3));
  Value th = math::TanhOp::create(
      b, loc, arith::MulFOp::create(b, loc, constFloat(b, loc, t, c), inner));
  Value onePlus = arith::AddFOp::create(b, loc, constFloat(b, loc, t, 1.0), th);
  Value half = arith::MulFOp::create(b, loc, constFloat(b, loc, t, 0.5), x);
  return arith::MulFOp::create(b, loc, half, onePlus);
}

template <typename OpTy>
struct UnaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  using Fn = Value (*)(OpBuilder &, Location, Value);
  UnaryLowering(MLIRContext *ctx, Fn fn) : OpRewritePattern<OpTy>(ctx), fn(fn) {}
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
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
  Value r = arith::MaximumFOp::create(b, loc, x, constFloat(b, loc, x.getType(), 0.0));
  return arith::MulFOp::create(b, loc, r, r);
}

template <typename OpTy, typename ArithOp>
struct BinaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
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
  LogicalResult matchAndRewrite(ScaleOp op, PatternRewriter &rewriter) const override {
    Type elem = op.getType().getElementType();
    double factor = op.getFactor().convertToDouble();
    Value r = buildElementwise(
        rewriter, op.getLoc(), ValueRange{op.getX()},
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          // The factor is rounded to the element type first, as PyTorch
          // multiplies by a scalar (and Gemma casts its normaliser).
          Value f = castFloat(b, loc, constFloat(b, loc, elem, factor),
                              a[0].getType());
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
  LogicalResult matchAndRewrite(SoftcapOp op, PatternRewriter &rewriter) const override {
    double cap = op.getCap().convertToDouble();
    Value r = buildElementwise(rewriter, op.getLoc(), ValueRange{op.getX()},
                               [&](OpBuilder &b, Location loc, ValueRange a) {
                                 return softcap(b, loc, a[0], cap);
                               });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// [..., 2I] -> (up = [..., :I], gate = [..., I:]) -> up * act(gate).
template <typename OpTy>
struct GluLowering : OpRewritePattern<OpTy> {
  using Fn = Value (*)(OpBuilder &, Location, Value);
  GluLowering(MLIRContext *ctx, Fn act) : OpRewritePattern<OpTy>(ctx), act(act) {}
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), half = type.getShape().back() / 2;
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, x);
    sizes.back() = rewriter.getIndexAttr(half);
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    Value up = tensor::ExtractSliceOp::create(rewriter, loc, x, offsets, sizes, strides);
    offsets.back() = rewriter.getIndexAttr(half);
    Value gate = tensor::ExtractSliceOp::create(rewriter, loc, x, offsets, sizes, strides);
    Value r = buildElementwise(rewriter, loc, ValueRange{up, gate},
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 return arith::MulFOp::create(b, l, a[0], act(b, l, a[1]));
                               });
    rewriter.replaceOp(op, r);
    return success();
  }
  Fn act;
};

} // namespace

void mlir::tfm::populateTfmElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<UnaryLowering<SiluOp>>(ctx, silu);
  patterns.add<UnaryLowering<GeluTanhOp>>(ctx, geluTanh);
  patterns.add<UnaryLowering<Relu2Op>>(ctx, relu2);
  patterns.add<BinaryLowering<AddOp, arith::AddFOp>,
               BinaryLowering<MulOp, arith::MulFOp>, ScaleLowering,
               SoftcapLowering>(ctx);
  patterns.add<GluLowering<SwigluOp>>(ctx, silu);
  patterns.add<GluLowering<GegluOp>>(ctx, geluTanh);
}
