//===- MambaOps.cpp - Mamba2 ops to linalg --------------------------------===//
//
// tfm.mamba_conv1d, tfm.gated_rmsnorm and tfm.mamba_ssd_scan with their
// backward ops. The scan is an scf.for over chunks carrying the state
// [B, G, R, P, N] (heads split as G groups x R heads per group, so b and c
// are read by group without copies); inside a chunk of l <= chunk_size
// positions every step is a contraction (Einsum.h) of at most l x l per
// head: the chunk's decay matrix, c·bᵀ, and their products with x. Letters:
// b batch, t/l/s/i positions, g group, r head in group, p head dim, n state.
//
//===----------------------------------------------------------------------===//

#include "ScanUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

//===----------------------------------------------------------------------===//
// tfm.mamba_conv1d
//===----------------------------------------------------------------------===//

/// `x` [B, T, ...] (floats or integers) behind `before` and ahead of
/// `after` zeros along T.
Value padSeq(OpBuilder &b, Location loc, Value x, int64_t before,
             int64_t after) {
  SmallVector<OpFoldResult> sizes = sizesOf(b, loc, x);
  Value t = getValueOrCreateConstantIndexOp(b, loc, sizes[1]);
  Value extra = arith::ConstantIndexOp::create(b, loc, before + after);
  sizes[1] = arith::AddIOp::create(b, loc, t, extra).getResult();
  Type elem = elementType(x);
  Value zero =
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(elem)));
  Value zeros =
      linalg::FillOp::create(b, loc, ValueRange{zero},
                             ValueRange{emptyTensor(b, loc, sizes, elem)})
          .getResult(0);
  return insertSeq(b, loc, x, zeros,
                   arith::ConstantIndexOp::create(b, loc, before));
}

/// Whether the tap at token `tap` (an index, possibly negative) reaches
/// into the document that starts at `start` (doc_start's integer): taps
/// before it read another document and count as zeros.
Value tapInDocument(OpBuilder &b, Location loc, Value tap, Value start) {
  Value pos = arith::IndexCastOp::create(b, loc, start.getType(), tap);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, pos, start);
}

/// x · y added to `acc` in `st`, or `acc` alone where `keep` is false.
Value maskedMulAdd(OpBuilder &b, Location loc, Type st, Value x, Value y,
                   Value acc, Value keep) {
  Scalar s = scalar(b, loc, st);
  Value xs = s.f(x);
  Value ys = s.f(y);
  Value sum = s.add(acc, s.mul(xs, ys));
  return keep ? arith::SelectOp::create(b, loc, keep, sum, acc).getResult()
              : sum;
}

/// pre[b, t, c] = bias[c] + Σ_k w[c, k] · xpad[b, t + k, c] in `st`, rounded
/// to the element type (PyTorch's conv1d rounds its output); with
/// `docStart`, only the taps t + k − K + 1 >= docStart[b, t].
Value conv1dPre(OpBuilder &b, Location loc, Value x, Value w, Value bias,
                Value docStart, Type st) {
  MLIRContext *ctx = b.getContext();
  int64_t k = cast<RankedTensorType>(w.getType()).getShape()[1];
  Value xpad = padSeq(b, loc, x, k - 1, 0);
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx);
  SmallVector<Value> inputs = {xpad, w};
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d0, d1 + d3, d2}, ctx),
                                 AffineMap::get(4, 0, {d2, d3}, ctx)};
  if (docStart) {
    inputs.push_back(docStart);
    maps.push_back(AffineMap::get(4, 0, {d0, d1}, ctx));
  }
  Value acc = buildReduction(
      b, loc, sizesOf(b, loc, x), st, 0.0, inputs, maps,
      AffineMap::get(4, 0, {d0, d1, d2}, ctx), {false, false, false, true},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value keep;
        if (docStart) {
          Value t = linalg::IndexOp::create(nb, l, 1),
                tap = linalg::IndexOp::create(nb, l, 3);
          Value sum = arith::AddIOp::create(nb, l, t, tap);
          Value back = arith::ConstantIndexOp::create(nb, l, k - 1);
          Value at = arith::SubIOp::create(nb, l, sum, back);
          keep = tapInDocument(nb, l, at, a[2]);
        }
        return maskedMulAdd(nb, l, st, a[0], a[1], a.back(), keep);
      });
  Type elem = elementType(x);
  if (!bias)
    return buildMap(b, loc, sizesOf(b, loc, acc), st, ValueRange{acc}, {},
                    [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                      return scalar(nb, l, st).round(a[0], elem);
                    });
  return einsum(b, loc, "btc,c->btc", ValueRange{acc, bias}, st,
                [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                  Scalar s = scalar(nb, l, st);
                  return s.round(s.add(a[0], s.f(a[1])), elem);
                });
}

struct MambaConv1dLowering : OpRewritePattern<MambaConv1dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MambaConv1dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementType(op.getX()), st = computeType(elem);
    Value pre = conv1dPre(rewriter, loc, op.getX(), op.getWeight(),
                          op.getBias(), op.getDocStart(), st);
    rewriter.replaceOp(
        op, buildMap(rewriter, loc, sizesOf(rewriter, loc, pre), elem,
                     ValueRange{pre}, {},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return castFloat(nb, l, scalar(nb, l, st).silu(a[0]),
                                        elem);
                     }));
    return success();
  }
};

