//===- AttentionOps.cpp - attention to linalg (reference lowering) --------===//
//
// The CPU reference: scores [B, Hq, T, S] are materialised in f32, masked,
// soft-maxed and contracted with V, as HF's eager attention does. The GPU
// path has the tiled flash kernel; this lowering is what it is checked
// against.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

struct AttentionConfig {
  double scale;
  bool causal;
  std::optional<int64_t> window;
  std::optional<double> softcap;
};

/// Returns {out [B, T, Hq, Dv] (elem), lse [B, Hq, T] (f32)}.
std::pair<Value, Value> buildAttention(OpBuilder &b, Location loc, Value q,
                                       Value k, Value v, Value sinks,
                                       const AttentionConfig &cfg,
                                       Type statElem) {
  MLIRContext *ctx = b.getContext();
  auto qt = cast<RankedTensorType>(q.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  Type elem = qt.getElementType();
  Type st = statElem;
  int64_t hq = qt.getDimSize(2);
  int64_t group = hq / cast<RankedTensorType>(k.getType()).getDimSize(2);
  int64_t dv = vt.getDimSize(3);
  OpFoldResult B = tensor::getMixedSize(b, loc, q, 0);
  OpFoldResult T = tensor::getMixedSize(b, loc, q, 1);
  OpFoldResult S = tensor::getMixedSize(b, loc, k, 1);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel, red = utils::IteratorType::reduction;

  // scores[b, h, t, s] = sum_d q[b, t, h, d] * k[b, s, h / group, d]
  SmallVector<OpFoldResult> scoreSizes = {B, b.getIndexAttr(hq), T, S};
  Value zero = filledTensor(b, loc, scoreSizes, st, 0.0);
  Value dots = linalg::GenericOp::create(
                   b, loc, TypeRange{zero.getType()}, ValueRange{q, k}, ValueRange{zero},
                   SmallVector<AffineMap>{
                       AffineMap::get(5, 0, {d(0), d(2), d(1), d(4)}, ctx),
                       AffineMap::get(5, 0, {d(0), d(3), d(1).floorDiv(group), d(4)}, ctx),
                       AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)},
                   SmallVector<utils::IteratorType>{par, par, par, par, red},
                   [&](OpBuilder &nb, Location l, ValueRange a) {
                     Value p = arith::MulFOp::create(nb, l, castFloat(nb, l, a[0], st),
                                                     castFloat(nb, l, a[1], st));
                     yieldValue(nb, l, arith::AddFOp::create(nb, l, p, a[2]));
                   })
                   .getResult(0);
  // Scale, soft-cap, then mask (HF order).
  double negInf = -std::numeric_limits<double>::infinity();
  Value scores = buildMap(
      b, loc, scoreSizes, st, ValueRange{dots}, {},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value s = arith::MulFOp::create(nb, l, a[0], constFloat(nb, l, st, cfg.scale));
        if (cfg.softcap) {
          Value c = constFloat(nb, l, st, *cfg.softcap);
          s = arith::MulFOp::create(
              nb, l, math::TanhOp::create(nb, l, arith::DivFOp::create(nb, l, s, c)), c);
        }
        if (!cfg.causal)
          return s;
        Value ti = linalg::IndexOp::create(nb, l, 2), si = linalg::IndexOp::create(nb, l, 3);
        Value masked = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, si, ti);
        if (cfg.window) {
          // A token sees itself and the window - 1 tokens before it.
          Value dist = arith::SubIOp::create(nb, l, ti, si);
          Value far = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::sge, dist,
              arith::ConstantIndexOp::create(nb, l, *cfg.window));
          masked = arith::OrIOp::create(nb, l, masked, far);
        }
        return arith::SelectOp::create(nb, l, masked, constFloat(nb, l, st, negInf), s);
      });
  // Row max, including the sink logit.
  Value rowMax = reduceLastDim(b, loc, scores, st, negInf,
                               [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                 return arith::MaximumFOp::create(nb, l, a[0], a[1]);
                               });
  SmallVector<OpFoldResult> rowSizes = {B, b.getIndexAttr(hq), T};
  AffineMap rowSinkMap = AffineMap::get(3, 0, {d(1)}, ctx);
  if (sinks)
    rowMax = buildMap(b, loc, rowSizes, st, ValueRange{rowMax, sinks},
                      {identityMap(ctx, 3), rowSinkMap},
                      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        return arith::MaximumFOp::create(nb, l, a[0], castFloat(nb, l, a[1], st));
                      });
  // denom = sum_s exp(s - max) (+ exp(sink - max)).
  Value acc = filledTensor(b, loc, rowSizes, st, 0.0);
  Value denom = linalg::GenericOp::create(
                    b, loc, TypeRange{acc.getType()}, ValueRange{scores, rowMax}, ValueRange{acc},
                    SmallVector<AffineMap>{identityMap(ctx, 4), dropLastDimMap(ctx, 4),
                                           dropLastDimMap(ctx, 4)},
                    SmallVector<utils::IteratorType>{par, par, par, red},
                    [&](OpBuilder &nb, Location l, ValueRange a) {
                      Value e = math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                      yieldValue(nb, l, arith::AddFOp::create(nb, l, e, a[2]));
                    })
                    .getResult(0);
  if (sinks)
    denom = buildMap(b, loc, rowSizes, st, ValueRange{denom, rowMax, sinks},
                     {identityMap(ctx, 3), identityMap(ctx, 3), rowSinkMap},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value e = math::ExpOp::create(
                           nb, l, arith::SubFOp::create(nb, l, castFloat(nb, l, a[2], st), a[1]));
                       return arith::AddFOp::create(nb, l, a[0], e);
                     });
  Value lse = buildMap(b, loc, rowSizes, st, ValueRange{rowMax, denom}, {},
                       [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         return arith::AddFOp::create(nb, l, a[0], math::LogOp::create(nb, l, a[1]));
                       });
  // Probabilities, rounded to the activation type like HF's softmax(...).to(q.dtype).
  Value probs = buildMap(b, loc, scoreSizes, elem, ValueRange{scores, lse},
                         {identityMap(ctx, 4), dropLastDimMap(ctx, 4)},
                         [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           Value p = math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                           return castFloat(nb, l, p, elem);
                         });
  // out[b, t, h, e] = sum_s p[b, h, t, s] * v[b, s, h / group, e]
  SmallVector<OpFoldResult> outSizes = {B, T, b.getIndexAttr(hq), b.getIndexAttr(dv)};
  Value outAcc = filledTensor(b, loc, outSizes, st, 0.0);
  Value outF = linalg::GenericOp::create(
                   b, loc, TypeRange{outAcc.getType()}, ValueRange{probs, v}, ValueRange{outAcc},
                   SmallVector<AffineMap>{
                       AffineMap::get(5, 0, {d(0), d(2), d(1), d(4)}, ctx),
                       AffineMap::get(5, 0, {d(0), d(4), d(2).floorDiv(group), d(3)}, ctx),
                       AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)},
                   SmallVector<utils::IteratorType>{par, par, par, par, red},
                   [&](OpBuilder &nb, Location l, ValueRange a) {
                     Value p = arith::MulFOp::create(nb, l, castFloat(nb, l, a[0], st),
                                                     castFloat(nb, l, a[1], st));
                     yieldValue(nb, l, arith::AddFOp::create(nb, l, p, a[2]));
                   })
                   .getResult(0);
  Value out = outF;
  if (st != elem)
    out = buildMap(b, loc, outSizes, elem, ValueRange{outF}, {},
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     return castFloat(nb, l, a[0], elem);
                   });
  return {out, lse};
}

