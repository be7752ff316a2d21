//===- OptimizerOps.cpp - the optimizer step ops to linalg ----------------===//
//
// Each update is one element-wise linalg.generic over the parameter, its
// gradient and its state, writing the new parameter and state into the
// old ones (its outputs): one pass over memory per parameter, in place
// where the buffers are writable. The scalar factors AdamW forms from the 0-d
// run-time lr and step (decay, bias corrections, step size) are computed
// once, by a 0-d generic before it (on the device for the GPU path, which
// never reads device memory on the host), and broadcast into the
// element-wise one with grad_scale: forming them per element would cost
// two pow() calls per element, as LLVM cannot prove the loads of lr and
// step loop-invariant. They are formed in f64 as torch forms them in
// Python and rounded to f32 where torch hands them to an f32 kernel; the
// element arithmetic follows torch's CPU kernels operation by operation (lerp_,
// mul_ + addcmul_, sqrt / + eps, addcdiv_). The gradient norm is one row
// reduction per gradient and a 0-d generic combining them.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

Value f64Const(OpBuilder &b, Location loc, double v) {
  return constFloat(b, loc, b.getF64Type(), v);
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  return castFloat(b, loc, v, b.getF32Type());
}

/// 1 - base^t in f64, `t` the step (i64).
Value biasCorrection(OpBuilder &b, Location loc, double base, Value t) {
  Value tf = arith::SIToFPOp::create(b, loc, b.getF64Type(), t);
  Value pow = math::PowFOp::create(b, loc, f64Const(b, loc, base), tf);
  return arith::SubFOp::create(b, loc, f64Const(b, loc, 1.0), pow);
}

/// f32 arithmetic of an update body, spelled as torch's kernels are.
struct F32Math {
  OpBuilder &b;
  Location l;
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value c(double v) { return constFloat(b, l, b.getF32Type(), v); }
};

/// An element-wise generic reading same-shaped `inputs` and 0-d `scalars`
/// (broadcast) and updating `updated` in place: they are its outputs, so
/// one-shot bufferization writes the new parameter and state into the
/// buffers of the old ones (the function's arguments) as torch's in-place
/// optimizers do, and a training step allocates none of them anew. `body`
/// gets the input elements, the scalars, then the current elements of
/// `updated`, and returns their new values.
SmallVector<Value> buildUpdate(
    OpBuilder &b, Location loc, ValueRange inputs, ValueRange scalars,
    ValueRange updated,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = cast<RankedTensorType>(updated[0].getType()).getRank();
  SmallVector<Value> ins(inputs);
  ins.append(scalars.begin(), scalars.end());
  SmallVector<AffineMap> maps(inputs.size(), identityMap(ctx, rank));
  maps.append(scalars.size(), AffineMap::get(rank, 0, {}, ctx));
  maps.append(updated.size(), identityMap(ctx, rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, updated.getTypes(), ins, updated, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        yieldValues(nb, nloc, body(nb, nloc, args));
      });
  return SmallVector<Value>(generic.getResults());
}

