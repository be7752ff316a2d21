//===- LossOps.cpp - causal-LM losses to linalg ---------------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

/// Row log-sum-exp of logits [B, T, V] in `st`: returns {max, lse}.
std::pair<Value, Value> rowLogSumExp(OpBuilder &b, Location loc, Value logits,
                                     Type st) {
  MLIRContext *ctx = b.getContext();
  double negInf = -std::numeric_limits<double>::infinity();
  Value max =
      reduceLastDim(b, loc, logits, st, negInf,
                    [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                      return arith::MaximumFOp::create(nb, l, a[0], a[1]);
                    });
  SmallVector<OpFoldResult> rows = sizesOf(b, loc, max);
  Value acc = filledTensor(b, loc, rows, st, 0.0);
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{acc.getType()}, ValueRange{logits, max},
          ValueRange{acc},
          SmallVector<AffineMap>{identityMap(ctx, 3), dropLastDimMap(ctx, 3),
                                 dropLastDimMap(ctx, 3)},
          SmallVector<utils::IteratorType>{par, par, red},
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value x = castFloat(nb, l, a[0], st);
            Value e = math::ExpOp::create(
                nb, l, arith::SubFOp::create(nb, l, x, a[1]));
            yieldValue(nb, l, arith::AddFOp::create(nb, l, e, a[2]));
          })
          .getResult(0);
  Value lse = buildMap(b, loc, rows, st, ValueRange{max, sum}, {},
                       [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         return arith::AddFOp::create(
                             nb, l, a[0], math::LogOp::create(nb, l, a[1]));
                       });
  return {max, lse};
}

/// Inside a generic over (b, t, ...): whether position t has a counted
/// target (t + 1 < T and labels[b, t + 1] in [0, vocab)), and that target
/// as an index (0 when not counted, so reads stay in bounds). ignore_index
/// and any other out-of-range label do not count; tfm-run rejects the
/// latter before running.
std::pair<Value, Value> targetAt(OpBuilder &nb, Location l, Value labels,
                                 int64_t ignoreIndex, int64_t vocab,
                                 Value tOffset = {}) {
  Type lt = cast<RankedTensorType>(labels.getType()).getElementType();
  Value bi = linalg::IndexOp::create(nb, l, 0),
        ti = linalg::IndexOp::create(nb, l, 1);
  if (tOffset) // a chunk of positions starting at tOffset
    ti = arith::AddIOp::create(nb, l, ti, tOffset);
  Value tNext = arith::AddIOp::create(nb, l, ti,
                                      arith::ConstantIndexOp::create(nb, l, 1));
  Value tLen = tensor::DimOp::create(nb, l, labels, 1);
  Value inRange =
      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, tNext, tLen);
  Value tRead = arith::SelectOp::create(nb, l, inRange, tNext, ti);
  Value target =
      tensor::ExtractOp::create(nb, l, labels, ValueRange{bi, tRead});
  Value ignore =
      arith::ConstantOp::create(nb, l, lt, nb.getIntegerAttr(lt, ignoreIndex));
  Value counted = arith::AndIOp::create(
      nb, l, inRange,
      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne, target, ignore));
  Value zero = arith::ConstantOp::create(nb, l, lt, nb.getIntegerAttr(lt, 0));
  Value v = arith::ConstantOp::create(nb, l, lt, nb.getIntegerAttr(lt, vocab));
  Value nonNegative =
      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, target, zero);
  Value belowVocab =
      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, target, v);
  Value inVocab = arith::AndIOp::create(nb, l, nonNegative, belowVocab);
  counted = arith::AndIOp::create(nb, l, counted, inVocab);
  Value safe = arith::SelectOp::create(nb, l, counted, target, zero);
  return {counted, arith::IndexCastOp::create(nb, l, nb.getIndexType(), safe)};
}

/// Over the positions of `logits` [B, t, V] (starting at `tOffset` in the
/// sequence of `labels`): the sum of counted NLLs, their count (scalars in
/// `st`) and the row log-sum-exp [B, t].
struct LossTotals {
  Value sum, count, lse;
};