std::optional<double> optionalDouble(std::optional<APFloat> v) {
  if (!v)
    return std::nullopt;
  return v->convertToDouble();
}

struct AttentionLowering : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    AttentionConfig cfg{op.getScale().convertToDouble(), op.getCausal(),
                        op.getSlidingWindow(), optionalDouble(op.getSoftcap())};
    Type st = computeType(op.getType().getElementType());
    auto [out, lse] = buildAttention(rewriter, op.getLoc(), op.getQ(), op.getK(),
                                     op.getV(), op.getSinks(), cfg, st);
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct FlashAttentionLowering : OpRewritePattern<FlashAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlashAttentionOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value qkv = op.getQkv();
    int64_t hq = op.getNumQHeads(), hkv = op.getNumKvHeads();
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, qkv);
    auto slice = [&](int64_t start, int64_t count) -> Value {
      SmallVector<OpFoldResult> off(4, rewriter.getIndexAttr(0)), sz = sizes;
      off[2] = rewriter.getIndexAttr(start);
      sz[2] = rewriter.getIndexAttr(count);
      return tensor::ExtractSliceOp::create(rewriter, loc, qkv, off, sz,
                                            SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
    };
    AttentionConfig cfg{op.getScale().convertToDouble(), op.getCausal(),
                        op.getSlidingWindow(), optionalDouble(op.getSoftcap())};
    auto [out, lse] = buildAttention(rewriter, loc, slice(0, hq), slice(hq, hkv),
                                     slice(hq + hkv, hkv), op.getSinks(), cfg,
                                     op.getLse().getType().getElementType());
    rewriter.replaceOp(op, {out, lse});
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionLowering, FlashAttentionLowering>(patterns.getContext());
}
