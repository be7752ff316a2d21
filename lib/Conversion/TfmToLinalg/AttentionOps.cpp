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

#include "mlir/Dialect/SCF/IR/SCF.h"

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

/// Probabilities p [B, Hq, T, S] (statistic type, masked entries 0), the
/// scaled pre-softcap scores, and lse [B, Hq, T], recomputed identically by
/// the forward and the backward lowering.
struct AttentionProbs {
  Value probs, scaled, lse;
};

/// f32 attention contracts heads as batched GEMMs (one BLAS call per head
/// after bufferization); other types use the generic contractions.
bool useBatchedGemm(Value q, Type st) {
  return st.isF32() &&
         cast<RankedTensorType>(q.getType()).getElementType().isF32();
}

/// [B, X, Hs, D] -> [B, Hs, X, D]: heads to the front (a transposed copy).
Value headsFirst(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  OpFoldResult B = tensor::getMixedSize(b, loc, x, 0),
               X = tensor::getMixedSize(b, loc, x, 1);
  Value init = tensor::EmptyOp::create(
      b, loc,
      SmallVector<OpFoldResult>{B, b.getIndexAttr(t.getDimSize(2)), X,
                                b.getIndexAttr(t.getDimSize(3))},
      t.getElementType());
  return linalg::TransposeOp::create(b, loc, x, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

/// [B, X, Hs, D] -> [B·Hs, X, D]: one matrix per head.
Value toBatchedHeads(OpBuilder &b, Location loc, Value x) {
  return tensor::CollapseShapeOp::create(
      b, loc, headsFirst(b, loc, x),
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
}

/// The static size `size` holds, or dynamic: an expanded type must be
/// static where its collapsed source is (static batch and sequence sizes).
int64_t staticSize(OpFoldResult size) {
  return getConstantIntValue(size).value_or(ShapedType::kDynamic);
}

/// [B, Hq, X, Y] -> [B·Hkv, group·X, Y] (a reshape of a contiguous
/// tensor): the `group` query heads that read key/value head j (GQA: query
/// head h reads h / group) become the rows of one matrix, so their products
/// with head j's keys or values are one GEMM with `group` times the rows,
/// and no key or value is repeated per query head.
Value groupHeadRows(OpBuilder &b, Location loc, Value x, int64_t group) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t hkv = t.getDimSize(1) / group;
  OpFoldResult B = tensor::getMixedSize(b, loc, x, 0),
               X = tensor::getMixedSize(b, loc, x, 2);
  auto split = RankedTensorType::get(
      {t.getDimSize(0), hkv, group, t.getDimSize(2), t.getDimSize(3)},
      t.getElementType());
  Value x5 = tensor::ExpandShapeOp::create(
      b, loc, split, x,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
      SmallVector<OpFoldResult>{B, b.getIndexAttr(hkv), b.getIndexAttr(group),
                                X, tensor::getMixedSize(b, loc, x, 3)});
  return tensor::CollapseShapeOp::create(
      b, loc, x5, SmallVector<ReassociationIndices>{{0, 1}, {2, 3}, {4}});
}

/// [B, X, Hq, D] -> [B·Hkv, group·X, D]: heads to the front, grouped.
Value toGroupedHeads(OpBuilder &b, Location loc, Value x, int64_t group) {
  return groupHeadRows(b, loc, headsFirst(b, loc, x), group);
}

/// [B·Hkv, group·X, Y] -> [B, Hkv·group, X, Y]: the inverse of
/// groupHeadRows, given the batch and X.
Value ungroupHeadRows(OpBuilder &b, Location loc, Value y, OpFoldResult batch,
                      int64_t hkv, int64_t group, OpFoldResult rows) {
  auto t = cast<RankedTensorType>(y.getType());
  Type elem = t.getElementType();
  auto split = RankedTensorType::get(
      {staticSize(batch), hkv, group, staticSize(rows), t.getDimSize(2)}, elem);
  Value y5 = tensor::ExpandShapeOp::create(
      b, loc, split, y, SmallVector<ReassociationIndices>{{0, 1}, {2, 3}, {4}},
      SmallVector<OpFoldResult>{batch, b.getIndexAttr(hkv),
                                b.getIndexAttr(group), rows,
                                tensor::getMixedSize(b, loc, y, 2)});
  return tensor::CollapseShapeOp::create(
      b, loc, y5, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

/// Positions of the first query row and the first key (index values, null
/// for 0): the tiled flash lowering passes one query tile at a time and only
/// the keys that tile can see.
struct TileOffsets {
  Value query, key;
};

/// The position `index` of a tile dimension stands for, `offset` + index.
Value tilePosition(OpBuilder &b, Location loc, unsigned dim, Value offset) {
  Value i = linalg::IndexOp::create(b, loc, dim);
  return offset ? arith::AddIOp::create(b, loc, i, offset) : i;
}

/// `docStart` ([B, T] of the queries passed, or null) masks the keys
/// before each query's document.
AttentionProbs buildAttentionProbs(OpBuilder &b, Location loc, Value q, Value k,
                                   Value sinks, Value docStart,
                                   const AttentionConfig &cfg, Type st,
                                   TileOffsets offsets = {}) {
  MLIRContext *ctx = b.getContext();
  auto qt = cast<RankedTensorType>(q.getType());
  int64_t hq = qt.getDimSize(2);
  int64_t group = hq / cast<RankedTensorType>(k.getType()).getDimSize(2);
  OpFoldResult B = tensor::getMixedSize(b, loc, q, 0);
  OpFoldResult T = tensor::getMixedSize(b, loc, q, 1);
  OpFoldResult S = tensor::getMixedSize(b, loc, k, 1);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;

  // scores[b, h, t, s] = scale · Σ_d q[b, t, h, d] · k[b, s, h / group, d]
  SmallVector<OpFoldResult> scoreSizes = {B, b.getIndexAttr(hq), T, S};
  Value dots;
  if (useBatchedGemm(q, st)) {
    Value qg = toGroupedHeads(b, loc, q, group);
    Value kb = toBatchedHeads(b, loc, k);
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, qg, 0),
                                       tensor::getMixedSize(b, loc, qg, 1), S};
    Value init = filledTensor(b, loc, sizes, st, 0.0);
    Value prod = linalg::BatchMatmulTransposeBOp::create(
                     b, loc, TypeRange{init.getType()}, ValueRange{qg, kb},
                     ValueRange{init})
                     .getResult(0);
    dots = ungroupHeadRows(b, loc, prod, B, hq / group, group, T);
  } else {
    Value zero = filledTensor(b, loc, scoreSizes, st, 0.0);
    dots = linalg::GenericOp::create(
               b, loc, TypeRange{zero.getType()}, ValueRange{q, k},
               ValueRange{zero},
               SmallVector<AffineMap>{
                   AffineMap::get(5, 0, {d(0), d(2), d(1), d(4)}, ctx),
                   AffineMap::get(
                       5, 0, {d(0), d(3), d(1).floorDiv(group), d(4)}, ctx),
                   AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)},
               SmallVector<utils::IteratorType>{par, par, par, par, red},
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 yieldValue(nb, l, mulAdd(nb, l, a[0], a[1], a[2], st));
               })
               .getResult(0);
  }
  // Scale, soft-cap, then mask (HF order), in one pass over the scores; the
  // scaled pre-softcap scores are kept only when the soft-cap's derivative
  // needs them.
  double negInf = -std::numeric_limits<double>::infinity();
  auto scale = [&](OpBuilder &nb, Location l, Value dot) -> Value {
    return arith::MulFOp::create(nb, l, dot, constFloat(nb, l, st, cfg.scale));
  };
  Value scaled;
  if (cfg.softcap)
    scaled = buildMap(b, loc, scoreSizes, st, ValueRange{dots}, {},
                      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        return scale(nb, l, a[0]);
                      });
  SmallVector<Value> maskInputs = {scaled ? scaled : dots};
  SmallVector<AffineMap> maskMaps = {identityMap(ctx, 4)};
  if (docStart) {
    maskInputs.push_back(docStart);
    maskMaps.push_back(AffineMap::get(4, 0, {d(0), d(2)}, ctx));
  }
  Value scores = buildMap(
      b, loc, scoreSizes, st, maskInputs, maskMaps,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value s = a[0];
        if (cfg.softcap) {
          Value c = constFloat(nb, l, st, *cfg.softcap);
          s = arith::MulFOp::create(
              nb, l,
              math::TanhOp::create(nb, l, arith::DivFOp::create(nb, l, s, c)),
              c);
        } else {
          s = scale(nb, l, s);
        }
        if (!cfg.causal && !docStart)
          return s;
        Value si = tilePosition(nb, l, 3, offsets.key);
        Value masked;
        auto orMask = [&](Value m) {
          masked = masked ? arith::OrIOp::create(nb, l, masked, m) : m;
        };
        if (cfg.causal) {
          Value ti = tilePosition(nb, l, 2, offsets.query);
          orMask(
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, si, ti));
          if (cfg.window) {
            // A token sees itself and the window - 1 tokens before it.
            Value dist = arith::SubIOp::create(nb, l, ti, si);
            orMask(arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::sge, dist,
                arith::ConstantIndexOp::create(nb, l, *cfg.window)));
          }
        }
        if (docStart) {
          // Keys before the query's document belong to another document.
          Value key = arith::IndexCastOp::create(nb, l, a[1].getType(), si);
          orMask(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, key,
                                       a[1]));
        }
        return arith::SelectOp::create(nb, l, masked,
                                       constFloat(nb, l, st, negInf), s);
      });
  // Row max, including the sink logit.
  Value rowMax =
      reduceLastDim(b, loc, scores, st, negInf,
                    [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                      return arith::MaximumFOp::create(nb, l, a[0], a[1]);
                    });
  SmallVector<OpFoldResult> rowSizes = {B, b.getIndexAttr(hq), T};
  AffineMap rowSinkMap = AffineMap::get(3, 0, {d(1)}, ctx);
  if (sinks)
    rowMax = buildMap(b, loc, rowSizes, st, ValueRange{rowMax, sinks},
                      {identityMap(ctx, 3), rowSinkMap},
                      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        return arith::MaximumFOp::create(
                            nb, l, a[0], castFloat(nb, l, a[1], st));
                      });
  // denom = Σ_s exp(s − max) (+ exp(sink − max)).
  Value denom =
      buildReduction(b, loc, rowSizes, st, 0.0, ValueRange{scores, rowMax},
                     {identityMap(ctx, 4), dropLastDimMap(ctx, 4)},
                     dropLastDimMap(ctx, 4), {false, false, false, true},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value e = math::ExpOp::create(
                           nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                       return arith::AddFOp::create(nb, l, e, a[2]);
                     });
  if (sinks)
    denom = buildMap(
        b, loc, rowSizes, st, ValueRange{denom, rowMax, sinks},
        {identityMap(ctx, 3), identityMap(ctx, 3), rowSinkMap},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value e = math::ExpOp::create(
              nb, l,
              arith::SubFOp::create(nb, l, castFloat(nb, l, a[2], st), a[1]));
          return arith::AddFOp::create(nb, l, a[0], e);
        });
  Value lse = buildMap(b, loc, rowSizes, st, ValueRange{rowMax, denom}, {},
                       [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         return arith::AddFOp::create(
                             nb, l, a[0], math::LogOp::create(nb, l, a[1]));
                       });
  Value probs = buildMap(b, loc, scoreSizes, st, ValueRange{scores, lse},
                         {identityMap(ctx, 4), dropLastDimMap(ctx, 4)},
                         [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           return math::ExpOp::create(
                               nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                         });
  return {probs, scaled, lse};
}