LossTotals lossTotals(OpBuilder &b, Location loc, Value logits, Value labels,
                      int64_t ignoreIndex, Type st, Value tOffset = {}) {
  MLIRContext *ctx = b.getContext();
  int64_t vocab = cast<RankedTensorType>(logits.getType()).getDimSize(2);
  auto [max, lse] = rowLogSumExp(b, loc, logits, st);
  (void)max;
  auto scalarType = RankedTensorType::get({}, st);
  Value zeroSum = filledTensor(b, loc, {}, st, 0.0);
  auto red = utils::IteratorType::reduction;
  AffineMap scalarMap = AffineMap::get(2, 0, ctx);
  auto totals = linalg::GenericOp::create(
      b, loc, TypeRange{scalarType, scalarType}, ValueRange{lse},
      ValueRange{zeroSum, zeroSum},
      SmallVector<AffineMap>{identityMap(ctx, 2), scalarMap, scalarMap},
      SmallVector<utils::IteratorType>{red, red},
      [&](OpBuilder &nb, Location l, ValueRange a) {
        auto [counted, vi] =
            targetAt(nb, l, labels, ignoreIndex, vocab, tOffset);
        Value bi = linalg::IndexOp::create(nb, l, 0),
              ti = linalg::IndexOp::create(nb, l, 1);
        Value logit = castFloat(
            nb, l,
            tensor::ExtractOp::create(nb, l, logits, ValueRange{bi, ti, vi}),
            st);
        Value nll = arith::SubFOp::create(nb, l, a[0], logit);
        Value zero = constFloat(nb, l, st, 0.0);
        Value sum = arith::AddFOp::create(
            nb, l, a[1], arith::SelectOp::create(nb, l, counted, nll, zero));
        Value cnt = arith::AddFOp::create(
            nb, l, a[2],
            arith::SelectOp::create(nb, l, counted, constFloat(nb, l, st, 1.0),
                                    zero));
        yieldValues(nb, l, ValueRange{sum, cnt});
      });
  return {tensor::ExtractOp::create(b, loc, totals.getResult(0), ValueRange{}),
          tensor::ExtractOp::create(b, loc, totals.getResult(1), ValueRange{}),
          lse};
}

/// HF ForCausalLMLoss: position t predicts labels[b, t + 1]; ignore_index
/// targets do not count; one mean over the counted tokens.
Value causalLmLoss(OpBuilder &b, Location loc, Value logits, Value labels,
                   int64_t ignoreIndex, Type st) {
  LossTotals t = lossTotals(b, loc, logits, labels, ignoreIndex, st);
  Value mean = arith::DivFOp::create(b, loc, t.sum, t.count);
  return tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, st),
                                        ValueRange{mean});
}

struct CrossEntropyLowering : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Type st = op.getLoss().getType().getElementType();
    rewriter.replaceOp(op,
                       causalLmLoss(rewriter, op.getLoc(), op.getLogits(),
                                    op.getLabels(), op.getIgnoreIndex(), st));
    return success();
  }
};

/// Sequence positions per chunk of the fused LM head + loss.
constexpr int64_t kLossChunk = 64;

/// The logits of one chunk, hTile [B, t, H] · weightᵀ -> [B, t, V] (a
/// tfm.matmul the same conversion lowers).
Value chunkLogits(OpBuilder &b, Location l, Value hTile, Value weight) {
  auto ht = cast<RankedTensorType>(hTile.getType());
  auto wt = cast<RankedTensorType>(weight.getType());
  auto type = RankedTensorType::get(
      {ht.getDimSize(0), ShapedType::kDynamic, wt.getDimSize(0)},
      ht.getElementType());
  return MatmulOp::create(b, l, type, hTile, weight, Value(),
                          TransposeAttr::get(b.getContext(), Transpose::nt));
}

/// The scale and then the softcap of the logits, as the unfused ops.
Value lmHeadEpilogue(OpBuilder &b, Location l, Value logits, FloatAttr scale,
                     FloatAttr softcap) {
  if (scale)
    logits = ScaleOp::create(b, l, logits, scale);
  if (softcap)
    logits = SoftcapOp::create(b, l, logits, softcap);
  return logits;
}

/// The number of counted targets of `labels` as a 0-d tensor of `st`; `rows`
/// is any [B, T] tensor (it sets the iteration space).
Value countedTargets(OpBuilder &b, Location loc, Value rows, Value labels,
                     int64_t ignoreIndex, int64_t vocab, Type st) {
  MLIRContext *ctx = b.getContext();
  return buildReduction(
      b, loc, {}, st, 0.0, ValueRange{rows}, {identityMap(ctx, 2)},
      AffineMap::get(2, 0, ctx), {true, true},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value counted = targetAt(nb, l, labels, ignoreIndex, vocab).first;
        Value yes = constFloat(nb, l, st, 1.0);
        Value no = constFloat(nb, l, st, 0.0);
        Value one = arith::SelectOp::create(nb, l, counted, yes, no);
        return arith::AddFOp::create(nb, l, a[1], one);
      });
}

/// dloss / count (0-d tensors): the mean loss's gradient per counted token.
Value perTokenScale(OpBuilder &b, Location loc, Value dloss, Value count) {
  Value d = tensor::ExtractOp::create(b, loc, dloss, ValueRange{});
  Value tokens = tensor::ExtractOp::create(b, loc, count, ValueRange{});
  return arith::DivFOp::create(b, loc, d, tokens);
}

