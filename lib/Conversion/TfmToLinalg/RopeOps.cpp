//===- RopeOps.cpp - rotary embeddings to linalg --------------------------===//
//
// Inverse frequencies depend only on attributes, so they are computed here
// (in double, as the HF initialisers define them) and embedded as constants;
// the angles and rotation run per element in f32 like HF's rotary module.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

std::vector<double> mlir::tfm::computeRopeInvFreq(double theta, int64_t dim,
                                                  RopeScalingAttr scaling,
                                                  bool longTable) {
  int64_t half = dim / 2;
  std::vector<double> base(half);
  for (int64_t i = 0; i < half; ++i)
    base[i] = 1.0 / std::pow(theta, double(2 * i) / double(dim));
  if (!scaling)
    return base;
  double factor = scaling.getFactor().convertToDouble();
  switch (scaling.getKind()) {
  case RopeKind::plain:
    return base;
  case RopeKind::linear:
    for (double &f : base)
      f /= factor;
    return base;
  case RopeKind::llama3: {
    double low = scaling.getLowFreqFactor().convertToDouble();
    double high = scaling.getHighFreqFactor().convertToDouble();
    double old = double(scaling.getOriginal());
    double lowWavelen = old / low, highWavelen = old / high;
    for (double &f : base) {
      double wavelen = 2 * M_PI / f;
      double scaled = wavelen > lowWavelen ? f / factor : f;
      bool medium = !(wavelen < highWavelen) && !(wavelen > lowWavelen);
      if (medium) {
        double smooth = (old / wavelen - low) / (high - low);
        scaled = (1 - smooth) * scaled / factor + smooth * scaled;
      }
      f = scaled;
    }
    return base;
  }
  case RopeKind::yarn: {
    double orig = double(scaling.getOriginal());
    auto correctionDim = [&](double rotations) {
      return (double(dim) * std::log(orig / (rotations * 2 * M_PI))) /
             (2 * std::log(theta));
    };
    double lo = correctionDim(scaling.getBetaFast().convertToDouble());
    double hi = correctionDim(scaling.getBetaSlow().convertToDouble());
    if (scaling.getTruncate()) {
      lo = std::floor(lo);
      hi = std::ceil(hi);
    }
    lo = std::max(lo, 0.0);
    hi = std::min(hi, double(dim - 1));
    if (lo == hi)
      hi += 0.001;
    for (int64_t i = 0; i < half; ++i) {
      double ramp = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
      double extrapolation = 1 - ramp;
      double posFreq = std::pow(theta, double(2 * i) / double(dim));
      base[i] = (1 / (factor * posFreq)) * (1 - extrapolation) +
                (1 / posFreq) * extrapolation;
    }
    return base;
  }
  case RopeKind::longrope: {
    ArrayRef<double> ext = longTable ? scaling.getLongFactor().asArrayRef()
                                     : scaling.getShortFactor().asArrayRef();
    for (int64_t i = 0; i < half; ++i)
      base[i] /= ext[i];
    return base;
  }
  }
  return base;
}

static Value invFreqConstant(OpBuilder &b, Location loc,
                             const std::vector<double> &values) {
  SmallVector<float> f(values.begin(), values.end());
  auto type = RankedTensorType::get({int64_t(f.size())}, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, ArrayRef<float>(f)));
}