/// Returns {out [B, T, Hq, Dv] (elem), lse [B, Hq, T] (f32)}.
std::pair<Value, Value> buildAttention(OpBuilder &b, Location loc, Value q,
                                       Value k, Value v, Value sinks,
                                       Value docStart,
                                       const AttentionConfig &cfg, Type st,
                                       TileOffsets offsets = {}) {
  MLIRContext *ctx = b.getContext();
  auto qt = cast<RankedTensorType>(q.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  Type elem = qt.getElementType();
  int64_t hq = qt.getDimSize(2);
  int64_t group = hq / cast<RankedTensorType>(k.getType()).getDimSize(2);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AttentionProbs p =
      buildAttentionProbs(b, loc, q, k, sinks, docStart, cfg, st, offsets);
  // HF rounds the probabilities to the activation type before P·V.
  Value probs = p.probs;
  if (elem != st)
    probs = roundTensor(b, loc, probs, elem);
  // out[b, t, h, e] = Σ_s p[b, h, t, s] · v[b, s, h / group, e]
  SmallVector<OpFoldResult> outSizes = {
      tensor::getMixedSize(b, loc, q, 0), tensor::getMixedSize(b, loc, q, 1),
      b.getIndexAttr(hq), b.getIndexAttr(vt.getDimSize(3))};
  if (useBatchedGemm(q, st)) {
    Value pg = groupHeadRows(b, loc, probs, group);
    Value vb = toBatchedHeads(b, loc, v);
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, pg, 0),
                                       tensor::getMixedSize(b, loc, pg, 1),
                                       outSizes[3]};
    Value init = filledTensor(b, loc, sizes, st, 0.0);
    Value prod =
        linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                      ValueRange{pg, vb}, ValueRange{init})
            .getResult(0);
    Value heads = ungroupHeadRows(b, loc, prod, outSizes[0], hq / group, group,
                                  outSizes[1]); // [B, Hq, T, Dv]
    Value outInit = tensor::EmptyOp::create(b, loc, outSizes, elem);
    Value out = linalg::TransposeOp::create(b, loc, heads, outInit,
                                            ArrayRef<int64_t>{0, 2, 1, 3})
                    .getResult()[0];
    return {out, p.lse};
  }
  Value outF = buildReduction(
      b, loc, outSizes, st, 0.0, ValueRange{probs, v},
      {AffineMap::get(5, 0, {d(0), d(2), d(1), d(4)}, ctx),
       AffineMap::get(5, 0, {d(0), d(4), d(2).floorDiv(group), d(3)}, ctx)},
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx),
      {false, false, false, false, true},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return mulAdd(nb, l, a[0], a[1], a[2], st);
      });
  Value out = outF;
  if (st != elem)
    out = roundTensor(b, loc, outF, elem);
  return {out, p.lse};
}