/// dlogits = scale · (exp(logits − lse) − onehot(target)) at counted
/// positions, 0 elsewhere, in `elem`; logits [B, t, V] are the positions
/// from `tOffset` of `labels`, `scale` an f32/f64 scalar (dloss / count).
Value crossEntropyGrad(OpBuilder &b, Location loc, Value logits, Value lse,
                       Value labels, int64_t ignoreIndex, Value scale,
                       Type elem, Value tOffset = {}) {
  MLIRContext *ctx = b.getContext();
  Type st = scale.getType();
  int64_t vocab = cast<RankedTensorType>(logits.getType()).getDimSize(2);
  return buildMap(
      b, loc, sizesOf(b, loc, logits), elem, ValueRange{logits, lse},
      {identityMap(ctx, 3), dropLastDimMap(ctx, 3)},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto [counted, target] =
            targetAt(nb, l, labels, ignoreIndex, vocab, tOffset);
        Value vi = linalg::IndexOp::create(nb, l, 2);
        Value p = math::ExpOp::create(
            nb, l,
            arith::SubFOp::create(nb, l, castFloat(nb, l, a[0], st), a[1]));
        Value isTarget =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, vi, target);
        Value yes = constFloat(nb, l, st, 1.0);
        Value no = constFloat(nb, l, st, 0.0);
        Value g = arith::SubFOp::create(
            nb, l, p, arith::SelectOp::create(nb, l, isTarget, yes, no));
        g = arith::MulFOp::create(nb, l, g, scale);
        g = arith::SelectOp::create(nb, l, counted, g,
                                    constFloat(nb, l, st, 0.0));
        return castFloat(nb, l, g, elem);
      });
}

/// Chunks over the sequence: each chunk's logits [B, chunk, V] are computed
/// (tfm.matmul, tfm.softcap, lowered in the same rewrite), reduced to NLL
/// sums, counts and lse, and dropped; the [B*T, V] logits never exist.
struct FusedLmHeadLossLowering : OpRewritePattern<FusedLmHeadLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedLmHeadLossOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value h = op.getHidden(), labels = op.getLabels();
    Type st = op.getLoss().getType().getElementType();
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value chunk = arith::ConstantIndexOp::create(rewriter, loc, kLossChunk);
    Value tLen = tensor::DimOp::create(rewriter, loc, h, 1);
    OpFoldResult batch = tensor::getMixedSize(rewriter, loc, h, 0);
    Value lseInit = emptyTensor(rewriter, loc, {batch, tLen}, st);
    Value zero = constFloat(rewriter, loc, st, 0.0);
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, tLen, chunk, ValueRange{zero, zero, lseInit},
        [&](OpBuilder &b, Location l, Value t0, ValueRange acc) {
          Value rows = arith::MinSIOp::create(
              b, l, chunk, arith::SubIOp::create(b, l, tLen, t0));
          Value hTile = sliceAlong(b, l, h, 1, t0, rows);
          Value logits = chunkLogits(b, l, hTile, op.getWeight());
          logits = lmHeadEpilogue(b, l, logits, op.getLogitScaleAttr(),
                                  op.getSoftcapAttr());
          LossTotals t =
              lossTotals(b, l, logits, labels, op.getIgnoreIndex(), st, t0);
          Value sum = arith::AddFOp::create(b, l, acc[0], t.sum);
          Value count = arith::AddFOp::create(b, l, acc[1], t.count);
          Value lse = insertAlong(b, l, t.lse, acc[2], 1, t0);
          scf::YieldOp::create(b, l, ValueRange{sum, count, lse});
        });
    Value mean = arith::DivFOp::create(rewriter, loc, loop.getResult(0),
                                       loop.getResult(1));
    Value loss = tensor::FromElementsOp::create(
        rewriter, loc, op.getLoss().getType(), ValueRange{mean});
    rewriter.replaceOp(op, {loss, loop.getResult(2)});
    return success();
  }
};

/// dlogits = dloss / count · (softmax − onehot(target)) at counted positions.
struct CrossEntropyBackwardLowering : OpRewritePattern<CrossEntropyBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = op.getLogits(), labels = op.getLabels();
    int64_t vocab = op.getLogits().getType().getDimSize(2);
    Type st = op.getDloss().getType().getElementType();
    auto [max, lse] = rowLogSumExp(rewriter, loc, logits, st);
    (void)max;
    Value count = countedTargets(rewriter, loc, lse, labels,
                                 op.getIgnoreIndex(), vocab, st);
    Value scale = perTokenScale(rewriter, loc, op.getDloss(), count);
    rewriter.replaceOp(op, crossEntropyGrad(rewriter, loc, logits, lse, labels,
                                            op.getIgnoreIndex(), scale,
                                            op.getType().getElementType()));
    return success();
  }
};