/// max(positions) + 1 > original: longrope switches tables for the whole
/// call, as HF's dynamic update does.
static Value longropePredicate(OpBuilder &b, Location loc, Value positions,
                               int64_t original) {
  auto type = cast<RankedTensorType>(positions.getType());
  Type it = type.getElementType();
  Value init = emptyTensor(b, loc, {}, it);
  Value minVal = arith::ConstantOp::create(
      b, loc, it,
      b.getIntegerAttr(it,
                       APInt::getSignedMinValue(it.getIntOrFloatBitWidth())));
  init = linalg::FillOp::create(b, loc, minVal, init).getResult(0);
  MLIRContext *ctx = b.getContext();
  Value max =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{positions},
          ValueRange{init},
          SmallVector<AffineMap>{identityMap(ctx, 2),
                                 AffineMap::get(2, 0, ctx)},
          SmallVector<utils::IteratorType>(2, utils::IteratorType::reduction),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            yieldValue(nb, l, arith::MaxSIOp::create(nb, l, a[0], a[1]));
          })
          .getResult(0);
  Value scalar = tensor::ExtractOp::create(b, loc, max, ValueRange{});
  Value limit =
      arith::ConstantOp::create(b, loc, it, b.getIntegerAttr(it, original - 1));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, scalar,
                               limit);
}

/// The rotation angle position · inv_freq[index] in f32 (the longrope
/// table when `useLong`), inside a generic's body.
static Value ropeAngle(OpBuilder &b, Location l, Value position, Value index,
                       Value table, Value longTable, Value useLong) {
  Value freq = tensor::ExtractOp::create(b, l, table, ValueRange{index});
  if (longTable)
    freq = arith::SelectOp::create(
        b, l, useLong,
        tensor::ExtractOp::create(b, l, longTable, ValueRange{index}), freq);
  Value pos = arith::SIToFPOp::create(b, l, b.getF32Type(), position);
  return arith::MulFOp::create(b, l, pos, freq);
}

/// HF's cos and sin tables for the first `half` frequencies at each
/// position: [B, T, half] in the compute type, rounded through the
/// activation type as HF casts them, times the attention factor; sin
/// negated for the inverse rotation. Once per call, not per head.
static std::pair<Value, Value>
buildCosSinTables(OpBuilder &b, Location loc, Value positions, int64_t half,
                  Type elem, double attentionFactor, Value table,
                  Value longTable, Value useLong, bool inverse) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type(), ct = computeType(elem);
  SmallVector<OpFoldResult> sizes = sizesOf(b, loc, positions);
  sizes.push_back(b.getIndexAttr(half));
  AffineMap posMap =
      AffineMap::get(3, 0, {b.getAffineDimExpr(0), b.getAffineDimExpr(1)}, ctx);
  auto build = [&](bool isSin) {
    return buildMap(
        b, loc, sizes, ct, ValueRange{positions}, {posMap},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value i = linalg::IndexOp::create(nb, l, 2);
          Value angle = ropeAngle(nb, l, a[0], i, table, longTable, useLong);
          Value v = isSin ? Value(math::SinOp::create(nb, l, angle))
                          : Value(math::CosOp::create(nb, l, angle));
          v = arith::MulFOp::create(nb, l, v,
                                    constFloat(nb, l, f32, attentionFactor));
          if (isSin && inverse)
            v = arith::NegFOp::create(nb, l, v);
          return castFloat(nb, l, castFloat(nb, l, v, elem), ct);
        });
  };
  return {build(false), build(true)};
}