/// Splits the head dimension (2 of [B, X, Hq, Y] or 1 of [B, Hq, X, Y])
/// into [Hkv, group] so GQA reductions over a group use plain dimensions.
Value splitHeads(OpBuilder &b, Location loc, Value x, unsigned headDim,
                 int64_t group) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  SmallVector<OpFoldResult> outShape;
  for (unsigned i = 0, o = 0; i < t.getRank(); ++i) {
    if (i == headDim) {
      shape.append({t.getDimSize(i) / group, group});
      groups.push_back({int64_t(o), int64_t(o + 1)});
      outShape.append(
          {b.getIndexAttr(t.getDimSize(i) / group), b.getIndexAttr(group)});
      o += 2;
    } else {
      shape.push_back(t.getDimSize(i));
      groups.push_back({int64_t(o++)});
      outShape.push_back(tensor::getMixedSize(b, loc, x, i));
    }
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), x, groups,
      outShape);
}

/// The gradient of attention (docs/spec.md) from recomputed probabilities:
/// {dq (element type), dk, dv (, dsinks)} with dk, dv and dsinks still in the
/// statistic type `st`, so a tiled caller can sum them over query tiles
/// before rounding.
SmallVector<Value> buildAttentionBackward(OpBuilder &b, Location loc,
                                          Value dout, Value q, Value k, Value v,
                                          Value sinks, Value docStart,
                                          const AttentionConfig &cfg, Type st,
                                          TileOffsets offsets = {}) {
  MLIRContext *ctx = b.getContext();
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  Type elem = qt.getElementType();
  int64_t hq = qt.getDimSize(2), hkv = kt.getDimSize(2);
  int64_t group = hq / hkv;
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto f = [&](OpBuilder &nb, Location l, Value x) {
    return castFloat(nb, l, x, st);
  };
  auto round = [&](Value x) { return roundTensor(b, loc, x, elem); };
  AttentionProbs p =
      buildAttentionProbs(b, loc, q, k, sinks, docStart, cfg, st, offsets);
  SmallVector<OpFoldResult> scoreSizes = sizesOf(b, loc, p.probs);
  bool batched = useBatchedGemm(q, st);
  OpFoldResult B = tensor::getMixedSize(b, loc, q, 0);
  auto gemm = [&](auto tag, Value lhs, Value rhs, OpFoldResult m,
                  OpFoldResult n) -> Value {
    using GemmOp = decltype(tag);
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, lhs, 0), m,
                                       n};
    Value init = filledTensor(b, loc, sizes, st, 0.0);
    return GemmOp::create(b, loc, TypeRange{init.getType()},
                          ValueRange{lhs, rhs}, ValueRange{init})
        .getResult(0);
  };
  // Batched: the query heads of each key/value head as the rows of one
  // matrix (groupHeadRows), one GEMM per key/value head.
  Value doutG, vB;
  OpFoldResult T = scoreSizes[2], S = scoreSizes[3];
  auto ungroup = [&](Value y) {
    return ungroupHeadRows(b, loc, y, B, hkv, group, T);
  };
  if (batched) {
    doutG = toGroupedHeads(b, loc, dout, group);
    vB = toBatchedHeads(b, loc, v);
  }
  // dp[b, h, t, s] = Σ_e dout[b, t, h, e] · v[b, s, h / group, e]
  Value dp =
      batched ? ungroup(gemm(linalg::BatchMatmulTransposeBOp(), doutG, vB,
                             tensor::getMixedSize(b, loc, doutG, 1), S))
              : buildReduction(
                    b, loc, scoreSizes, st, 0.0, ValueRange{dout, v},
                    {AffineMap::get(5, 0, {d(0), d(2), d(1), d(4)}, ctx),
                     AffineMap::get(
                         5, 0, {d(0), d(3), d(1).floorDiv(group), d(4)}, ctx)},
                    AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx),
                    {false, false, false, false, true},
                    [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                      Value lhs = f(nb, l, a[0]);
                      Value rhs = f(nb, l, a[1]);
                      return arith::AddFOp::create(
                          nb, l, a[2], arith::MulFOp::create(nb, l, lhs, rhs));
                    });
  // delta[b, h, t] = Σ_s p · dp
  Value delta = buildReduction(
      b, loc, sizesOf(b, loc, p.lse), st, 0.0, ValueRange{p.probs, dp},
      {identityMap(ctx, 4), identityMap(ctx, 4)}, dropLastDimMap(ctx, 4),
      {false, false, false, true},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, l, a[2],
                                     arith::MulFOp::create(nb, l, a[0], a[1]));
      });
  // ds = p · (dp − delta), times the soft-cap derivative.
  SmallVector<Value> dsInputs = {p.probs, dp, delta};
  SmallVector<AffineMap> dsMaps = {identityMap(ctx, 4), identityMap(ctx, 4),
                                   dropLastDimMap(ctx, 4)};
  if (cfg.softcap) {
    dsInputs.push_back(p.scaled);
    dsMaps.push_back(identityMap(ctx, 4));
  }
  Value ds =
      buildMap(b, loc, scoreSizes, st, dsInputs, dsMaps,
               [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                 Value g = arith::MulFOp::create(
                     nb, l, a[0], arith::SubFOp::create(nb, l, a[1], a[2]));
                 if (cfg.softcap) {
                   Value th = math::TanhOp::create(
                       nb, l,
                       arith::DivFOp::create(
                           nb, l, a[3], constFloat(nb, l, st, *cfg.softcap)));
                   Value one = constFloat(nb, l, st, 1.0);
                   Value th2 = arith::MulFOp::create(nb, l, th, th);
                   g = arith::MulFOp::create(
                       nb, l, g, arith::SubFOp::create(nb, l, one, th2));
                 }
                 return g;
               });
  SmallVector<Value> grads;
  if (batched) {
    // Per key/value head j, its query heads' rows stacked (g·T rows):
    // dq_j = ds_j·k_j, dk_j = ds_jᵀ·q_j and dv_j = p_jᵀ·dout_j, the last two
    // summing over the group's query heads inside the GEMM.
    Value dsG = groupHeadRows(b, loc, ds, group),
          pG = groupHeadRows(b, loc, p.probs, group);
    Value kB = toBatchedHeads(b, loc, k);
    Value qG = toGroupedHeads(b, loc, q, group);
    OpFoldResult rowsG = tensor::getMixedSize(b, loc, qG, 1);
    int64_t dqk = qt.getDimSize(3),
            dvv = cast<RankedTensorType>(v.getType()).getDimSize(3);
    Value dqH = ungroup(
        gemm(linalg::BatchMatmulOp(), dsG, kB, rowsG, b.getIndexAttr(dqk)));
    Value dq = buildMap(
        b, loc, sizesOf(b, loc, q), elem, ValueRange{dqH},
        {AffineMap::get(4, 0, {d(0), d(2), d(1), d(3)}, ctx)},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          return castFloat(nb, l,
                           arith::MulFOp::create(
                               nb, l, a[0], constFloat(nb, l, st, cfg.scale)),
                           elem);
        });
    // [B·Hkv, S, E] -> [B, S, Hkv, E], times `factor`.
    auto toKeyLayout = [&](Value perKvHead, Value like, double factor) {
      auto t = cast<RankedTensorType>(perKvHead.getType());
      auto split = RankedTensorType::get(
          {staticSize(B), hkv, t.getDimSize(1), t.getDimSize(2)}, st);
      Value x = tensor::ExpandShapeOp::create(
          b, loc, split, perKvHead,
          SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}},
          SmallVector<OpFoldResult>{
              B, b.getIndexAttr(hkv),
              tensor::getMixedSize(b, loc, perKvHead, 1),
              tensor::getMixedSize(b, loc, perKvHead, 2)});
      return buildMap(b, loc, sizesOf(b, loc, like), st, ValueRange{x},
                      {AffineMap::get(4, 0, {d(0), d(2), d(1), d(3)}, ctx)},
                      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        if (factor == 1.0)
                          return a[0];
                        return arith::MulFOp::create(
                            nb, l, a[0], constFloat(nb, l, st, factor));
                      });
    };
    Value dkG = gemm(linalg::BatchMatmulTransposeAOp(), dsG, qG, S,
                     b.getIndexAttr(dqk));
    Value dk = toKeyLayout(dkG, k, cfg.scale);
    Value dvG = gemm(linalg::BatchMatmulTransposeAOp(), pG, doutG, S,
                     b.getIndexAttr(dvv));
    Value dv = toKeyLayout(dvG, v, 1.0);
    grads = {dq, dk, dv};
  } else {
    // dq[b, t, h, e] = scale · Σ_s ds[b, h, t, s] · k[b, s, h / group, e]
    SmallVector<OpFoldResult> qSizes = sizesOf(b, loc, q);
    Value dq = buildReduction(
        b, loc, qSizes, st, 0.0, ValueRange{ds, k},
        {AffineMap::get(5, 0, {d(0), d(2), d(1), d(4)}, ctx),
         AffineMap::get(5, 0, {d(0), d(4), d(2).floorDiv(group), d(3)}, ctx)},
        AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx),
        {false, false, false, false, true},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value prod = arith::MulFOp::create(nb, l, a[0], f(nb, l, a[1]));
          return arith::AddFOp::create(
              nb, l, a[2],
              arith::MulFOp::create(nb, l, prod,
                                    constFloat(nb, l, st, cfg.scale)));
        });
    // dk[b, s, j, e] = scale · Σ_{g, t} ds[b, j, g, t, s] · q[b, t, j, g, e]
    // dv[b, s, j, e] =         Σ_{g, t} p[b, j, g, t, s] · dout[b, t, j, g, e]
    Value ds5 = splitHeads(b, loc, ds, 1, group),
          p5 = splitHeads(b, loc, p.probs, 1, group);
    Value q5 = splitHeads(b, loc, q, 2, group),
          do5 = splitHeads(b, loc, dout, 2, group);
    AffineMap scoreMap =
        AffineMap::get(6, 0, {d(0), d(2), d(4), d(5), d(1)}, ctx);
    AffineMap tokenMap =
        AffineMap::get(6, 0, {d(0), d(5), d(2), d(4), d(3)}, ctx);
    AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
    SmallVector<bool> reduced = {false, false, false, false, true, true};
    Value dk = buildReduction(
        b, loc, sizesOf(b, loc, k), st, 0.0, ValueRange{ds5, q5},
        {scoreMap, tokenMap}, outMap, reduced,
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value prod = arith::MulFOp::create(nb, l, a[0], f(nb, l, a[1]));
          return arith::AddFOp::create(
              nb, l, a[2],
              arith::MulFOp::create(nb, l, prod,
                                    constFloat(nb, l, st, cfg.scale)));
        });
    Value dv = buildReduction(
        b, loc, sizesOf(b, loc, v), st, 0.0, ValueRange{p5, do5},
        {scoreMap, tokenMap}, outMap, reduced,
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(
              nb, l, a[2], arith::MulFOp::create(nb, l, a[0], f(nb, l, a[1])));
        });
    grads = {round(dq), dk, dv};
  }
  if (sinks) {
    // dsink[h] = −Σ_{b, t} exp(sink[h] − lse[b, h, t]) · delta[b, h, t]
    Value dsink = buildReduction(
        b, loc, {b.getIndexAttr(hq)}, st, 0.0, ValueRange{sinks, p.lse, delta},
        {AffineMap::get(3, 0, {d(1)}, ctx), identityMap(ctx, 3),
         identityMap(ctx, 3)},
        AffineMap::get(3, 0, {d(1)}, ctx), {true, false, true},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value ps = math::ExpOp::create(
              nb, l, arith::SubFOp::create(nb, l, f(nb, l, a[0]), a[1]));
          return arith::SubFOp::create(nb, l, a[3],
                                       arith::MulFOp::create(nb, l, ps, a[2]));
        });
    grads.push_back(dsink);
  }
  return grads;
}