struct MambaConv1dBackwardLowering : OpRewritePattern<MambaConv1dBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MambaConv1dBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getX(), w = op.getWeight();
    Type elem = elementType(x), st = computeType(elem);
    int64_t k = cast<RankedTensorType>(w.getType()).getShape()[1];
    Value docStart = op.getDocStart();
    Value pre = conv1dPre(rewriter, loc, x, w, op.getBias(), docStart, st);
    // g = dy · silu'(pre), the gradient of the pre-activation.
    Value g =
        einsum(rewriter, loc, "btc,btc->btc", ValueRange{op.getDy(), pre}, st,
               [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                 Scalar s = scalar(nb, l, st);
                 Value g = s.f(a[0]);
                 return s.mul(g, s.siluGrad(a[1]));
               });
    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx);
    auto index = [](OpBuilder &nb, Location l, unsigned dim) -> Value {
      return linalg::IndexOp::create(nb, l, dim);
    };
    // dx[b, t, c] = Σ_k w[c, k] · gpad[b, t + K − 1 − k, c]: output
    // u = t + K − 1 − k reads input t.
    Value gpad = padSeq(rewriter, loc, g, 0, k - 1);
    SmallVector<Value> dxInputs = {gpad, w};
    SmallVector<AffineMap> dxMaps = {
        AffineMap::get(4, 0, {d0, d1 + (k - 1) - d3, d2}, ctx),
        AffineMap::get(4, 0, {d2, d3}, ctx)};
    if (docStart) {
      // docStart of u, read past the end as 0 (g is 0 there anyway).
      dxInputs.push_back(padSeq(rewriter, loc, docStart, 0, k - 1));
      dxMaps.push_back(AffineMap::get(4, 0, {d0, d1 + (k - 1) - d3}, ctx));
    }
    Value dx = buildReduction(
        rewriter, loc, sizesOf(rewriter, loc, x), st, 0.0, dxInputs, dxMaps,
        AffineMap::get(4, 0, {d0, d1, d2}, ctx), {false, false, false, true},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value keep;
          if (docStart) // input t, u's document start
            keep = tapInDocument(nb, l, index(nb, l, 1), a[2]);
          return maskedMulAdd(nb, l, st, a[0], a[1], a.back(), keep);
        });
    // dw[c, k] = Σ_{b, t} g[b, t, c] · xpad[b, t + k, c]; loops (c, k, b, t):
    // output t reads input t + k − K + 1.
    Value xpad = padSeq(rewriter, loc, x, k - 1, 0);
    SmallVector<Value> dwInputs = {g, xpad};
    SmallVector<AffineMap> dwMaps = {
        AffineMap::get(4, 0, {d2, d3, d0}, ctx),
        AffineMap::get(4, 0, {d2, d3 + d1, d0}, ctx)};
    if (docStart) {
      dwInputs.push_back(docStart);
      dwMaps.push_back(AffineMap::get(4, 0, {d2, d3}, ctx));
    }
    Value dw = buildReduction(
        rewriter, loc, sizesOf(rewriter, loc, w), st, 0.0, dwInputs, dwMaps,
        AffineMap::get(4, 0, {d0, d1}, ctx), {false, false, true, true},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value keep;
          if (docStart) { // input t + k − K + 1, t's document start
            Value t = index(nb, l, 3);
            Value tap = index(nb, l, 1);
            Value sum = arith::AddIOp::create(nb, l, t, tap);
            Value back = arith::ConstantIndexOp::create(nb, l, k - 1);
            Value at = arith::SubIOp::create(nb, l, sum, back);
            keep = tapInDocument(nb, l, at, a[2]);
          }
          return maskedMulAdd(nb, l, st, a[0], a[1], a.back(), keep);
        });
    Value db =
        einsum(rewriter, loc, "btc->c", ValueRange{g}, st,
               [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                 return scalar(nb, l, st).add(a[0], a[1]);
               });
    rewriter.replaceOp(
        op, {roundTensor(rewriter, loc, dx, elem),
             roundTensor(rewriter, loc, dw, elementType(w)),
             roundTensor(rewriter, loc, db, elementType(op.getDbias()))});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// tfm.gated_rmsnorm
//===----------------------------------------------------------------------===//

/// [.., I] as [N, G, I / G].
Value asGroups(OpBuilder &b, Location loc, Value x, int64_t groups) {
  Value m = collapseToMatrix(b, loc, x);
  int64_t features = cast<RankedTensorType>(m.getType()).getShape()[1];
  return splitDim(b, loc, m, 1, {groups, features / groups});
}

/// [N, G, K] (or [N, G]) back to the leading dimensions of `like`, with
/// `last` as its last dimension.
Value fromGroups(OpBuilder &b, Location loc, Value x, Value like,
                 int64_t last) {
  auto lt = cast<RankedTensorType>(like.getType());
  auto xt = cast<RankedTensorType>(x.getType());
  Value m = xt.getRank() == 3 ? mergeDims(b, loc, x, 1, 2) : x;
  SmallVector<int64_t> shape(lt.getShape().drop_back());
  shape.push_back(last);
  SmallVector<OpFoldResult> lead = sizesOf(b, loc, like);
  lead.pop_back();
  return expandFromMatrix(
      b, loc, m, RankedTensorType::get(shape, xt.getElementType()), lead);
}