/// Rotate-half RoPE as two generics over the halves of the rotary part,
/// each reading both halves contiguously (x1 * cos - x2 * sin, then
/// x2 * cos + x1 * sin), so that the CPU path vectorises them; the same
/// operations in the same order as the per-element form.
static Value buildHalfRotation(OpBuilder &b, Location loc, Value x,
                               Value positions, int64_t rotaryDim,
                               double attentionFactor, Value table,
                               Value longTable, Value useLong, bool inverse) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elem = type.getElementType(), ct = computeType(elem);
  int64_t half = rotaryDim / 2, dim = type.getDimSize(3);
  Value cosT, sinT; // captured below: not a structured binding (C++17)
  std::tie(cosT, sinT) =
      buildCosSinTables(b, loc, positions, half, elem, attentionFactor, table,
                        longTable, useLong, inverse);
  MLIRContext *ctx = b.getContext();
  AffineMap id = identityMap(ctx, 4);
  AffineMap tableMap = AffineMap::get(
      4, 0,
      {b.getAffineDimExpr(0), b.getAffineDimExpr(1), b.getAffineDimExpr(3)},
      ctx);
  Value x1 = sliceAlong(b, loc, x, 3, 0, half);
  Value x2 = sliceAlong(b, loc, x, 3, half, half);
  auto rotate = [&](Value self, Value other, bool first) {
    return buildMap(
        b, loc, sizesOf(b, loc, self), elem,
        ValueRange{self, other, cosT, sinT}, {id, id, tableMap, tableMap},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value s = castFloat(nb, l, a[0], ct), o = castFloat(nb, l, a[1], ct);
          if (first)
            o = arith::NegFOp::create(nb, l, o);
          // Created in sequence (not as call arguments, whose evaluation
          // order differs between compilers): the IR is the same for all.
          Value sc = arith::MulFOp::create(nb, l, s, a[2]);
          Value os = arith::MulFOp::create(nb, l, o, a[3]);
          Value out = arith::AddFOp::create(nb, l, sc, os);
          return castFloat(nb, l, out, elem);
        });
  };
  Value out = emptyTensor(b, loc, sizesOf(b, loc, x), elem);
  Value lo = rotate(x1, x2, /*first=*/true);
  out = insertAlong(b, loc, lo, out, 3, 0);
  Value hi = rotate(x2, x1, /*first=*/false);
  out = insertAlong(b, loc, hi, out, 3, half);
  if (rotaryDim < dim) // pass-through dimensions (partial rotary)
    out = insertAlong(b, loc,
                      sliceAlong(b, loc, x, 3, rotaryDim, dim - rotaryDim), out,
                      3, rotaryDim);
  return out;
}