/// Chunks over the sequence as the forward: each chunk's logits are
/// recomputed, turned into dlogits with the saved lse, and consumed by the
/// chunk's dhidden GEMM and the dweight GEMM, whose sum over chunks is kept
/// in f32 (one rounding to the weight's type at the end, as one GEMM would).
struct FusedLmHeadLossBackwardLowering
    : OpRewritePattern<FusedLmHeadLossBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedLmHeadLossBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value h = op.getHidden(), w = op.getWeight(), labels = op.getLabels();
    auto wt = cast<RankedTensorType>(w.getType());
    Type elem = wt.getElementType();
    Type st = op.getDloss().getType().getElementType();
    Type acc = computeType(elem);
    Value count = countedTargets(rewriter, loc, op.getLse(), labels,
                                 op.getIgnoreIndex(), wt.getDimSize(0), st);
    Value scale = perTokenScale(rewriter, loc, op.getDloss(), count);
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value chunk = arith::ConstantIndexOp::create(rewriter, loc, kLossChunk);
    Value tLen = tensor::DimOp::create(rewriter, loc, h, 1);
    Value dhInit = emptyTensor(rewriter, loc, sizesOf(rewriter, loc, h), elem);
    // A dweight nobody reads (a frozen head) gets no GEMM and no buffer.
    bool wantDw = !op.getDweight().use_empty();
    SmallVector<Value> inits{dhInit};
    if (wantDw)
      inits.push_back(
          filledTensor(rewriter, loc, sizesOf(rewriter, loc, w), acc, 0.0));
    FloatAttr cap = op.getSoftcapAttr(), logitScale = op.getLogitScaleAttr();
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, tLen, chunk, inits,
        [&](OpBuilder &b, Location l, Value t0, ValueRange accs) {
          Value rows = arith::MinSIOp::create(
              b, l, chunk, arith::SubIOp::create(b, l, tLen, t0));
          Value hTile = sliceAlong(b, l, h, 1, t0, rows);
          Value logits = chunkLogits(b, l, hTile, w);
          Value scaled = lmHeadEpilogue(b, l, logits, logitScale, FloatAttr());
          Value capped = lmHeadEpilogue(b, l, scaled, FloatAttr(), cap);
          Value dl = crossEntropyGrad(
              b, l, capped, sliceAlong(b, l, op.getLse(), 1, t0, rows), labels,
              op.getIgnoreIndex(), scale, elem, t0);
          if (cap)
            dl = SoftcapBackwardOp::create(b, l, dl, scaled, cap);
          if (logitScale)
            dl = ScaleOp::create(b, l, dl, logitScale);
          Value dhTile = MatmulOp::create(
              b, l, hTile.getType(), dl, w, Value(),
              TransposeAttr::get(b.getContext(), Transpose::nn));
          Value dh = tensor::InsertSliceOp::create(
              b, l, dhTile, accs[0],
              SmallVector<OpFoldResult>{b.getIndexAttr(0), t0,
                                        b.getIndexAttr(0)},
              sizesOf(b, l, dhTile),
              SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
          if (!wantDw) {
            scf::YieldOp::create(b, l, ValueRange{dh});
            return;
          }
          Value dw;
          if (acc == elem) {
            // f32: the chunk's dlᵀ·h accumulates into dweight in place (one
            // GEMM with C = the running sum: BLAS beta = 1), no [V, H]
            // temporary per chunk.
            Value dlRows = collapseToMatrix(b, l, dl);
            Value hRows = collapseToMatrix(b, l, hTile);
            dw = linalg::MatmulTransposeAOp::create(
                     b, l, TypeRange{accs[1].getType()},
                     ValueRange{dlRows, hRows}, ValueRange{accs[1]})
                     .getResult(0);
          } else {
            // Rounded per chunk like the unfused weight gradient's GEMM,
            // summed in f32.
            Value dwTile = MatmulGradWeightOp::create(
                b, l, wt, dl, hTile,
                TransposeAttr::get(b.getContext(), Transpose::nt));
            dw = buildMap(b, l, sizesOf(b, l, accs[1]), acc,
                          ValueRange{accs[1], dwTile}, {},
                          [&](OpBuilder &nb, Location bl, ValueRange a) {
                            return arith::AddFOp::create(
                                nb, bl, a[0], castFloat(nb, bl, a[1], acc));
                          });
          }
          scf::YieldOp::create(b, l, ValueRange{dh, dw});
        });
    Value dweight =
        wantDw ? roundTensor(rewriter, loc, loop.getResult(1), elem)
               : emptyTensor(rewriter, loc, sizesOf(rewriter, loc, w), elem);
    rewriter.replaceOp(op, {loop.getResult(0), dweight});
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmLossToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<CrossEntropyLowering, FusedLmHeadLossLowering,
               CrossEntropyBackwardLowering, FusedLmHeadLossBackwardLowering>(
      patterns.getContext());
}