/// The norm's weight as [G, K]: split, or (one [K] weight shared by the
/// groups) broadcast.
Value groupWeight(OpBuilder &b, Location loc, Value w, int64_t groups,
                  int64_t k) {
  if (cast<RankedTensorType>(w.getType()).getDimSize(0) == groups * k)
    return splitDim(b, loc, w, 0, {groups, k});
  EinsumOptions opts;
  std::pair<char, OpFoldResult> g{'g', b.getIndexAttr(groups)};
  opts.sizes = g;
  return einsum(
      b, loc, "k->gk", ValueRange{w}, elementType(w),
      [](OpBuilder &, Location, ValueRange a, LetterIndex) { return a[0]; },
      opts);
}

/// The gated input of the norm, h = x · silu(z) (gate first) or x, in `st`.
Value gatedInput(OpBuilder &b, Location loc, Value x3, Value z3, bool gateFirst,
                 Type st) {
  return einsum(b, loc, "ngk,ngk->ngk", ValueRange{x3, z3}, st,
                [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                  Scalar s = scalar(nb, l, st);
                  Value x = s.f(a[0]);
                  return gateFirst ? s.mul(x, s.silu(s.f(a[1]))) : x;
                });
}

struct GatedRmsNormLowering : OpRewritePattern<GatedRmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatedRmsNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t groups = op.getGroups();
    Type st = elementType(op.getRstd());
    Type outElem = elementType(op.getResult());
    bool before = op.getNormBeforeGate();
    Value x3 = asGroups(rewriter, loc, op.getX(), groups);
    Value z3 = asGroups(rewriter, loc, op.getZ(), groups);
    int64_t k = cast<RankedTensorType>(x3.getType()).getShape()[2];
    Value w2 = groupWeight(rewriter, loc, op.getWeight(), groups, k);
    double eps = op.getEps().convertToDouble();
    Value h = gatedInput(rewriter, loc, x3, z3, !before, st);
    Value rstd =
        einsum(rewriter, loc, "ngk->ng", ValueRange{h}, st,
               [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                 Scalar s = scalar(nb, l, st);
                 return s.add(a[1], s.mul(a[0], a[0]));
               });
    rstd = einsum(rewriter, loc, "ng->ng", ValueRange{rstd}, st,
                  [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                    Scalar s = scalar(nb, l, st);
                    Value mean =
                        arith::DivFOp::create(nb, l, a[0], s.c(double(k)));
                    Value v = s.add(mean, s.c(eps));
                    Value one = s.c(1.0);
                    return arith::DivFOp::create(
                        nb, l, one, math::SqrtOp::create(nb, l, v));
                  });
    Value y = einsum(rewriter, loc, "ngk,ng,gk,ngk->ngk",
                     ValueRange{h, rstd, w2, z3}, outElem,
                     [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                       Scalar s = scalar(nb, l, st);
                       Value w = s.f(a[2]);
                       Value v = s.mul(w, s.mul(a[0], a[1]));
                       if (before)
                         v = s.mul(v, s.silu(s.f(a[3])));
                       return castFloat(nb, l, v, outElem);
                     });
    rewriter.replaceOp(
        op, {fromGroups(
                 rewriter, loc, y, op.getX(),
                 cast<RankedTensorType>(op.getX().getType()).getShape().back()),
             fromGroups(rewriter, loc, rstd, op.getX(), groups)});
    return success();
  }
};