std::optional<double> optionalDouble(std::optional<APFloat> v) {
  if (!v)
    return std::nullopt;
  return v->convertToDouble();
}

struct AttentionLowering : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    AttentionConfig cfg{op.getScale().convertToDouble(), op.getCausal(),
                        op.getSlidingWindow(), optionalDouble(op.getSoftcap())};
    Type st = computeType(op.getType().getElementType());
    auto [out, lse] =
        buildAttention(rewriter, op.getLoc(), op.getQ(), op.getK(), op.getV(),
                       op.getSinks(), op.getDocStart(), cfg, st);
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// Rows of queries per tile in the CPU flash lowering.
constexpr int64_t kQueryTile = 64;

/// `into` + `part` element-wise, written into `into` (an accumulator slice:
/// bufferizes in place).
Value accumulate(OpBuilder &b, Location loc, Value part, Value into) {
  unsigned rank = cast<RankedTensorType>(into.getType()).getRank();
  AffineMap id = identityMap(b.getContext(), rank);
  return linalg::GenericOp::create(
             b, loc, TypeRange{into.getType()}, ValueRange{part},
             ValueRange{into}, SmallVector<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange a) {
               yieldValue(nb, l, arith::AddFOp::create(nb, l, a[1], a[0]));
             })
      .getResult(0);
}