Value mlir::tfm::lowering::buildRope(OpBuilder &b, Location loc, Value x,
                                     Value positions, double theta,
                                     int64_t rotaryDim, Attribute scalingAttr,
                                     bool inverse, bool interleaved) {
  auto scaling = dyn_cast_or_null<RopeScalingAttr>(scalingAttr);
  auto type = cast<RankedTensorType>(x.getType());
  Type elem = type.getElementType();
  Type f32 = b.getF32Type();
  Type ct = computeType(elem);
  int64_t half = rotaryDim / 2;
  double attentionFactor =
      scaling ? scaling.getAttentionFactor().convertToDouble() : 1.0;
  Value table =
      invFreqConstant(b, loc, computeRopeInvFreq(theta, rotaryDim, scaling));
  Value longTable, useLong;
  if (scaling && scaling.getKind() == RopeKind::longrope) {
    longTable = invFreqConstant(
        b, loc, computeRopeInvFreq(theta, rotaryDim, scaling, true));
    useLong = longropePredicate(b, loc, positions, scaling.getOriginal());
  }
  MLIRContext *ctx = b.getContext();
  if (!interleaved && !type.isDynamicDim(3))
    return buildHalfRotation(b, loc, x, positions, rotaryDim, attentionFactor,
                             table, longTable, useLong, inverse);
  AffineMap posMap =
      AffineMap::get(4, 0, {b.getAffineDimExpr(0), b.getAffineDimExpr(1)}, ctx);
  return buildMap(
      b, loc, sizesOf(b, loc, x), elem, ValueRange{positions}, {posMap},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value bi = linalg::IndexOp::create(nb, l, 0),
              ti = linalg::IndexOp::create(nb, l, 1),
              hi = linalg::IndexOp::create(nb, l, 2),
              di = linalg::IndexOp::create(nb, l, 3);
        auto idx = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v);
        };
        Value inRotary = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                               di, idx(rotaryDim));
        // `first`: the element whose partner's contribution is negated
        // (x1 of the pair), pairs (i, i + half) or, interleaved, (2i, 2i+1).
        Value first, freqIdx, partner;
        if (interleaved) {
          Value odd = arith::RemUIOp::create(nb, l, di, idx(2));
          first = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, odd,
                                        idx(0));
          freqIdx = arith::DivUIOp::create(nb, l, di, idx(2));
          Value next = arith::AddIOp::create(nb, l, di, idx(1));
          Value previous = arith::SubIOp::create(nb, l, di, idx(1));
          partner = arith::SelectOp::create(nb, l, first, next, previous);
        } else {
          first = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, di,
                                        idx(half));
          freqIdx = arith::RemUIOp::create(nb, l, di, idx(half));
          Value secondHalf = arith::AddIOp::create(nb, l, di, idx(half));
          Value firstHalf = arith::SubIOp::create(nb, l, di, idx(half));
          partner =
              arith::SelectOp::create(nb, l, first, secondHalf, firstHalf);
        }
        // Pass-through dimensions read themselves; keep indices in range.
        freqIdx = arith::SelectOp::create(nb, l, inRotary, freqIdx, idx(0));
        partner = arith::SelectOp::create(nb, l, inRotary, partner, di);
        Value angle =
            ropeAngle(nb, l, a[0], freqIdx, table, longTable, useLong);
        Value af = constFloat(nb, l, f32, attentionFactor);
        Value cosv =
            arith::MulFOp::create(nb, l, math::CosOp::create(nb, l, angle), af);
        Value sinv =
            arith::MulFOp::create(nb, l, math::SinOp::create(nb, l, angle), af);
        if (inverse)
          sinv = arith::NegFOp::create(nb, l, sinv);
        // HF casts cos/sin to the activation type before rotating.
        cosv = castFloat(nb, l, castFloat(nb, l, cosv, elem), ct);
        sinv = castFloat(nb, l, castFloat(nb, l, sinv, elem), ct);
        Value self = castFloat(
            nb, l,
            tensor::ExtractOp::create(nb, l, x, ValueRange{bi, ti, hi, di}),
            ct);
        Value other = castFloat(nb, l,
                                tensor::ExtractOp::create(
                                    nb, l, x, ValueRange{bi, ti, hi, partner}),
                                ct);
        Value rotated = arith::SelectOp::create(
            nb, l, first, arith::NegFOp::create(nb, l, other), other);
        Value cosPart = arith::MulFOp::create(nb, l, self, cosv);
        Value sinPart = arith::MulFOp::create(nb, l, rotated, sinv);
        Value out = arith::AddFOp::create(nb, l, cosPart, sinPart);
        out = arith::SelectOp::create(nb, l, inRotary, out, self);
        return castFloat(nb, l, out, elem);
      });
}

namespace {

struct RopeLowering : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RopeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildRope(rewriter, op.getLoc(), op.getX(),
                                     op.getPositions(),
                                     op.getTheta().convertToDouble(),
                                     op.getRotaryDim(), op.getScalingAttr(),
                                     /*inverse=*/false, op.getInterleaved()));
    return success();
  }
};

/// A packed [B, T, Hq + 2Hkv, D] tensor like `packed`: the query and key
/// heads are `qk(range)` (their new values), the value heads are copied
/// from `values`. The packed-QKV lowerings below differ only in `qk`.
Value buildPackedHeads(OpBuilder &b, Location loc, Value packed, Value values,
                       PackedQkvHeads heads, Type elem,
                       function_ref<Value(PackedQkvHeads::Range)> qk) {
  Value out = emptyTensor(b, loc, sizesOf(b, loc, packed), elem);
  for (PackedQkvHeads::Range range : {heads.query(), heads.key()})
    out = insertAlong(b, loc, qk(range), out, 2, range.start);
  PackedQkvHeads::Range v = heads.value();
  return insertAlong(b, loc, sliceAlong(b, loc, values, 2, v.start, v.count),
                     out, 2, v.start);
}

Value headSlice(OpBuilder &b, Location loc, Value packed,
                PackedQkvHeads::Range range) {
  return sliceAlong(b, loc, packed, 2, range.start, range.count);
}