struct GatedRmsNormBackwardLowering : OpRewritePattern<GatedRmsNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatedRmsNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto rt = cast<RankedTensorType>(op.getRstd().getType());
    int64_t groups = rt.getShape().back();
    Type st = rt.getElementType();
    bool before = op.getNormBeforeGate();
    Value x3 = asGroups(rewriter, loc, op.getX(), groups);
    Value z3 = asGroups(rewriter, loc, op.getZ(), groups);
    Value dy3 = asGroups(rewriter, loc, op.getDy(), groups);
    int64_t k = cast<RankedTensorType>(x3.getType()).getShape()[2];
    Value w2 = groupWeight(rewriter, loc, op.getWeight(), groups, k);
    Value rstd = collapseToMatrix(rewriter, loc, op.getRstd());
    Value h = gatedInput(rewriter, loc, x3, z3, !before, st);
    // n = h·rstd; dn = dy·w (· silu(z) when the gate comes after the norm).
    Value n = einsum(rewriter, loc, "ngk,ng->ngk", ValueRange{h, rstd}, st,
                     [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                       return scalar(nb, l, st).mul(a[0], a[1]);
                     });
    auto gateOf = [&](Scalar &s, Value z) {
      return before ? s.silu(s.f(z)) : s.c(1.0);
    };
    Value dn =
        einsum(rewriter, loc, "ngk,gk,ngk->ngk", ValueRange{dy3, w2, z3}, st,
               [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                 Scalar s = scalar(nb, l, st);
                 Value dy = s.f(a[0]);
                 Value w = s.f(a[1]);
                 Value dyw = s.mul(dy, w);
                 return s.mul(dyw, gateOf(s, a[2]));
               });
    Value dot =
        einsum(rewriter, loc, "ngk,ngk->ng", ValueRange{dn, n}, st,
               [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                 Scalar s = scalar(nb, l, st);
                 return s.add(a[2], s.mul(a[0], a[1]));
               });
    Value dh = einsum(
        rewriter, loc, "ngk,ngk,ng,ng->ngk", ValueRange{dn, n, dot, rstd}, st,
        [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
          Scalar s = scalar(nb, l, st);
          Value mean = arith::DivFOp::create(nb, l, a[2], s.c(double(k)));
          return s.mul(a[3], s.sub(a[0], s.mul(a[1], mean)));
        });
    Value dw =
        einsum(rewriter, loc, "ngk,ngk,ngk->gk", ValueRange{dy3, n, z3}, st,
               [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                 Scalar s = scalar(nb, l, st);
                 Value dyn = s.mul(s.f(a[0]), a[1]);
                 Value term = s.mul(dyn, gateOf(s, a[2]));
                 return s.add(a[3], term);
               });
    // Through the gate.
    Value dx = dh, dz;
    if (before) {
      dz = einsum(rewriter, loc, "ngk,gk,ngk,ngk->ngk",
                  ValueRange{dy3, w2, n, z3}, st,
                  [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                    Scalar s = scalar(nb, l, st);
                    Value dy = s.f(a[0]);
                    Value w = s.f(a[1]);
                    Value dyw = s.mul(dy, w);
                    Value slope = s.siluGrad(s.f(a[3]));
                    return s.mul(dyw, s.mul(a[2], slope));
                  });
    } else {
      dx = einsum(rewriter, loc, "ngk,ngk->ngk", ValueRange{dh, z3}, st,
                  [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                    Scalar s = scalar(nb, l, st);
                    return s.mul(a[0], s.silu(s.f(a[1])));
                  });
      dz = einsum(rewriter, loc, "ngk,ngk,ngk->ngk", ValueRange{dh, x3, z3}, st,
                  [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                    Scalar s = scalar(nb, l, st);
                    Value dhx = s.mul(a[0], s.f(a[1]));
                    return s.mul(dhx, s.siluGrad(s.f(a[2])));
                  });
    }
    int64_t features = groups * k;
    auto back = [&](Value g, Value like) {
      return roundTensor(rewriter, loc,
                         fromGroups(rewriter, loc, g, like, features),
                         elementType(like));
    };
    // A shared weight gathers the gradient of every group.
    bool shared =
        cast<RankedTensorType>(op.getWeight().getType()).getDimSize(0) == k &&
        groups > 1;
    Value dwFlat = shared ? contract(rewriter, loc, "gk->k", ValueRange{dw}, st)
                          : mergeDims(rewriter, loc, dw, 0, 2);
    rewriter.replaceOp(
        op, {back(dx, op.getX()), back(dz, op.getZ()),
             roundTensor(rewriter, loc, dwFlat, elementType(op.getWeight()))});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// tfm.silu_gate
//===----------------------------------------------------------------------===//

struct SiluGateLowering : OpRewritePattern<SiluGateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SiluGateOp op,
                                PatternRewriter &rewriter) const override {
    Type out = elementType(op.getResult()), st = computeType(out);
    Type zElem = elementType(op.getZ());
    if (elementType(op.getX()).isF64())
      st = elementType(op.getX());
    rewriter.replaceOp(
        op, buildMap(rewriter, op.getLoc(),
                     sizesOf(rewriter, op.getLoc(), op.getX()), out,
                     ValueRange{op.getX(), op.getZ()}, {},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Scalar s = scalar(nb, l, st);
                       // silu(z) in z's type, as PyTorch's bf16 silu.
                       Value gate = s.round(s.silu(s.f(a[1])), zElem);
                       return castFloat(nb, l, s.mul(s.f(a[0]), gate), out);
                     }));
    return success();
  }
};

struct SiluGateBackwardLowering : OpRewritePattern<SiluGateBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SiluGateBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type st = computeType(elementType(op.getX()));
    SmallVector<Value> in = {op.getDy(), op.getX(), op.getZ()};
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, op.getX());
    Value dx = buildMap(rewriter, loc, sizes, elementType(op.getX()), in, {},
                        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          Scalar s = scalar(nb, l, st);
                          Value dy = s.f(a[0]);
                          Value grad = s.mul(dy, s.silu(s.f(a[2])));
                          return castFloat(nb, l, grad, elementType(op.getX()));
                        });
    Value dz = buildMap(rewriter, loc, sizes, elementType(op.getZ()), in, {},
                        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          Scalar s = scalar(nb, l, st);
                          Value dy = s.f(a[0]);
                          Value x = s.f(a[1]);
                          Value dyx = s.mul(dy, x);
                          Value grad = s.mul(dyx, s.siluGrad(s.f(a[2])));
                          return castFloat(nb, l, grad, elementType(op.getZ()));
                        });
    rewriter.replaceOp(op, {dx, dz});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// tfm.mamba_ssd_scan
//===----------------------------------------------------------------------===//