/// The keys [lo, lo + size) that queries [t0, t0 + rows) can see: every key,
/// or under a causal mask those up to the tile's last query and from its
/// first query's window. Masked keys outside the range contribute exact
/// zeros, so skipping them changes no value; a causal step does about half
/// the work of the full score matrix.
/// With packed documents (`docStart`), keys before every row's document at
/// the tile's first query are skipped too: document starts do not decrease
/// along a row, so no query of the tile sees them.
std::pair<Value, Value> visibleKeys(OpBuilder &b, Location loc,
                                    const AttentionConfig &cfg, Value t0,
                                    Value rows, Value numKeys,
                                    Value docStart = Value()) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  if (!cfg.causal)
    return {zero, numKeys};
  Value end = arith::AddIOp::create(b, loc, t0, rows);
  Value hi = arith::MinSIOp::create(b, loc, numKeys, end);
  Value lo = zero;
  if (cfg.window) {
    Value back = arith::ConstantIndexOp::create(b, loc, *cfg.window - 1);
    Value first = arith::SubIOp::create(b, loc, t0, back);
    lo = arith::MaxSIOp::create(b, loc, zero, first);
  }
  if (docStart) {
    // min over the batch rows of docStart[row, t0].
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value batch = tensor::DimOp::create(b, loc, docStart, 0);
    auto least = scf::ForOp::create(
        b, loc, zero, batch, one, ValueRange{t0},
        [&](OpBuilder &nb, Location l, Value row, ValueRange acc) {
          Value start =
              tensor::ExtractOp::create(nb, l, docStart, ValueRange{row, t0});
          Value at =
              arith::IndexCastOp::create(nb, l, nb.getIndexType(), start);
          Value m = arith::MinSIOp::create(nb, l, acc[0], at);
          scf::YieldOp::create(nb, l, ValueRange{m});
        });
    lo = arith::MaxSIOp::create(b, loc, lo, least.getResult(0));
  }
  if (cfg.window || docStart)
    lo = arith::MinSIOp::create(b, loc, lo, hi);
  return {lo, arith::SubIOp::create(b, loc, hi, lo)};
}