struct AdamwUpdateLowering : OpRewritePattern<AdamwUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AdamwUpdateOp op,
                                PatternRewriter &rewriter) const override {
    double beta1 = op.getBeta1().convertToDouble(),
           beta2 = op.getBeta2().convertToDouble(),
           eps = op.getEps().convertToDouble(),
           wd = op.getWeightDecay().convertToDouble();
    Type f32 = rewriter.getF32Type();
    Type paramElem = op.getParam().getType().getElementType();
    // The factors torch forms in Python (f64), rounded to f32, once:
    // 1 - lr * weight_decay; -step_size = -lr / (1 - beta1^t);
    // sqrt(1 - beta2^t).
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto scalar = RankedTensorType::get({}, f32);
    SmallVector<Value> inits;
    for (int i = 0; i < 3; ++i) // one tensor each: every one is written
      inits.push_back(emptyTensor(rewriter, loc, {}, f32));
    auto factors = linalg::GenericOp::create(
        rewriter, loc, TypeRange{scalar, scalar, scalar},
        ValueRange{op.getLr(), op.getStep()}, inits,
        SmallVector<AffineMap>(5, AffineMap::get(ctx)),
        ArrayRef<utils::IteratorType>{},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Value lr = a[0], step = a[1];
          Value one = f64Const(nb, l, 1.0);
          Value lrWd = arith::MulFOp::create(nb, l, lr, f64Const(nb, l, wd));
          Value decay = toF32(nb, l, arith::SubFOp::create(nb, l, one, lrWd));
          Value negStepSize =
              toF32(nb, l,
                    arith::NegFOp::create(
                        nb, l,
                        arith::DivFOp::create(
                            nb, l, lr, biasCorrection(nb, l, beta1, step))));
          Value bc2Sqrt = toF32(
              nb, l,
              math::SqrtOp::create(nb, l, biasCorrection(nb, l, beta2, step)));
          yieldValues(nb, l, {decay, negStepSize, bc2Sqrt});
        });
    SmallVector<Value> results = buildUpdate(
        rewriter, loc, ValueRange{op.getGrad()},
        ValueRange{factors.getResult(0), factors.getResult(1),
                   factors.getResult(2), op.getGradScale()},
        ValueRange{op.getParam(), op.getExpAvg(), op.getExpAvgSq()},
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          F32Math f{nb, l};
          Value decay = a[1], negStepSize = a[2], bc2Sqrt = a[3],
                gradScale = a[4];
          Value p = f.mul(castFloat(nb, l, a[5], f32), decay);
          Value g = f.mul(castFloat(nb, l, a[0], f32), gradScale);
          Value m = a[6], v = a[7];
          // exp_avg.lerp_(grad, 1 - beta1): weight < 0.5 takes
          // m + w * (g - m).
          Value w1 = f.c(1 - beta1);
          Value m1 = f.add(m, f.mul(w1, arith::SubFOp::create(nb, l, g, m)));
          // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
          Value vDecayed = f.mul(v, f.c(beta2));
          Value w2 = f.c(1 - beta2);
          Value v1 = f.add(vDecayed, f.mul(f.mul(w2, g), g));
          Value root = math::SqrtOp::create(nb, l, v1);
          Value scaledRoot = arith::DivFOp::create(nb, l, root, bc2Sqrt);
          Value denom = f.add(scaledRoot, f.c(eps));
          // param.addcdiv_(exp_avg, denom, value=-step_size)
          Value p1 = f.add(
              p, f.mul(negStepSize, arith::DivFOp::create(nb, l, m1, denom)));
          return {castFloat(nb, l, p1, paramElem), m1, v1};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct SgdUpdateLowering : OpRewritePattern<SgdUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SgdUpdateOp op,
                                PatternRewriter &rewriter) const override {
    double momentum = op.getMomentum().convertToDouble(),
           dampening = op.getDampening().convertToDouble(),
           wd = op.getWeightDecay().convertToDouble();
    bool nesterov = op.getNesterov();
    Type f32 = rewriter.getF32Type();
    Type paramElem = op.getParam().getType().getElementType();
    SmallVector<Value> results = buildUpdate(
        rewriter, op.getLoc(), ValueRange{op.getGrad()},
        ValueRange{op.getLr(), op.getStep(), op.getGradScale()},
        ValueRange{op.getParam(), op.getMomentumBuffer()},
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          F32Math f{nb, l};
          Value negLr = toF32(nb, l, arith::NegFOp::create(nb, l, a[1]));
          Value p = castFloat(nb, l, a[4], f32);
          Value g = f.mul(castFloat(nb, l, a[0], f32), a[3]);
          Value buf = a[5];
          if (wd != 0) // grad = grad.add(param, alpha=weight_decay)
            g = f.add(g, f.mul(f.c(wd), p));
          Value d = g;
          if (momentum != 0) {
            // buf = clone(grad) on the first step, else
            // buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            Value first = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::eq, a[2],
                arith::ConstantIntOp::create(nb, l, nb.getI64Type(), 1));
            Value kept = f.mul(buf, f.c(momentum));
            Value w = f.c(1 - dampening);
            Value later = f.add(kept, f.mul(w, g));
            buf = arith::SelectOp::create(nb, l, first, g, later);
            d = nesterov ? f.add(g, f.mul(f.c(momentum), buf)) : buf;
          }
          // param.add_(grad, alpha=-lr)
          Value p1 = f.add(p, f.mul(negLr, d));
          return {castFloat(nb, l, p1, paramElem), buf};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct GlobalGradNormLowering : OpRewritePattern<GlobalGradNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GlobalGradNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type f64 = b.getF64Type(), f32 = b.getF32Type();
    MLIRContext *ctx = b.getContext();
    // Each gradient's sum of squares in f64: one reduction over its
    // elements, collapsed to [N].
    SmallVector<Value> sums;
    for (Value g : op.getGrads()) {
      auto t = cast<RankedTensorType>(g.getType());
      Value row = g;
      if (t.getRank() == 0) {
        row = tensor::ExpandShapeOp::create(
            b, loc, RankedTensorType::get({1}, t.getElementType()), g,
            SmallVector<ReassociationIndices>{});
      } else if (t.getRank() > 1) {
        ReassociationIndices all;
        for (int64_t d = 0; d < t.getRank(); ++d)
          all.push_back(d);
        row = tensor::CollapseShapeOp::create(
            b, loc, g, SmallVector<ReassociationIndices>{all});
      }
      sums.push_back(buildReduction(
          b, loc, {}, f64, 0.0, ValueRange{row}, {identityMap(ctx, 1)},
          AffineMap::get(1, 0, {}, ctx), {true},
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value x = castFloat(nb, l, a[0], f64);
            return arith::AddFOp::create(nb, l, a[1],
                                         arith::MulFOp::create(nb, l, x, x))
                .getResult();
          }));
    }
    // Their total, the norm and the coefficient, in a 0-d generic (on the
    // device for the GPU path): clip_coef = max_norm / (norm + 1e-6),
    // clamped to 1, in f32 as torch computes it.
    double maxNorm = op.getMaxNorm().convertToDouble();
    auto scalar = RankedTensorType::get({}, f32);
    SmallVector<Value> inits = {emptyTensor(b, loc, {}, f32),
                                emptyTensor(b, loc, {}, f32)};
    SmallVector<AffineMap> maps(sums.size() + 2, AffineMap::get(ctx));
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{scalar, scalar}, sums, inits, maps,
        ArrayRef<utils::IteratorType>{},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Value total = f64Const(nb, l, 0.0);
          for (Value s : a.take_front(sums.size()))
            total = arith::AddFOp::create(nb, l, total, s);
          Value norm = toF32(nb, l, math::SqrtOp::create(nb, l, total));
          Value scale = constFloat(nb, l, f32, 1.0);
          if (maxNorm > 0) {
            Value maxNormC = constFloat(nb, l, f32, maxNorm);
            Value padded = arith::AddFOp::create(nb, l, norm,
                                                 constFloat(nb, l, f32, 1e-6));
            Value coef = arith::DivFOp::create(nb, l, maxNormC, padded);
            scale = arith::MinimumFOp::create(nb, l, coef, scale);
          }
          yieldValues(nb, l, {norm, scale});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmOptimizerToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AdamwUpdateLowering, SgdUpdateLowering, GlobalGradNormLowering>(
      patterns.getContext());
}