/// What the scan and its gradient compute before the chunk loop.
struct ScanSetup {
  Type st;
  int64_t groups, perGroup, chunk;
  Value x5;     // [B, T, G, R, P], as stored
  Value bm, cm; // [B, T, G, N], as stored
  Value dtRaw;  // dt + dt_bias (rounded as dt) [B, T, G, R], st
  Value delta;  // clamp(softplus(dt + dt_bias)) [B, T, G, R], st
  Value a;      // −exp(a_log) [G, R], st
  Value d;      // [G, R], st
  Value seqLen, numChunks, chunkSize;
  OpFoldResult batch;
  Value zeroState; // [B, G, R, P, N] zeros
  double dtMin, dtMax;
  Value docStart; // [B, T] or null: packed documents
};

/// Set-up shared by the scan and its gradient (the same operands).
template <typename ScanOp> ScanSetup setUpScan(OpBuilder &b, ScanOp op) {
  Location loc = op.getLoc();
  Value x = op.getX(), dt = op.getDt(), aLog = op.getALog(), bm = op.getB(),
        cm = op.getC(), d = op.getD(), dtBias = op.getDtBias();
  int64_t chunk = op.getChunkSize();
  double dtMin = op.getDtMin().convertToDouble(),
         dtMax = op.getDtMax().convertToDouble();
  ScanSetup s;
  s.docStart = op.getDocStart();
  s.st = computeType(elementType(x));
  auto xt = cast<RankedTensorType>(x.getType());
  auto bt = cast<RankedTensorType>(bm.getType());
  int64_t heads = xt.getShape()[2];
  s.groups = bt.getShape()[2];
  s.perGroup = heads / s.groups;
  s.chunk = chunk;
  s.dtMin = dtMin;
  s.dtMax = dtMax;
  s.x5 = splitDim(b, loc, x, 2, {s.groups, s.perGroup});
  s.bm = bm;
  s.cm = cm;
  auto perHead = [&](Value v) {
    return splitDim(b, loc, v, 0, {s.groups, s.perGroup});
  };
  Value dt4 = splitDim(b, loc, dt, 2, {s.groups, s.perGroup});
  Type dtElem = elementType(dt);
  Type st = s.st;
  // HF adds the bias in dt's type, then softplus (threshold 20) and clamp.
  s.dtRaw =
      einsum(b, loc, "btgr,gr->btgr", ValueRange{dt4, perHead(dtBias)}, st,
             [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
               Scalar c = scalar(nb, l, st);
               Value raw = c.f(v[0]);
               Value bias = c.f(v[1]);
               return c.round(c.add(raw, bias), dtElem);
             });
  s.delta = einsum(
      b, loc, "btgr->btgr", ValueRange{s.dtRaw}, st,
      [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
        Scalar c = scalar(nb, l, st);
        Value sp = c.round(c.softplus(v[0]), dtElem);
        sp = arith::MaximumFOp::create(nb, l, sp, c.c(dtMin));
        return arith::MinimumFOp::create(nb, l, sp, c.c(dtMax)).getResult();
      });
  s.a = einsum(
      b, loc, "gr->gr", ValueRange{perHead(aLog)}, st,
      [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
        Scalar c = scalar(nb, l, st);
        return arith::NegFOp::create(nb, l, c.exp(c.f(v[0]))).getResult();
      });
  s.d = einsum(b, loc, "gr->gr", ValueRange{perHead(d)}, st,
               [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
                 return scalar(nb, l, st).f(v[0]);
               });
  s.seqLen = tensor::DimOp::create(b, loc, x, 1);
  s.chunkSize = arith::ConstantIndexOp::create(b, loc, chunk);
  s.numChunks = arith::CeilDivUIOp::create(b, loc, s.seqLen, s.chunkSize);
  auto idx = [&](int64_t v) { return b.getIndexAttr(v); };
  s.batch = tensor::getMixedSize(b, loc, x, 0);
  s.zeroState = filledTensor(b, loc,
                             {s.batch, idx(s.groups), idx(s.perGroup),
                              idx(xt.getShape()[3]), idx(bt.getShape()[3])},
                             st, 0.0);
  return s;
}

/// One chunk's view of the scan inputs, and the decays within it.
struct Chunk {
  Value start, len; // position of the chunk and its length l
  Value x, bm, cm;  // [B, l, G, R, P], [B, l, G, N] as stored
  Value delta;      // [B, l, G, R]
  Value lam;        // inclusive cumulative sum of δ·A [B, l, G, R]
  Value total;      // its last entry, the chunk's whole decay [B, G, R]
  Value cb;         // c[l]·b[s] per group [B, l, s, G]
  ChunkDocuments docs;
};