/// The document starts of queries [t0, t0 + rows) (null without documents).
Value sliceDocStart(OpBuilder &b, Location loc, Value docStart, Value t0,
                    Value rows) {
  return docStart ? sliceAlong(b, loc, docStart, 1, t0, rows) : Value();
}

struct FlashAttentionLowering : OpRewritePattern<FlashAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlashAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value qkv = op.getQkv();
    PackedQkvHeads heads = op.getPackedHeads();
    auto slice = [&](PackedQkvHeads::Range range) {
      return sliceAlong(rewriter, loc, qkv, 2, range.start, range.count);
    };
    AttentionConfig cfg{op.getScale().convertToDouble(), op.getCausal(),
                        op.getSlidingWindow(), optionalDouble(op.getSoftcap())};
    Value q = slice(heads.query()), k = slice(heads.key()),
          v = slice(heads.value());
    Type st = op.getLse().getType().getElementType();
    // Query tiles of kQueryTile rows: scores exist for one tile at a time
    // ([B, Hq, tile, S]), never T x T.
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value tileSize = arith::ConstantIndexOp::create(rewriter, loc, kQueryTile);
    Value tLen = tensor::DimOp::create(rewriter, loc, q, 1);
    Value outInit = emptyTensor(rewriter, loc, sizesOf(rewriter, loc, q),
                                op.getResult().getType().getElementType());
    SmallVector<OpFoldResult> lseSizes = {
        tensor::getMixedSize(rewriter, loc, q, 0),
        rewriter.getIndexAttr(heads.numQ), tLen};
    Value lseInit = emptyTensor(rewriter, loc, lseSizes, st);
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, tLen, tileSize, ValueRange{outInit, lseInit},
        [&](OpBuilder &b, Location l, Value t0, ValueRange acc) {
          Value rows = arith::MinSIOp::create(
              b, l, tileSize, arith::SubIOp::create(b, l, tLen, t0));
          Value qTile = sliceAlong(b, l, q, 1, t0, rows);
          auto [kLo, kSize] =
              visibleKeys(b, l, cfg, t0, rows, tLen, op.getDocStart());
          // Ops created in sequence, not as call arguments (whose order of
          // evaluation, hence of the IR, would depend on the compiler).
          Value kKeys = sliceAlong(b, l, k, 1, kLo, kSize);
          Value vKeys = sliceAlong(b, l, v, 1, kLo, kSize);
          Value docTile = sliceDocStart(b, l, op.getDocStart(), t0, rows);
          auto [o, lse] =
              buildAttention(b, l, qTile, kKeys, vKeys, op.getSinks(), docTile,
                             cfg, st, {t0, kLo});
          Value out = insertAlong(b, l, o, acc[0], 1, t0);
          Value lseAcc = insertAlong(b, l, lse, acc[1], 2, t0);
          scf::YieldOp::create(b, l, ValueRange{out, lseAcc});
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

struct AttentionBackwardLowering : OpRewritePattern<AttentionBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    AttentionConfig cfg{op.getScale().convertToDouble(), op.getCausal(),
                        op.getSlidingWindow(), optionalDouble(op.getSoftcap())};
    Type elem = op.getQ().getType().getElementType();
    Type st = computeType(elem);
    SmallVector<Value> grads = buildAttentionBackward(
        rewriter, op.getLoc(), op.getDout(), op.getQ(), op.getK(), op.getV(),
        op.getSinks(), op.getDocStart(), cfg, st);
    for (Value &g : MutableArrayRef<Value>(grads).drop_front())
      g = roundTensor(rewriter, op.getLoc(), g, elem);
    rewriter.replaceOp(op, grads);
    return success();
  }
};