/// Normalises and rotates the q and k heads of packed QKV.
struct QkvQkNormRopeLowering : OpRewritePattern<QkvQkNormRopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QkvQkNormRopeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value qkv = op.getQkv();
    PackedQkvHeads heads = op.getPackedHeads();
    double eps = op.getEps().convertToDouble();
    double theta = op.getTheta().convertToDouble();
    Type st = op.getQRstd().getType().getElementType();
    SmallVector<Value> rstds;
    Value out = buildPackedHeads(
        rewriter, loc, qkv, qkv, heads,
        op.getResult().getType().getElementType(),
        [&](PackedQkvHeads::Range range) {
          bool isQuery = range.start == heads.query().start;
          auto [normed, rstd] =
              buildRmsNorm(rewriter, loc, headSlice(rewriter, loc, qkv, range),
                           isQuery ? op.getQWeight() : op.getKWeight(), eps,
                           op.getUnitOffset(), st);
          rstds.push_back(rstd);
          return buildRope(rewriter, loc, normed, op.getPositions(), theta,
                           op.getRotaryDim(), op.getScalingAttr());
        });
    rewriter.replaceOp(op, {out, rstds[0], rstds[1]});
    return success();
  }
};

struct QkvRopeLowering : OpRewritePattern<QkvRopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QkvRopeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value qkv = op.getQkv();
    double theta = op.getTheta().convertToDouble();
    rewriter.replaceOp(
        op, buildPackedHeads(rewriter, loc, qkv, qkv, op.getPackedHeads(),
                             op.getType().getElementType(),
                             [&](PackedQkvHeads::Range range) {
                               return buildRope(
                                   rewriter, loc,
                                   headSlice(rewriter, loc, qkv, range),
                                   op.getPositions(), theta, op.getRotaryDim(),
                                   op.getScalingAttr(), op.getInverse());
                             }));
    return success();
  }
};

/// On the q and k head slices: the inverse rotation, then the RMSNorm
/// gradient (tfm.rmsnorm_backward, lowered by the same conversion); dq, dk
/// and the copied dv in one packed dqkv.
struct QkvQkNormRopeBackwardLowering
    : OpRewritePattern<QkvQkNormRopeBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QkvQkNormRopeBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = op.getDy(), qkv = op.getQkv();
    PackedQkvHeads heads = op.getPackedHeads();
    double theta = op.getTheta().convertToDouble();
    SmallVector<Value> dweights;
    Value out = buildPackedHeads(
        rewriter, loc, qkv, dy, heads, op.getDqkv().getType().getElementType(),
        [&](PackedQkvHeads::Range range) -> Value {
          bool isQuery = range.start == heads.query().start;
          Value w = isQuery ? op.getQWeight() : op.getKWeight();
          Value g =
              buildRope(rewriter, loc, headSlice(rewriter, loc, dy, range),
                        op.getPositions(), theta, op.getRotaryDim(),
                        op.getScalingAttr(), /*inverse=*/true);
          Value x = headSlice(rewriter, loc, qkv, range);
          auto bw = RmsNormBackwardOp::create(
              rewriter, loc, x.getType(), w.getType(), g, x, w,
              isQuery ? op.getQRstd() : op.getKRstd(),
              /*residual_grad=*/Value(), op.getUnitOffsetAttr());
          dweights.push_back(bw.getDweight());
          return bw.getDx();
        });
    rewriter.replaceOp(op, {out, dweights[0], dweights[1]});
    return success();
  }
};

struct RopeBackwardLowering : OpRewritePattern<RopeBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RopeBackwardOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildRope(rewriter, op.getLoc(), op.getDy(),
                                     op.getPositions(),
                                     op.getTheta().convertToDouble(),
                                     op.getRotaryDim(), op.getScalingAttr(),
                                     /*inverse=*/true, op.getInterleaved()));
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmRopeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RopeLowering, QkvQkNormRopeLowering, QkvRopeLowering,
               QkvQkNormRopeBackwardLowering, RopeBackwardLowering>(
      patterns.getContext());
}