Chunk loadChunk(OpBuilder &b, Location loc, const ScanSetup &s, Value c) {
  Chunk k;
  Type st = s.st;
  std::tie(k.start, k.len) = chunkBounds(b, loc, c, s.chunkSize, s.seqLen);
  k.x = sliceSeq(b, loc, s.x5, k.start, k.len);
  k.bm = sliceSeq(b, loc, s.bm, k.start, k.len);
  k.cm = sliceSeq(b, loc, s.cm, k.start, k.len);
  k.delta = sliceSeq(b, loc, s.delta, k.start, k.len);
  Value decay =
      einsum(b, loc, "blgr,gr->blgr", ValueRange{k.delta, s.a}, st,
             [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
               return scalar(nb, l, st).mul(v[0], v[1]);
             });
  k.lam = chunkCumsum(b, loc, decay, k.len, st);
  k.total = einsum(b, loc, "blgr->bgr", ValueRange{decay}, st,
                   [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
                     return scalar(nb, l, st).add(v[0], v[1]);
                   });
  k.cb = gemm(b, loc, "blgn,bsgn->blsg", k.cm, k.bm, st);
  k.docs = ChunkDocuments::of(b, loc, s.docStart, k.start, k.len);
  return k;
}

/// exp(lam[l] − lam[s]) for s <= l in l's document, else 0: the chunk's
/// decay matrix.
Value decayMatrix(OpBuilder &b, Location loc, const Chunk &k, Type st) {
  SmallVector<Value> inputs = {k.lam, k.lam};
  if (k.docs)
    inputs.push_back(k.docs.docs);
  return einsum(
      b, loc, k.docs ? "blgr,bsgr,bl->blsgr" : "blgr,bsgr->blsgr", inputs, st,
      [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex idx) {
        Scalar c = scalar(nb, l, st);
        Value visible = c.atOrBefore(idx, 's', 'l');
        if (k.docs)
          visible = arith::AndIOp::create(
              nb, l, visible, k.docs.inDocument(nb, l, idx, 's', v[2]));
        return c.where(visible, c.exp(c.sub(v[0], v[1])));
      });
}

/// exp(total − lam[s]) [B, s, G, R]: how much of position s survives to the
/// end of the chunk (nothing before the chunk's last document start).
Value survival(OpBuilder &b, Location loc, const Chunk &k, Type st) {
  auto body = [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
    Scalar c = scalar(nb, l, st);
    Value e = c.exp(c.sub(v[0], v[1]));
    return k.docs ? c.mul(e, v[2]) : e;
  };
  if (!k.docs)
    return einsum(b, loc, "bgr,bsgr->bsgr", ValueRange{k.total, k.lam}, st,
                  body);
  Value mask = k.docs.survivingMask(b, loc, st, k.len);
  return einsum(b, loc, "bgr,bsgr,bs->bsgr", ValueRange{k.total, k.lam, mask},
                st, body);
}

/// exp(lam[l]) [B, l, G, R]: how much of the state carried into the chunk
/// reaches position l (nothing from a document start in the chunk on).
Value carriedDecay(OpBuilder &b, Location loc, const Chunk &k, Type st) {
  Value mask = k.docs ? k.docs.carriedMask(b, loc, st) : Value();
  return maskedExpOf(b, loc, "blgr", "bl", k.lam, mask, st);
}

/// exp(total) [B, G, R]: how much of the state carried in survives the
/// chunk (nothing when a document starts in it).
Value keptDecay(OpBuilder &b, Location loc, const Chunk &k, Type st) {
  Value mask = k.docs ? k.docs.keptMask(b, loc, st) : Value();
  return maskedExpOf(b, loc, "bgr", "b", k.total, mask, st);
}

struct MambaSsdScanLowering : OpRewritePattern<MambaSsdScanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MambaSsdScanOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ScanSetup s = setUpScan(rewriter, op);
    Type st = s.st;
    int64_t p = cast<RankedTensorType>(op.getX().getType()).getShape()[3];
    int64_t n = cast<RankedTensorType>(op.getB().getType()).getShape()[3];
    auto idx = [&](int64_t v) { return rewriter.getIndexAttr(v); };
    Value yInit = emptyTensor(rewriter, loc, sizesOf(rewriter, loc, s.x5), st);
    Value statesInit = emptyTensor(
        rewriter, loc,
        {s.batch, s.numChunks, idx(s.groups), idx(s.perGroup), idx(p), idx(n)},
        st);
    auto loop = forEachChunk(
        rewriter, loc, s.numChunks, ValueRange{s.zeroState, yInit, statesInit},
        /*reverse=*/false,
        [&](OpBuilder &b, Location l, Value c,
            ValueRange acc) -> SmallVector<Value> {
          Value state = acc[0];
          Chunk k = loadChunk(b, l, s, c);
          Value states = insertChunkState(b, l, state, acc[2], c);
          // y = Σ_s [s<=l] e^{lam_l − lam_s} (c_l·b_s) δ_s x_s
          //   + e^{lam_l} c_l·state + d·x_l.
          Value decay = decayMatrix(b, l, k, st);
          Value m = contract(b, l, "blsgr,blsg,bsgr->blsgr",
                             ValueRange{decay, k.cb, k.delta}, st);
          Value cs = gemm(b, l, "blgn,bgrpn->blgrp", k.cm, state, st);
          Value expLam = carriedDecay(b, l, k, st);
          Value carried = einsum(
              b, l, "blgrp,blgr,gr,blgrp->blgrp",
              ValueRange{cs, expLam, s.d, k.x}, st,
              [&](OpBuilder &nb, Location ll, ValueRange v, LetterIndex) {
                Scalar sc = scalar(nb, ll, st);
                Value decayed = sc.mul(v[0], v[1]);
                return sc.add(decayed, sc.mul(v[2], sc.f(v[3])));
              });
          Value y = gemm(b, l, "blsgr,bsgrp->blgrp", m, k.x, st, carried);
          // state' = e^{total} state + Σ_s e^{total − lam_s} δ_s x_s ⊗ b_s.
          Value surv = survival(b, l, k, st);
          Value kept = contract(b, l, "bgr,bgrpn->bgrpn",
                                ValueRange{keptDecay(b, l, k, st), state}, st);
          Value wx = contract(b, l, "bsgr,bsgr,bsgrp->bsgrp",
                              ValueRange{surv, k.delta, k.x}, st);
          Value next = gemm(b, l, "bsgrp,bsgn->bgrpn", wx, k.bm, st, kept);
          Value out = insertSeq(b, l, y, acc[1], k.start);
          return {next, out, states};
        });
    Value y = mergeDims(rewriter, loc, loop.getResult(1), 2, 2);
    Value states = mergeDims(rewriter, loc, loop.getResult(2), 2, 2);
    rewriter.replaceOp(
        op, {y, tensor::CastOp::create(rewriter, loc, op.getStates().getType(),
                                       states)
                    .getResult()});
    return success();
  }
};