/// The head slices of qkv, the backward of tfm.attention on them, and dq,
/// dk, dv inserted into one packed dqkv.
struct FlashAttentionBackwardLowering
    : OpRewritePattern<FlashAttentionBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlashAttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AttentionConfig cfg{op.getScale().convertToDouble(), op.getCausal(),
                        op.getSlidingWindow(), optionalDouble(op.getSoftcap())};
    Value qkv = op.getQkv();
    auto type = cast<RankedTensorType>(qkv.getType());
    Type st = computeType(type.getElementType());
    PackedQkvHeads heads = op.getPackedHeads();
    SmallVector<PackedQkvHeads::Range> ranges{heads.query(), heads.key(),
                                              heads.value()};
    auto slice = [&](PackedQkvHeads::Range r) {
      return sliceAlong(rewriter, loc, qkv, 2, r.start, r.count);
    };
    Value q = slice(ranges[0]), k = slice(ranges[1]), v = slice(ranges[2]);
    Value dout = op.getDout(), sinks = op.getSinks();
    // Query tiles as in the forward: each tile's dq is complete, its dk, dv
    // (and dsinks) are partial sums over its queries, accumulated in the
    // statistic type across tiles and rounded once at the end. When that is
    // the element type (f32) they accumulate in place in the packed result.
    Type elem = type.getElementType();
    bool packed = st == elem;
    auto zeros = [&](Value like) {
      return filledTensor(rewriter, loc, sizesOf(rewriter, loc, like), st, 0.0);
    };
    SmallVector<Value> inits;
    if (packed)
      inits.push_back(zeros(qkv));
    else
      inits = {emptyTensor(rewriter, loc, sizesOf(rewriter, loc, q), elem),
               zeros(k), zeros(v)};
    if (sinks)
      inits.push_back(zeros(sinks));
    unsigned sinkAcc = inits.size() - 1;
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value tileSize = arith::ConstantIndexOp::create(rewriter, loc, kQueryTile);
    Value tLen = tensor::DimOp::create(rewriter, loc, q, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, tLen, tileSize, inits,
        [&](OpBuilder &b, Location l, Value t0, ValueRange iterArgs) {
          Value rows = arith::MinSIOp::create(
              b, l, tileSize, arith::SubIOp::create(b, l, tLen, t0));
          auto [kLo, kSize] =
              visibleKeys(b, l, cfg, t0, rows, tLen, op.getDocStart());
          Value doutTile = sliceAlong(b, l, dout, 1, t0, rows);
          Value qTile = sliceAlong(b, l, q, 1, t0, rows);
          Value kKeys = sliceAlong(b, l, k, 1, kLo, kSize);
          Value vKeys = sliceAlong(b, l, v, 1, kLo, kSize);
          Value docTile = sliceDocStart(b, l, op.getDocStart(), t0, rows);
          SmallVector<Value> part =
              buildAttentionBackward(b, l, doutTile, qTile, kKeys, vKeys, sinks,
                                     docTile, cfg, st, {t0, kLo});
          SmallVector<Value> acc(iterArgs);
          // `p` into positions [lo, lo + p's size) of gradient g (0: q,
          // 1: k, 2: v): written, or added to what earlier tiles summed.
          auto update = [&](unsigned g, Value lo, Value p, bool add) {
            Value &dst = acc[packed ? 0 : g];
            Value heads = packed ? sliceAlong(b, l, dst, 2, ranges[g].start,
                                              ranges[g].count)
                                 : dst;
            if (add)
              p = accumulate(b, l, p,
                             sliceAlong(b, l, heads, 1, lo,
                                        tensor::getMixedSize(b, l, p, 1)));
            Value updated = insertAlong(b, l, p, heads, 1, lo);
            dst = packed ? insertAlong(b, l, updated, dst, 2, ranges[g].start)
                         : updated;
          };
          update(0, t0, part[0], /*add=*/false);
          update(1, kLo, part[1], /*add=*/true);
          update(2, kLo, part[2], /*add=*/true);
          if (sinks)
            acc[sinkAcc] = accumulate(b, l, part[3], acc[sinkAcc]);
          scf::YieldOp::create(b, l, acc);
        });
    Value out = loop.getResult(0);
    if (!packed) {
      out = emptyTensor(rewriter, loc, sizesOf(rewriter, loc, qkv), elem);
      for (auto [g, r] : llvm::zip(loop.getResults().take_front(3), ranges))
        out = insertAlong(rewriter, loc, roundTensor(rewriter, loc, g, elem),
                          out, 2, r.start);
    }
    SmallVector<Value> results{out};
    if (sinks)
      results.push_back(roundTensor(
          rewriter, loc, loop.getResult(sinkAcc),
          cast<RankedTensorType>(op.getDsinks().getType()).getElementType()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionLowering, FlashAttentionLowering,
               AttentionBackwardLowering, FlashAttentionBackwardLowering>(
      patterns.getContext());
}