struct MambaSsdScanBackwardLowering : OpRewritePattern<MambaSsdScanBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MambaSsdScanBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ScanSetup s = setUpScan(rewriter, op);
    Type st = s.st;
    Value dy5 = splitDim(rewriter, loc, op.getDy(), 2, {s.groups, s.perGroup});
    Value states5 =
        splitDim(rewriter, loc, op.getStates(), 2, {s.groups, s.perGroup});
    auto emptyLike = [&](Value v) {
      return emptyTensor(rewriter, loc, sizesOf(rewriter, loc, v), st);
    };
    // Per-position gradients: of u = δ·x, of the decay δ·A, of b and of c.
    Value guInit = emptyLike(s.x5), gaInit = emptyLike(s.delta),
          gbInit = emptyLike(s.bm), gcInit = emptyLike(s.cm);
    auto loop = forEachChunk(
        rewriter, loc, s.numChunks,
        ValueRange{s.zeroState, guInit, gaInit, gbInit, gcInit},
        /*reverse=*/true,
        [&](OpBuilder &b, Location l, Value c,
            ValueRange acc) -> SmallVector<Value> {
          Chunk k = loadChunk(b, l, s, c);
          Value gS = acc[0];                              // d state'
          Value s0 = extractChunkState(b, l, states5, c); // state
          Value gy = sliceSeq(b, l, dy5, k.start, k.len);
          Value u =
              contract(b, l, "bsgr,bsgrp->bsgrp", ValueRange{k.delta, k.x}, st);
          Value decay = decayMatrix(b, l, k, st);
          Value surv = survival(b, l, k, st);
          Value expLam = carriedDecay(b, l, k, st);
          Value expTotal = keptDecay(b, l, k, st);
          // gyu[l, s] = dy_l · u_s; ey = decay ⊙ gyu; w = ey ⊙ (c_l·b_s).
          Value gyu = gemm(b, l, "blgrp,bsgrp->blsgr", gy, u, st);
          Value ey =
              contract(b, l, "blsgr,blsgr->blsgr", ValueRange{decay, gyu}, st);
          Value w =
              contract(b, l, "blsgr,blsg->blsgr", ValueRange{ey, k.cb}, st);
          Value eg =
              contract(b, l, "blsgr,blsg->blsgr", ValueRange{decay, k.cb}, st);
          // q[s] = dstate'·b_s; du_s = Σ_l eg[l, s] dy_l + surv_s q_s.
          Value q = gemm(b, l, "bgrpn,bsgn->bsgrp", gS, k.bm, st);
          Value guOff =
              contract(b, l, "bsgr,bsgrp->bsgrp", ValueRange{surv, q}, st);
          Value gu = gemm(b, l, "blsgr,blgrp->bsgrp", eg, gy, st, guOff);
          // dc_l = Σ_{r,s} ey[l, s] b_s + Σ_{r,p} e^{lam_l} state dy_l.
          // e^{lam_l} dy_l, read by dc and by dstate.
          Value decayedGy =
              contract(b, l, "blgr,blgrp->blgrp", ValueRange{expLam, gy}, st);
          Value gcOff = gemm(b, l, "blgrp,bgrpn->blgn", decayedGy, s0, st);
          // ey summed over the heads of a group first: b and c are per group.
          Value eyGroup = contract(b, l, "blsgr->blsg", ValueRange{ey}, st);
          Value gc = gemm(b, l, "blsg,bsgn->blgn", eyGroup, k.bm, st, gcOff);
          // db_s = Σ_{r,l} ey[l, s] c_l + Σ_{r,p} surv_s dstate' u_s.
          Value survU =
              contract(b, l, "bsgr,bsgrp->bsgrp", ValueRange{surv, u}, st);
          Value gbOff = gemm(b, l, "bsgrp,bgrpn->bsgn", survU, gS, st);
          Value gb = gemm(b, l, "blsg,blgn->bsgn", eyGroup, k.cm, st, gbOff);
          // d lam_l = Σ_s w[l, s] − Σ_l' w[l', l] + e^{lam_l} dy_l·(c_l·state)
          //         − surv_l u_l·q_l;  d total = e^{total} <dstate', state>
          //         + Σ_s surv_s u_s·q_s.
          Value cs = gemm(b, l, "blgn,bgrpn->blgrp", k.cm, s0, st);
          Value rowW = contract(b, l, "blsgr->blgr", ValueRange{w}, st);
          Value colW = contract(b, l, "bslgr->blgr", ValueRange{w}, st);
          Value off = contract(b, l, "blgr,blgrp,blgrp->blgr",
                               ValueRange{expLam, gy, cs}, st);
          Value v = contract(b, l, "bsgr,bsgrp,bsgrp->bsgr",
                             ValueRange{surv, u, q}, st);
          Value gLam = einsum(
              b, l, "blgr,blgr,blgr,blgr->blgr", ValueRange{rowW, colW, off, v},
              st, [&](OpBuilder &nb, Location ll, ValueRange a, LetterIndex) {
                Scalar sc = scalar(nb, ll, st);
                return sc.sub(sc.add(sc.sub(a[0], a[1]), a[2]), a[3]);
              });
          Value keptGrad = contract(b, l, "bgr,bgrpn,bgrpn->bgr",
                                    ValueRange{expTotal, gS, s0}, st);
          Value gTotal =
              contract(b, l, "bsgr->bgr", ValueRange{v}, st, keptGrad);
          // d decay_i = d total + Σ_{l >= i} d lam_l.
          Value ga = chunkCumsumGrad(b, l, gLam, gTotal, k.len, st);
          // dstate = e^{total} dstate' + Σ_l e^{lam_l} dy_l ⊗ c_l.
          Value keptState =
              contract(b, l, "bgr,bgrpn->bgrpn", ValueRange{expTotal, gS}, st);
          Value gPrev =
              gemm(b, l, "blgrp,blgn->bgrpn", decayedGy, k.cm, st, keptState);
          return {gPrev, insertSeq(b, l, gu, acc[1], k.start),
                  insertSeq(b, l, ga, acc[2], k.start),
                  insertSeq(b, l, gb, acc[3], k.start),
                  insertSeq(b, l, gc, acc[4], k.start)};
        });
    Value gu = loop.getResult(1), ga = loop.getResult(2);
    // Back through u = δ·x and the decay δ·A, then softplus and the clamp.
    Value gx =
        einsum(rewriter, loc, "btgr,btgrp,gr,btgrp->btgrp",
               ValueRange{s.delta, gu, s.d, dy5}, st,
               [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                 Scalar sc = scalar(nb, l, st);
                 Value fromDelta = sc.mul(a[0], a[1]);
                 return sc.add(fromDelta, sc.mul(a[2], a[3]));
               });
    Value gDeltaDecay =
        contract(rewriter, loc, "gr,btgr->btgr", ValueRange{s.a, ga}, st);
    Value gDelta = contract(rewriter, loc, "btgrp,btgrp->btgr",
                            ValueRange{s.x5, gu}, st, gDeltaDecay);
    Value gA =
        contract(rewriter, loc, "btgr,btgr->gr", ValueRange{ga, s.delta}, st);
    Value gD =
        contract(rewriter, loc, "btgrp,btgrp->gr", ValueRange{dy5, s.x5}, st);
    double dtMin = s.dtMin, dtMax = s.dtMax;
    Value gDt = einsum(
        rewriter, loc, "btgr,btgr->btgr", ValueRange{gDelta, s.dtRaw}, st,
        [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
          Scalar sc = scalar(nb, l, st);
          Value sp = sc.round(sc.softplus(a[1]), elementType(op.getDt()));
          Value aboveMin = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::OGE, sp, sc.c(dtMin));
          Value belowMax = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::OLE, sp, sc.c(dtMax));
          Value inside = arith::AndIOp::create(nb, l, aboveMin, belowMax);
          return sc.where(inside, sc.mul(a[0], sc.softplusGrad(a[1])));
        });
    Value gDtBias = contract(rewriter, loc, "btgr->gr", ValueRange{gDt}, st);
    Value gALog = contract(rewriter, loc, "gr,gr->gr", ValueRange{gA, s.a}, st);
    auto out = [&](Value g, Value like, int64_t dim, int64_t count) {
      return gradientAs(rewriter, loc, g, like, dim, count);
    };
    rewriter.replaceOp(
        op, {out(gx, op.getX(), 2, 2), out(gDt, op.getDt(), 2, 2),
             out(gALog, op.getALog(), 0, 2),
             out(loop.getResult(3), op.getB(), 0, 1),
             out(loop.getResult(4), op.getC(), 0, 1), out(gD, op.getD(), 0, 2),
             out(gDtBias, op.getDtBias(), 0, 2)});
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmMambaToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MambaConv1dLowering, MambaConv1dBackwardLowering,
               SiluGateLowering, SiluGateBackwardLowering, GatedRmsNormLowering,
               GatedRmsNormBackwardLowering, MambaSsdScanLowering,
               MambaSsdScanBackwardLowering>(patterns.getContext());
}
