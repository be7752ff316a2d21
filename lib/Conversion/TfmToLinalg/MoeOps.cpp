//===- MoeOps.cpp - the MoE ops to linalg, scf and tensor -----------------===//
//
// Work is proportional to the routed pairs:
//
// - the router is one parallel generic over [N, k]: each (token, slot)
//   finds its expert with k selection passes over the E scores (E and k
//   are small next to the expert GEMMs, and no sort or T x E scratch is
//   needed);
// - the route plan is a counting sort (three sequential loops over the
//   N*k pairs);
// - dispatch, combine and their gradients are gathers (parallel generics
//   reading through the plan, no scatter, no atomics);
// - grouped matmuls are one GEMM per expert on its rows of the grouped
//   order, sliced at run-time offsets; tfm-linalg-matmul-to-blas turns each
//   into a BLAS call, and an expert without rows is skipped.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

Value idx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
/// scf.for over [0, n) with step 1. Its bounds are created here, one after
/// another: as sibling call arguments their order would be the compiler's,
/// and so would the printed IR.
scf::ForOp
countedLoop(OpBuilder &b, Location loc, int64_t n, ValueRange inits,
            function_ref<void(OpBuilder &, Location, Value, ValueRange)> body) {
  Value lo = idx(b, loc, 0);
  Value hi = idx(b, loc, n);
  Value step = idx(b, loc, 1);
  return scf::ForOp::create(b, loc, lo, hi, step, inits, body);
}
Value toIndex(OpBuilder &b, Location loc, Value i64) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i64);
}
Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

/// An i64 tensor of `size` zeros (filledTensor is for floats).
Value zerosI64(OpBuilder &b, Location loc, int64_t size) {
  Type i64 = b.getI64Type();
  Value empty = emptyTensor(b, loc, {b.getIndexAttr(size)}, i64);
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
      .getResult(0);
}

/// [.., k] -> [N*k] (all dimensions collapsed).
Value flatten(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  if (t.getRank() == 1)
    return x;
  ReassociationIndices all;
  for (int64_t i = 0; i < t.getRank(); ++i)
    all.push_back(i);
  return tensor::CollapseShapeOp::create(
      b, loc, x, SmallVector<ReassociationIndices>{all});
}

/// The leading sizes of `x` (all but the last dimension).
SmallVector<OpFoldResult> leadingSizes(OpBuilder &b, Location loc, Value x) {
  SmallVector<OpFoldResult> s = sizesOf(b, loc, x);
  s.pop_back();
  return s;
}

/// A generic over `sizes` writing one tensor per `outElems` entry, with no
/// tensor inputs (the body reads through linalg.index and tensor.extract).
SmallVector<Value> buildIndexMap(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
    ArrayRef<Type> outElems,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = sizes.size();
  SmallVector<Value> outs;
  SmallVector<Type> types;
  for (Type e : outElems) {
    outs.push_back(emptyTensor(b, loc, sizes, e));
    types.push_back(outs.back().getType());
  }
  SmallVector<AffineMap> maps(outs.size(), identityMap(ctx, rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      b, loc, types, ValueRange{}, outs, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> ivs;
        for (unsigned d = 0; d < rank; ++d)
          ivs.push_back(linalg::IndexOp::create(nb, l, d));
        yieldValues(nb, l, body(nb, l, ivs));
      });
  return SmallVector<Value>(g.getResults());
}

//===----------------------------------------------------------------------===//
// Router
//===----------------------------------------------------------------------===//

/// Per-row max and sum of exp(l - max) of [N, E] logits, in `acc`.
std::pair<Value, Value> softmaxStats(OpBuilder &b, Location loc, Value logits,
                                     Type acc) {
  Value max = reduceLastDim(
      b, loc, logits, acc, -std::numeric_limits<double>::infinity(),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(nb, l, a[0], a[1]);
      });
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> rows = {tensor::getMixedSize(b, loc, logits, 0)};
  Value sum = buildReduction(
      b, loc, rows, acc, 0.0, ValueRange{logits, max},
      {identityMap(ctx, 2), dropLastDimMap(ctx, 2)}, dropLastDimMap(ctx, 2),
      {false, true}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value x = castFloat(nb, l, a[0], acc);
        Value e =
            math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, x, a[1]));
        return arith::AddFOp::create(nb, l, a[2], e);
      });
  return {max, sum};
}

/// softmax(logits[n])_e from the row statistics.
Value softmaxAt(OpBuilder &b, Location l, Value x, Value max, Value sum,
                Type acc) {
  Value ex = math::ExpOp::create(
      b, l, arith::SubFOp::create(b, l, castFloat(b, l, x, acc), max));
  return arith::DivFOp::create(b, l, ex, sum);
}

/// Reads logits[n, e] and turns it into the selection score.
struct ScoreReader {
  Value logits, max, sum; // max/sum: softmax row statistics ([N]) or null
  MoeRouting routing;
  Type acc;

  Value logit(OpBuilder &b, Location l, Value n, Value e) const {
    return castFloat(
        b, l, tensor::ExtractOp::create(b, l, logits, ValueRange{n, e}), acc);
  }
  Value score(OpBuilder &b, Location l, Value n, Value e) const {
    Value x = logit(b, l, n, e);
    switch (routing) {
    case MoeRouting::softmax_topk: {
      Value rowMax = tensor::ExtractOp::create(b, l, max, n);
      Value rowSum = tensor::ExtractOp::create(b, l, sum, n);
      return softmaxAt(b, l, x, rowMax, rowSum, acc);
    }
    case MoeRouting::sigmoid_topk: {
      Value one = constFloat(b, l, acc, 1.0);
      Value ex = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
      return arith::DivFOp::create(b, l, one,
                                   arith::AddFOp::create(b, l, one, ex));
    }
    case MoeRouting::topk_softmax:
      return x;
    }
    llvm_unreachable("unknown routing");
  }
};

ScoreReader makeScores(OpBuilder &b, Location loc, Value logits2,
                       MoeRouting routing, Type acc) {
  ScoreReader r{logits2, Value(), Value(), routing, acc};
  if (routing == MoeRouting::softmax_topk)
    std::tie(r.max, r.sum) = softmaxStats(b, loc, logits2, acc);
  return r;
}

/// The best (score, index) over indices [0, count) strictly after (prevS,
/// prevI) in the order (score descending, index ascending): one pass of a
/// deterministic top-k (ties keep the lower index, scanned first).
std::pair<Value, Value>
bestAfter(OpBuilder &b, Location l, int64_t count, Value prevS, Value prevI,
          Type acc, function_ref<Value(OpBuilder &, Location, Value)> scoreOf) {
  double inf = std::numeric_limits<double>::infinity();
  auto scan = countedLoop(
      b, l, count,
      ValueRange{constFloat(b, l, acc, -inf),
                 arith::ConstantIntOp::create(b, l, -1, 64)},
      [&](OpBuilder &sb, Location sl, Value i, ValueRange best) {
        Value s = scoreOf(sb, sl, i);
        Value ii = toI64(sb, sl, i);
        Value lower =
            arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OLT, s, prevS);
        Value sameScore =
            arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OEQ, s, prevS);
        Value laterIndex =
            arith::CmpIOp::create(sb, sl, arith::CmpIPredicate::sgt, ii, prevI);
        Value tie = arith::AndIOp::create(sb, sl, sameScore, laterIndex);
        Value after = arith::OrIOp::create(sb, sl, lower, tie);
        // Any candidate beats none; otherwise strictly better only.
        Value none =
            arith::CmpIOp::create(sb, sl, arith::CmpIPredicate::slt, best[1],
                                  arith::ConstantIntOp::create(sb, sl, 0, 64));
        Value better = arith::OrIOp::create(
            sb, sl, none,
            arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OGT, s,
                                  best[0]));
        Value take = arith::AndIOp::create(sb, sl, after, better);
        scf::YieldOp::create(
            sb, sl,
            ValueRange{arith::SelectOp::create(sb, sl, take, s, best[0]),
                       arith::SelectOp::create(sb, sl, take, ii, best[1])});
      });
  return {scan.getResult(0), scan.getResult(1)};
}

/// How a router chooses experts: the score plus the selection bias, zero
/// outside the kept expert groups (HF's masked_fill with 0.0).
struct Selection {
  const ScoreReader &scores;
  Value bias; // [E] or null
  int64_t groups = 1, groupSize = 0, keptGroups = 0;
  MoeGroupScore groupScore = MoeGroupScore::top2_sum;

  bool plain() const { return !bias && groups == 1; }
  Value biased(OpBuilder &b, Location l, Value n, Value e) const {
    Value s = scores.score(b, l, n, e);
    if (!bias)
      return s;
    return arith::AddFOp::create(b, l, s,
                                 tensor::ExtractOp::create(b, l, bias, e));
  }
  /// The selection score of expert e for a token whose kept groups are the
  /// set bits of `mask` (i64).
  Value select(OpBuilder &b, Location l, Value n, Value e, Value mask) const {
    Value s = biased(b, l, n, e);
    if (groups == 1)
      return s;
    Value e64 = toI64(b, l, e);
    Value size = arith::ConstantIntOp::create(b, l, groupSize, 64);
    Value group = arith::DivUIOp::create(b, l, e64, size);
    Value shifted = arith::ShRUIOp::create(b, l, mask, group);
    Value bit = arith::AndIOp::create(
        b, l, shifted, arith::ConstantIntOp::create(b, l, 1, 64));
    Value kept =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, bit,
                              arith::ConstantIntOp::create(b, l, 0, 64));
    return arith::SelectOp::create(b, l, kept, s,
                                   constFloat(b, l, scores.acc, 0.0));
  }
  /// Group g's score: its largest biased score, or the sum of its two
  /// largest (duplicates count twice, as torch.topk).
  Value groupScoreOf(OpBuilder &b, Location l, Value n, Value g) const {
    Type acc = scores.acc;
    double inf = std::numeric_limits<double>::infinity();
    Value first = arith::MulIOp::create(b, l, g, idx(b, l, groupSize));
    auto loop = countedLoop(
        b, l, groupSize,
        ValueRange{constFloat(b, l, acc, -inf), constFloat(b, l, acc, -inf)},
        [&](OpBuilder &lb, Location ll, Value i, ValueRange m) {
          Value s = biased(lb, ll, n, arith::AddIOp::create(lb, ll, first, i));
          Value above1 =
              arith::CmpFOp::create(lb, ll, arith::CmpFPredicate::OGT, s, m[0]);
          Value above2 =
              arith::CmpFOp::create(lb, ll, arith::CmpFPredicate::OGT, s, m[1]);
          Value m1 = arith::SelectOp::create(lb, ll, above1, s, m[0]);
          Value m2 = arith::SelectOp::create(
              lb, ll, above1, m[0],
              arith::SelectOp::create(lb, ll, above2, s, m[1]));
          scf::YieldOp::create(lb, ll, ValueRange{m1, m2});
        });
    if (groupScore == MoeGroupScore::max)
      return loop.getResult(0);
    return arith::AddFOp::create(b, l, loop.getResult(0), loop.getResult(1));
  }
  /// [N] i64: per token, a bit per kept group (the keptGroups best).
  Value keptGroupMasks(OpBuilder &b, Location loc, Value logits2) const {
    Type acc = scores.acc;
    SmallVector<OpFoldResult> sizes = {
        tensor::getMixedSize(b, loc, logits2, 0)};
    return buildIndexMap(
        b, loc, sizes, {b.getI64Type()},
        [&](OpBuilder &nb, Location l, ValueRange iv) -> SmallVector<Value> {
          Value n = iv[0];
          double inf = std::numeric_limits<double>::infinity();
          auto passes = countedLoop(
              nb, l, keptGroups,
              ValueRange{constFloat(nb, l, acc, inf),
                         arith::ConstantIntOp::create(nb, l, -1, 64),
                         arith::ConstantIntOp::create(nb, l, 0, 64)},
              [&](OpBuilder &pb, Location pl, Value, ValueRange st) {
                auto [gs, g] =
                    bestAfter(pb, pl, groups, st[0], st[1], acc,
                              [&](OpBuilder &sb, Location sl, Value gi) {
                                return groupScoreOf(sb, sl, n, gi);
                              });
                Value bit = arith::ShLIOp::create(
                    pb, pl, arith::ConstantIntOp::create(pb, pl, 1, 64), g);
                scf::YieldOp::create(
                    pb, pl,
                    ValueRange{gs, g,
                               arith::OrIOp::create(pb, pl, st[2], bit)});
              });
          return {passes.getResult(2)};
        })[0];
  }
};

struct MoeRouterLowering : OpRewritePattern<MoeRouterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeRouterOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits2 = collapseToMatrix(rewriter, loc, op.getLogits());
    auto lt = cast<RankedTensorType>(logits2.getType());
    int64_t experts = lt.getDimSize(1), k = op.getTopK();
    Type acc = op.getWeights().getType().getElementType();
    MoeRouting routing = op.getRouting();
    bool normalize = op.getNormalize();
    double eps = op.getNormalizeEps().convertToDouble();
    double scale = op.getScale().convertToDouble();
    ScoreReader scores = makeScores(rewriter, loc, logits2, routing, acc);
    Selection sel{scores, op.getBias()};
    if (op.getNumGroups() > 1) {
      sel.groups = op.getNumGroups();
      sel.groupSize = experts / sel.groups;
      sel.keptGroups = *op.getTopkGroups();
      sel.groupScore = *op.getGroupScore();
    }
    Value masks;
    if (sel.groups > 1)
      masks = sel.keptGroupMasks(rewriter, loc, logits2);
    SmallVector<OpFoldResult> sizes = {
        tensor::getMixedSize(rewriter, loc, logits2, 0),
        rewriter.getIndexAttr(k)};
    Type i64 = rewriter.getI64Type();
    double inf = std::numeric_limits<double>::infinity();
    SmallVector<Value> outs = buildIndexMap(
        rewriter, loc, sizes, {acc, i64},
        [&](OpBuilder &b, Location l, ValueRange iv) -> SmallVector<Value> {
          Value n = iv[0], slot = toI64(b, l, iv[1]);
          Value mask =
              masks ? tensor::ExtractOp::create(b, l, masks, n).getResult()
                    : Value();
          // Pass t finds the best (selection score, expert) strictly after
          // the one pass t - 1 found; slot j keeps pass j's, and all k feed
          // the sums. The weight comes from the unbiased score.
          Value zero = constFloat(b, l, acc, 0.0);
          SmallVector<Value> init = {
              constFloat(b, l, acc, inf),                 // previous selection
              arith::ConstantIntOp::create(b, l, -1, 64), // previous expert
              zero,                                       // sum of scores
              zero, // top score (topk_softmax)
              zero, // sum exp (topk_softmax)
              zero, // this slot's score
              arith::ConstantIntOp::create(b, l, 0, 64)}; // this slot's expert
          auto passes = countedLoop(
              b, l, k, init,
              [&](OpBuilder &pb, Location pl, Value t, ValueRange st) {
                auto [chosen, e] =
                    bestAfter(pb, pl, experts, st[0], st[1], acc,
                              [&](OpBuilder &sb, Location sl, Value ei) {
                                return sel.plain()
                                           ? scores.score(sb, sl, n, ei)
                                           : sel.select(sb, sl, n, ei, mask);
                              });
                Value s = sel.plain()
                              ? chosen
                              : scores.score(pb, pl, n, toIndex(pb, pl, e));
                Value top = st[3], sumExp = st[4];
                if (routing == MoeRouting::topk_softmax) {
                  Value first = arith::CmpIOp::create(
                      pb, pl, arith::CmpIPredicate::eq, t, idx(pb, pl, 0));
                  top = arith::SelectOp::create(pb, pl, first, s, top);
                  sumExp = arith::AddFOp::create(
                      pb, pl, sumExp,
                      math::ExpOp::create(
                          pb, pl, arith::SubFOp::create(pb, pl, s, top)));
                }
                Value mine = arith::CmpIOp::create(
                    pb, pl, arith::CmpIPredicate::eq, toI64(pb, pl, t), slot);
                scf::YieldOp::create(
                    pb, pl,
                    ValueRange{
                        chosen, e, arith::AddFOp::create(pb, pl, st[2], s), top,
                        sumExp, arith::SelectOp::create(pb, pl, mine, s, st[5]),
                        arith::SelectOp::create(pb, pl, mine, e, st[6])});
              });
          Value s = passes.getResult(5), e = passes.getResult(6);
          Value w = s;
          if (routing == MoeRouting::topk_softmax) {
            w = arith::DivFOp::create(
                b, l,
                math::ExpOp::create(
                    b, l, arith::SubFOp::create(b, l, s, passes.getResult(3))),
                passes.getResult(4));
          } else if (normalize) {
            Value sum = passes.getResult(2);
            if (eps != 0)
              sum =
                  arith::AddFOp::create(b, l, sum, constFloat(b, l, acc, eps));
            w = arith::DivFOp::create(b, l, s, sum);
          }
          if (scale != 1.0)
            w = arith::MulFOp::create(b, l, w, constFloat(b, l, acc, scale));
          return {w, e};
        });
    SmallVector<OpFoldResult> leading =
        leadingSizes(rewriter, loc, op.getLogits());
    rewriter.replaceOp(op,
                       {expandFromMatrix(rewriter, loc, outs[0],
                                         op.getWeights().getType(), leading),
                        expandFromMatrix(rewriter, loc, outs[1],
                                         op.getIndices().getType(), leading)});
    return success();
  }
};

struct MoeRouterBackwardLowering : OpRewritePattern<MoeRouterBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeRouterBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits2 = collapseToMatrix(rewriter, loc, op.getLogits());
    Value dw = collapseToMatrix(rewriter, loc, op.getDweights());
    Value ids = collapseToMatrix(rewriter, loc, op.getIndices());
    auto lt = cast<RankedTensorType>(logits2.getType());
    Type elem = lt.getElementType();
    Type acc = op.getDweights().getType().getElementType();
    int64_t k = cast<RankedTensorType>(ids.getType()).getDimSize(1);
    MoeRouting routing = op.getRouting();
    bool normalize = op.getNormalize();
    double eps = op.getNormalizeEps().convertToDouble();
    double scale = op.getScale().convertToDouble();
    ScoreReader scores = makeScores(rewriter, loc, logits2, routing, acc);
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, logits2);
    SmallVector<Value> outs = buildIndexMap(
        rewriter, loc, sizes, {elem},
        [&](OpBuilder &b, Location l, ValueRange iv) -> SmallVector<Value> {
          Value n = iv[0], e = toI64(b, l, iv[1]);
          Value zero = constFloat(b, l, acc, 0.0);
          // topk_softmax: weights are exp(l - top) / Σ over the k.
          Value top;
          if (routing == MoeRouting::topk_softmax)
            top = scores.logit(
                b, l, n,
                toIndex(b, l,
                        tensor::ExtractOp::create(
                            b, l, ids, ValueRange{n, idx(b, l, 0)})));
          // Pass 1: over the k slots, the sums the rule needs, and the
          // gradient reaching this expert's score (zero if not selected).
          Value no = arith::ConstantIntOp::create(b, l, 0, 1);
          auto pass1 = countedLoop(
              b, l, k, ValueRange{zero, zero, zero, zero, no},
              [&](OpBuilder &pb, Location pl, Value t, ValueRange st) {
                Value ej =
                    tensor::ExtractOp::create(pb, pl, ids, ValueRange{n, t});
                Value g = castFloat(
                    pb, pl,
                    tensor::ExtractOp::create(pb, pl, dw, ValueRange{n, t}),
                    acc);
                Value s = scores.score(pb, pl, n, toIndex(pb, pl, ej));
                if (routing == MoeRouting::topk_softmax)
                  s = math::ExpOp::create(
                      pb, pl, arith::SubFOp::create(pb, pl, s, top));
                Value mine = arith::CmpIOp::create(
                    pb, pl, arith::CmpIPredicate::eq, ej, e);
                scf::YieldOp::create(
                    pb, pl,
                    ValueRange{
                        arith::AddFOp::create(pb, pl, st[0], s), // Σ s
                        arith::AddFOp::create(
                            pb, pl, st[1],
                            arith::MulFOp::create(pb, pl, g, s)), // Σ g s
                        arith::SelectOp::create(pb, pl, mine, g, st[2]),
                        arith::SelectOp::create(pb, pl, mine, s, st[3]),
                        arith::OrIOp::create(pb, pl, mine, st[4])});
              });
          Value sumS = pass1.getResult(0), sumGS = pass1.getResult(1);
          Value g = pass1.getResult(2), selected = pass1.getResult(4);
          Value result;
          if (routing == MoeRouting::topk_softmax) {
            // w = exp(s - top) / Σ; dl = w (g - Σ g w) for selected experts.
            Value w = arith::DivFOp::create(b, l, pass1.getResult(3), sumS);
            Value gw = arith::DivFOp::create(b, l, sumGS, sumS);
            result = arith::SelectOp::create(
                b, l, selected,
                arith::MulFOp::create(b, l, w,
                                      arith::SubFOp::create(b, l, g, gw)),
                zero);
          } else {
            // ds_j = c g_j, or c (g_j - Σ g s / D) / D with normalize,
            // D = Σ s + eps.
            auto ds = [&](OpBuilder &nb, Location nl, Value gj) -> Value {
              Value d = gj;
              if (normalize) {
                Value den = sumS;
                if (eps != 0)
                  den = arith::AddFOp::create(nb, nl, den,
                                              constFloat(nb, nl, acc, eps));
                Value gw = arith::DivFOp::create(nb, nl, sumGS, den);
                d = arith::DivFOp::create(
                    nb, nl, arith::SubFOp::create(nb, nl, gj, gw), den);
              }
              if (scale != 1.0)
                d = arith::MulFOp::create(nb, nl, d,
                                          constFloat(nb, nl, acc, scale));
              return d;
            };
            Value dsE =
                arith::SelectOp::create(b, l, selected, ds(b, l, g), zero);
            Value p = scores.score(b, l, n, iv[1]);
            if (routing == MoeRouting::softmax_topk) {
              // Σ_e ds_e p_e over the selected experts.
              auto pass2 = countedLoop(
                  b, l, k, ValueRange{zero},
                  [&](OpBuilder &pb, Location pl, Value t, ValueRange st) {
                    Value ej = tensor::ExtractOp::create(pb, pl, ids,
                                                         ValueRange{n, t});
                    Value gj = castFloat(
                        pb, pl,
                        tensor::ExtractOp::create(pb, pl, dw, ValueRange{n, t}),
                        acc);
                    Value sj = scores.score(pb, pl, n, toIndex(pb, pl, ej));
                    scf::YieldOp::create(pb, pl,
                                         ValueRange{arith::AddFOp::create(
                                             pb, pl, st[0],
                                             arith::MulFOp::create(
                                                 pb, pl, ds(pb, pl, gj), sj))});
                  });
              result = arith::MulFOp::create(
                  b, l, p,
                  arith::SubFOp::create(b, l, dsE, pass2.getResult(0)));
            } else {
              Value one = constFloat(b, l, acc, 1.0);
              result = arith::MulFOp::create(
                  b, l, dsE,
                  arith::MulFOp::create(b, l, p,
                                        arith::SubFOp::create(b, l, one, p)));
            }
          }
          return {castFloat(b, l, result, elem)};
        });
    rewriter.replaceOp(
        op, expandFromMatrix(rewriter, loc, outs[0], op.getDlogits().getType(),
                             leadingSizes(rewriter, loc, op.getLogits())));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Route plan: a counting sort of the (token, slot) pairs by expert
//===----------------------------------------------------------------------===//

struct MoeRoutePlanLowering : OpRewritePattern<MoeRoutePlanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeRoutePlanOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value flat = flatten(rewriter, loc, op.getIndices());
    int64_t experts = op.getNumExperts();
    Type i64 = rewriter.getI64Type();
    Value pairs = tensor::DimOp::create(rewriter, loc, flat, 0);
    Value c0 = idx(rewriter, loc, 0), c1 = idx(rewriter, loc, 1);
    auto i64Const = [&](OpBuilder &b, Location l, int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, l, v, 64);
    };
    // counts[e] = pairs routed to e.
    Value counts = zerosI64(rewriter, loc, experts);
    counts =
        scf::ForOp::create(
            rewriter, loc, c0, pairs, c1, ValueRange{counts},
            [&](OpBuilder &b, Location l, Value f, ValueRange st) {
              Value e = toIndex(b, l, tensor::ExtractOp::create(b, l, flat, f));
              Value c = tensor::ExtractOp::create(b, l, st[0], e);
              Value next = arith::AddIOp::create(b, l, c, i64Const(b, l, 1));
              scf::YieldOp::create(b, l,
                                   ValueRange{tensor::InsertOp::create(
                                       b, l, next, st[0], ValueRange{e})});
            })
            .getResult(0);
    // offsets = exclusive prefix sum, with the total last.
    Value offsets = zerosI64(rewriter, loc, experts + 1);
    offsets =
        scf::ForOp::create(
            rewriter, loc, c0, idx(rewriter, loc, experts), c1,
            ValueRange{offsets},
            [&](OpBuilder &b, Location l, Value e, ValueRange st) {
              Value before = tensor::ExtractOp::create(b, l, st[0], e);
              Value count = tensor::ExtractOp::create(b, l, counts, e);
              Value sum = arith::AddIOp::create(b, l, before, count);
              Value next = arith::AddIOp::create(b, l, e, idx(b, l, 1));
              scf::YieldOp::create(b, l,
                                   ValueRange{tensor::InsertOp::create(
                                       b, l, sum, st[0], ValueRange{next})});
            })
            .getResult(0);
    // Place pairs in increasing f within their expert.
    Value cursor = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get({experts}, i64), offsets,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(experts)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    SmallVector<OpFoldResult> r = {OpFoldResult(pairs)};
    Value positions = emptyTensor(rewriter, loc, r, i64);
    Value sources = emptyTensor(rewriter, loc, r, i64);
    auto place = scf::ForOp::create(
        rewriter, loc, c0, pairs, c1, ValueRange{cursor, positions, sources},
        [&](OpBuilder &b, Location l, Value f, ValueRange st) {
          Value e = toIndex(b, l, tensor::ExtractOp::create(b, l, flat, f));
          Value p = tensor::ExtractOp::create(b, l, st[0], e);
          Value cur = tensor::InsertOp::create(
              b, l, arith::AddIOp::create(b, l, p, i64Const(b, l, 1)), st[0],
              ValueRange{e});
          Value pos = tensor::InsertOp::create(b, l, p, st[1], ValueRange{f});
          Value source = toI64(b, l, f);
          Value slot = toIndex(b, l, p);
          Value src =
              tensor::InsertOp::create(b, l, source, st[2], ValueRange{slot});
          scf::YieldOp::create(b, l, ValueRange{cur, pos, src});
        });
    Value pos = place.getResult(1);
    auto it = cast<RankedTensorType>(op.getIndices().getType());
    if (it.getRank() > 1) {
      ReassociationIndices all;
      for (int64_t i = 0; i < it.getRank(); ++i)
        all.push_back(i);
      // With static indices (static batch and sequence) the flat positions
      // are static too, as expand_shape requires of its source.
      if (it.hasStaticShape())
        pos = tensor::CastOp::create(
            rewriter, loc,
            RankedTensorType::get({it.getNumElements()}, it.getElementType()),
            pos);
      pos = tensor::ExpandShapeOp::create(
          rewriter, loc, it, pos, SmallVector<ReassociationIndices>{all},
          sizesOf(rewriter, loc, op.getIndices()));
    }
    Value src = place.getResult(2);
    if (src.getType() != op.getSources().getType())
      src =
          tensor::CastOp::create(rewriter, loc, op.getSources().getType(), src);
    rewriter.replaceOp(op, {offsets, pos, src});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Dispatch and combine: gathers through the plan
//===----------------------------------------------------------------------===//

int64_t slotsOf(Value positions) {
  return cast<RankedTensorType>(positions.getType()).getShape().back();
}

/// result[r, h] = value(sources[r], h) over [R, H] in `elem`.
Value gatherRows(
    OpBuilder &b, Location loc, Value sources, int64_t hidden, Type elem,
    function_ref<Value(OpBuilder &, Location, Value, Value)> value) {
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, sources, 0),
                                     b.getIndexAttr(hidden)};
  MLIRContext *ctx = b.getContext();
  return buildMap(b, loc, sizes, elem, ValueRange{sources},
                  {AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, ctx)},
                  [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                    Value row = toIndex(nb, l, a[0]);
                    return value(nb, l, row, linalg::IndexOp::create(nb, l, 1));
                  });
}

struct MoeDispatchLowering : OpRewritePattern<MoeDispatchOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeDispatchOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = collapseToMatrix(rewriter, loc, op.getX());
    int64_t k = slotsOf(op.getPositions());
    Value rows = gatherRows(
        rewriter, loc, op.getSources(), op.getType().getDimSize(1),
        op.getType().getElementType(),
        [&](OpBuilder &b, Location l, Value f, Value h) -> Value {
          Value n = arith::DivUIOp::create(b, l, f, idx(b, l, k));
          return tensor::ExtractOp::create(b, l, x, ValueRange{n, h});
        });
    if (rows.getType() != op.getType())
      rows = tensor::CastOp::create(rewriter, loc, op.getType(), rows);
    rewriter.replaceOp(op, rows);
    return success();
  }
};

struct MoeCombineLowering : OpRewritePattern<MoeCombineOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeCombineOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value rows = op.getRows();
    Value pos = collapseToMatrix(rewriter, loc, op.getPositions());
    Type elem = op.getType().getElementType(), acc = computeType(elem);
    int64_t hidden = op.getType().getShape().back();
    SmallVector<OpFoldResult> out = {
        tensor::getMixedSize(rewriter, loc, pos, 0),
        rewriter.getIndexAttr(hidden)};
    // (n, h, j): j reduces.
    AffineExpr n = rewriter.getAffineDimExpr(0),
               h = rewriter.getAffineDimExpr(1),
               j = rewriter.getAffineDimExpr(2);
    SmallVector<Value> ins = {pos};
    SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {n, j}, ctx)};
    if (Value w = op.getWeights()) {
      ins.push_back(collapseToMatrix(rewriter, loc, w));
      maps.push_back(AffineMap::get(3, 0, {n, j}, ctx));
    }
    Value sum = buildReduction(
        rewriter, loc, out, acc, 0.0, ins, maps,
        AffineMap::get(3, 0, {n, h}, ctx), {false, false, true},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value r = toIndex(b, l, a[0]);
          Value col = linalg::IndexOp::create(b, l, 1);
          Value v = castFloat(
              b, l, tensor::ExtractOp::create(b, l, rows, ValueRange{r, col}),
              acc);
          if (a.size() == 3)
            v = arith::MulFOp::create(b, l, v, castFloat(b, l, a[1], acc));
          return arith::AddFOp::create(b, l, a.back(), v);
        });
    sum = roundTensor(rewriter, loc, sum, elem);
    rewriter.replaceOp(
        op, expandFromMatrix(rewriter, loc, sum, op.getType(),
                             leadingSizes(rewriter, loc, op.getPositions())));
    return success();
  }
};

struct MoeCombineBackwardLowering : OpRewritePattern<MoeCombineBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeCombineBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value dy = collapseToMatrix(rewriter, loc, op.getDy());
    Value pos = collapseToMatrix(rewriter, loc, op.getPositions());
    Value w = collapseToMatrix(rewriter, loc, op.getWeights());
    Value rows = op.getRows();
    auto rt = cast<RankedTensorType>(rows.getType());
    Type elem = rt.getElementType(), acc = computeType(elem);
    Type wElem = op.getWeights().getType().getElementType();
    int64_t k = slotsOf(op.getPositions()), hidden = rt.getDimSize(1);
    // drows[r] = w[f] * dy[f / k], f = sources[r].
    Value drows = gatherRows(
        rewriter, loc, op.getSources(), hidden, elem,
        [&](OpBuilder &b, Location l, Value f, Value h) -> Value {
          Value n = arith::DivUIOp::create(b, l, f, idx(b, l, k));
          Value j = arith::RemUIOp::create(b, l, f, idx(b, l, k));
          Value g = castFloat(
              b, l, tensor::ExtractOp::create(b, l, dy, ValueRange{n, h}), acc);
          Value wf = castFloat(
              b, l, tensor::ExtractOp::create(b, l, w, ValueRange{n, j}), acc);
          return castFloat(b, l, arith::MulFOp::create(b, l, g, wf), elem);
        });
    if (drows.getType() != rt)
      drows = tensor::CastOp::create(rewriter, loc, rt, drows);
    // dweights[n, j] = Σ_h dy[n, h] rows[positions[n, j], h]: (n, j, h).
    AffineExpr n = rewriter.getAffineDimExpr(0),
               j = rewriter.getAffineDimExpr(1),
               h = rewriter.getAffineDimExpr(2);
    SmallVector<OpFoldResult> out = sizesOf(rewriter, loc, pos);
    Value dw = buildReduction(
        rewriter, loc, out, wElem, 0.0, ValueRange{pos, dy},
        {AffineMap::get(3, 0, {n, j}, ctx), AffineMap::get(3, 0, {n, h}, ctx)},
        AffineMap::get(3, 0, {n, j}, ctx), {false, false, true},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value r = toIndex(b, l, a[0]);
          Value col = linalg::IndexOp::create(b, l, 2);
          Value v = castFloat(
              b, l, tensor::ExtractOp::create(b, l, rows, ValueRange{r, col}),
              wElem);
          Value p =
              arith::MulFOp::create(b, l, castFloat(b, l, a[1], wElem), v);
          return arith::AddFOp::create(b, l, a[2], p);
        });
    rewriter.replaceOp(
        op, {drows,
             expandFromMatrix(rewriter, loc, dw, op.getWeights().getType(),
                              leadingSizes(rewriter, loc, op.getPositions()))});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Grouped matmuls: one GEMM per expert on its rows
//===----------------------------------------------------------------------===//

/// op(a)·op(b) of 2-D tensors into a fresh [m, n] tensor of `acc`: a linalg
/// named matmul when the inputs are already `acc` (BLAS after
/// bufferization), else a widening generic.
Value gemm(OpBuilder &b, Location loc, Value a, Value bm, bool transA,
           bool transB, ArrayRef<OpFoldResult> mn, Type acc) {
  Value init = filledTensor(b, loc, mn, acc, 0.0);
  Type elem = cast<RankedTensorType>(a.getType()).getElementType();
  Type initType = init.getType(); // TypeRange only points at it
  TypeRange types(initType);
  if (elem == acc && !(transA && transB)) {
    if (transA)
      return linalg::MatmulTransposeAOp::create(b, loc, types,
                                                ValueRange{a, bm}, init)
          .getResult(0);
    if (transB)
      return linalg::MatmulTransposeBOp::create(b, loc, types,
                                                ValueRange{a, bm}, init)
          .getResult(0);
    return linalg::MatmulOp::create(b, loc, types, ValueRange{a, bm}, init)
        .getResult(0);
  }
  MLIRContext *ctx = b.getContext();
  AffineExpr m = b.getAffineDimExpr(0), n = b.getAffineDimExpr(1),
             k = b.getAffineDimExpr(2);
  return buildReduction(
      b, loc, mn, acc, 0.0, ValueRange{a, bm},
      {AffineMap::get(3, 0, {transA ? k : m, transA ? m : k}, ctx),
       AffineMap::get(3, 0, {transB ? n : k, transB ? k : n}, ctx)},
      AffineMap::get(3, 0, {m, n}, ctx), {false, false, true},
      [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
        return mulAdd(nb, l, v[0], v[1], v[2], acc);
      });
}

/// Rows [lo, lo + count) of a 2-D tensor.
Value rowSlice(OpBuilder &b, Location loc, Value x, Value lo, Value count) {
  auto t = cast<RankedTensorType>(x.getType());
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({kDyn, t.getDimSize(1)}, t.getElementType()), x,
      ArrayRef<OpFoldResult>{lo, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{count, b.getIndexAttr(t.getDimSize(1))},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// Expert e's [d1, d2] matrix of an [E, d1, d2] tensor.
Value expertSlice(OpBuilder &b, Location loc, Value w, Value e) {
  auto t = cast<RankedTensorType>(w.getType());
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({t.getDimSize(1), t.getDimSize(2)},
                            t.getElementType()),
      w, ArrayRef<OpFoldResult>{e, b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(t.getDimSize(1)),
                             b.getIndexAttr(t.getDimSize(2))},
      ArrayRef<OpFoldResult>(SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
}

/// for e in experts: if rows(e) > 0: acc = step(e, lo, count, acc).
Value forEachExpertWithRows(
    OpBuilder &b, Location loc, Value offsets, int64_t experts, Value init,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value, Value)>
        step) {
  return countedLoop(
             b, loc, experts, ValueRange{init},
             [&](OpBuilder &fb, Location l, Value e, ValueRange st) {
               Value lo =
                   toIndex(fb, l, tensor::ExtractOp::create(fb, l, offsets, e));
               Value hi = toIndex(
                   fb, l,
                   tensor::ExtractOp::create(fb, l, offsets,
                                             ValueRange{arith::AddIOp::create(
                                                 fb, l, e, idx(fb, l, 1))}));
               Value count = arith::SubIOp::create(fb, l, hi, lo);
               Value any = arith::CmpIOp::create(
                   fb, l, arith::CmpIPredicate::sgt, count, idx(fb, l, 0));
               auto ifOp = scf::IfOp::create(fb, l, TypeRange{init.getType()},
                                             any, /*addThenBlock=*/true,
                                             /*addElseBlock=*/true);
               OpBuilder tb = ifOp.getThenBodyBuilder();
               scf::YieldOp::create(
                   tb, l, ValueRange{step(tb, l, e, lo, count, st[0])});
               OpBuilder eb = ifOp.getElseBodyBuilder();
               scf::YieldOp::create(eb, l, ValueRange{st[0]});
               scf::YieldOp::create(fb, l, ifOp.getResults());
             })
      .getResult(0);
}

/// `part` [rows, N] (in the compute type) plus expert e's row of `bias`
/// [E, N]: rounded to `elem` first, as HF adds the bias in the model dtype.
Value addExpertBias(OpBuilder &b, Location loc, Value part, Value bias, Value e,
                    Type elem) {
  auto bt = cast<RankedTensorType>(bias.getType());
  int64_t n = bt.getDimSize(1);
  Value row = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({n}, elem), bias,
      ArrayRef<OpFoldResult>{e, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(n)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  Type acc = cast<RankedTensorType>(part.getType()).getElementType();
  MLIRContext *ctx = b.getContext();
  return buildMap(
      b, loc, sizesOf(b, loc, part), acc, ValueRange{part, row},
      {identityMap(ctx, 2), AffineMap::get(2, 0, {b.getAffineDimExpr(1)}, ctx)},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value v = castFloat(nb, l, castFloat(nb, l, a[0], elem), acc);
        return arith::AddFOp::create(nb, l, v, castFloat(nb, l, a[1], acc));
      });
}

struct MoeGroupedMatmulLowering : OpRewritePattern<MoeGroupedMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeGroupedMatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getX(), w = op.getW(), offsets = op.getOffsets();
    RankedTensorType rt = op.getType();
    Type elem = rt.getElementType(), acc = computeType(elem);
    bool nt = op.getTranspose() == Transpose::nt;
    int64_t experts = cast<RankedTensorType>(w.getType()).getDimSize(0);
    int64_t n = rt.getDimSize(1);
    // Every row belongs to exactly one expert, so each is written once.
    Value init = emptyTensor(
        rewriter, loc,
        {tensor::getMixedSize(rewriter, loc, x, 0), rewriter.getIndexAttr(n)},
        elem);
    Value result = forEachExpertWithRows(
        rewriter, loc, offsets, experts, init,
        [&](OpBuilder &b, Location l, Value e, Value lo, Value count,
            Value into) -> Value {
          Value rows = rowSlice(b, l, x, lo, count);
          Value weight = expertSlice(b, l, w, e);
          Value part = gemm(b, l, rows, weight, /*transA=*/false,
                            /*transB=*/nt,
                            {OpFoldResult(count), b.getIndexAttr(n)}, acc);
          if (Value bias = op.getBias())
            part = addExpertBias(b, l, part, bias, e, elem);
          part = roundTensor(b, l, part, elem);
          return tensor::InsertSliceOp::create(
              b, l, part, into, ArrayRef<OpFoldResult>{lo, b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{count, b.getIndexAttr(n)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
        });
    if (result.getType() != rt)
      result = tensor::CastOp::create(rewriter, loc, rt, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MoeGroupedMatmulGradWeightLowering
    : OpRewritePattern<MoeGroupedMatmulGradWeightOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeGroupedMatmulGradWeightOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = op.getDy(), x = op.getX();
    RankedTensorType wt = op.getType();
    Type elem = wt.getElementType(), acc = computeType(elem);
    bool nt = op.getTranspose() == Transpose::nt;
    int64_t experts = wt.getDimSize(0), d1 = wt.getDimSize(1),
            d2 = wt.getDimSize(2);
    // Experts without rows keep these zeros.
    Value init =
        filledTensor(rewriter, loc,
                     {rewriter.getIndexAttr(experts), rewriter.getIndexAttr(d1),
                      rewriter.getIndexAttr(d2)},
                     acc, 0.0);
    Value result = forEachExpertWithRows(
        rewriter, loc, op.getOffsets(), experts, init,
        [&](OpBuilder &b, Location l, Value e, Value lo, Value count,
            Value into) -> Value {
          Value dys = rowSlice(b, l, dy, lo, count);
          Value xs = rowSlice(b, l, x, lo, count);
          // nt: dyᵀ·x [N, K]; nn: xᵀ·dy [K, N].
          Value part = gemm(b, l, nt ? dys : xs, nt ? xs : dys,
                            /*transA=*/true, /*transB=*/false,
                            {b.getIndexAttr(d1), b.getIndexAttr(d2)}, acc);
          return tensor::InsertSliceOp::create(
              b, l, part, into,
              ArrayRef<OpFoldResult>{e, b.getIndexAttr(0), b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(d1),
                                     b.getIndexAttr(d2)},
              ArrayRef<OpFoldResult>(
                  SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
        });
    rewriter.replaceOp(op, roundTensor(rewriter, loc, result, elem));
    return success();
  }
};

struct MoeGroupedBiasGradLowering : OpRewritePattern<MoeGroupedBiasGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeGroupedBiasGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType bt = op.getType();
    Type elem = bt.getElementType(), acc = computeType(elem);
    int64_t experts = bt.getDimSize(0), n = bt.getDimSize(1);
    Value init = filledTensor(
        rewriter, loc,
        {rewriter.getIndexAttr(experts), rewriter.getIndexAttr(n)}, acc, 0.0);
    Value result = forEachExpertWithRows(
        rewriter, loc, op.getOffsets(), experts, init,
        [&](OpBuilder &b, Location l, Value e, Value lo, Value count,
            Value into) -> Value {
          Value rows = rowSlice(b, l, op.getDy(), lo, count);
          AffineExpr c = b.getAffineDimExpr(0), r = b.getAffineDimExpr(1);
          Value sum = buildReduction(
              b, l, {b.getIndexAttr(n)}, acc, 0.0, ValueRange{rows},
              {AffineMap::get(2, 0, {r, c}, ctx)},
              AffineMap::get(2, 0, {c}, ctx), {false, true},
              [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                return arith::AddFOp::create(nb, nl, a[1],
                                             castFloat(nb, nl, a[0], acc));
              });
          return tensor::InsertSliceOp::create(
              b, l, sum, into, ArrayRef<OpFoldResult>{e, b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(n)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
        });
    rewriter.replaceOp(op, roundTensor(rewriter, loc, result, elem));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Clamped SwiGLU (gpt-oss): interleaved gate (even) and up (odd) columns
//===----------------------------------------------------------------------===//

/// The clamped inputs of output column j of row n and their derivatives.
struct ClampedGlu {
  Value g, u, s;      // min(gate, limit), clamp(up), sigmoid(alpha g)
  Value gateIn, upIn; // whether the clamps pass the gradient
};
ClampedGlu clampedGlu(OpBuilder &b, Location l, Value x, Value n, Value j,
                      double limit, double alpha, Type acc) {
  Value two = idx(b, l, 2);
  Value gc = arith::MulIOp::create(b, l, j, two);
  Value uc = arith::AddIOp::create(b, l, gc, idx(b, l, 1));
  Value gate = castFloat(
      b, l, tensor::ExtractOp::create(b, l, x, ValueRange{n, gc}), acc);
  Value up = castFloat(
      b, l, tensor::ExtractOp::create(b, l, x, ValueRange{n, uc}), acc);
  Value lim = constFloat(b, l, acc, limit),
        nlim = constFloat(b, l, acc, -limit);
  ClampedGlu r;
  r.g = arith::MinimumFOp::create(b, l, gate, lim);
  r.u = arith::MaximumFOp::create(
      b, l, arith::MinimumFOp::create(b, l, up, lim), nlim);
  Value one = constFloat(b, l, acc, 1.0);
  Value z = arith::MulFOp::create(b, l, r.g, constFloat(b, l, acc, alpha));
  r.s = arith::DivFOp::create(
      b, l, one,
      arith::AddFOp::create(
          b, l, one,
          math::ExpOp::create(b, l, arith::NegFOp::create(b, l, z))));
  r.gateIn = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, gate, lim);
  Value belowLimit =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, up, lim);
  Value aboveNegLimit =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, up, nlim);
  r.upIn = arith::AndIOp::create(b, l, belowLimit, aboveNegLimit);
  return r;
}

struct ClampedSwigluLowering : OpRewritePattern<ClampedSwigluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClampedSwigluOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = collapseToMatrix(rewriter, loc, op.getX());
    RankedTensorType rt = op.getType();
    Type elem = rt.getElementType(), acc = computeType(elem);
    double limit = op.getLimit().convertToDouble(),
           alpha = op.getAlpha().convertToDouble();
    SmallVector<OpFoldResult> sizes = {
        tensor::getMixedSize(rewriter, loc, x, 0),
        rewriter.getIndexAttr(rt.getShape().back())};
    Value y = buildIndexMap(
        rewriter, loc, sizes, {elem},
        [&](OpBuilder &b, Location l, ValueRange iv) -> SmallVector<Value> {
          ClampedGlu c = clampedGlu(b, l, x, iv[0], iv[1], limit, alpha, acc);
          Value glu = arith::MulFOp::create(b, l, c.g, c.s);
          Value up1 =
              arith::AddFOp::create(b, l, c.u, constFloat(b, l, acc, 1.0));
          return {castFloat(b, l, arith::MulFOp::create(b, l, up1, glu), elem)};
        })[0];
    rewriter.replaceOp(
        op, expandFromMatrix(rewriter, loc, y, rt,
                             leadingSizes(rewriter, loc, op.getX())));
    return success();
  }
};

struct ClampedSwigluBackwardLowering
    : OpRewritePattern<ClampedSwigluBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClampedSwigluBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = collapseToMatrix(rewriter, loc, op.getX());
    Value dy = collapseToMatrix(rewriter, loc, op.getDy());
    auto xt = cast<RankedTensorType>(x.getType());
    Type elem = xt.getElementType(), acc = computeType(elem);
    double limit = op.getLimit().convertToDouble(),
           alpha = op.getAlpha().convertToDouble();
    Value dx = buildIndexMap(
        rewriter, loc, sizesOf(rewriter, loc, x), {elem},
        [&](OpBuilder &b, Location l, ValueRange iv) -> SmallVector<Value> {
          Value n = iv[0], col = iv[1];
          Value j = arith::DivUIOp::create(b, l, col, idx(b, l, 2));
          Value parity = arith::RemUIOp::create(b, l, col, idx(b, l, 2));
          Value isUp = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                             parity, idx(b, l, 1));
          ClampedGlu c = clampedGlu(b, l, x, n, j, limit, alpha, acc);
          Value g = castFloat(
              b, l, tensor::ExtractOp::create(b, l, dy, ValueRange{n, j}), acc);
          Value one = constFloat(b, l, acc, 1.0),
                zero = constFloat(b, l, acc, 0.0);
          // d/dup: g·s; d/dgate: (u + 1)(s + alpha·g·s(1 - s)).
          Value glu = arith::MulFOp::create(b, l, c.g, c.s);
          Value dUp = arith::SelectOp::create(
              b, l, c.upIn, arith::MulFOp::create(b, l, g, glu), zero);
          Value ds = arith::MulFOp::create(
              b, l, c.s, arith::SubFOp::create(b, l, one, c.s));
          Value alphaC = constFloat(b, l, acc, alpha);
          Value gds = arith::MulFOp::create(b, l, c.g, ds);
          Value dglu = arith::AddFOp::create(
              b, l, c.s, arith::MulFOp::create(b, l, alphaC, gds));
          Value up1 = arith::AddFOp::create(b, l, c.u, one);
          Value dGate = arith::SelectOp::create(
              b, l, c.gateIn,
              arith::MulFOp::create(b, l, g,
                                    arith::MulFOp::create(b, l, up1, dglu)),
              zero);
          return {castFloat(
              b, l, arith::SelectOp::create(b, l, isUp, dUp, dGate), elem)};
        })[0];
    rewriter.replaceOp(
        op, expandFromMatrix(rewriter, loc, dx, op.getDx().getType(),
                             leadingSizes(rewriter, loc, op.getX())));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Load-balancing loss (small: E-sized statistics, scalar loops)
//===----------------------------------------------------------------------===//

/// Row `row` of a [2, E] tensor, and the insertion of an [E] row into one.
Value statsRow(OpBuilder &b, Location loc, Value stats, int64_t row) {
  auto t = cast<RankedTensorType>(stats.getType());
  int64_t e = t.getDimSize(1);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({e}, t.getElementType()), stats,
      ArrayRef<OpFoldResult>{b.getIndexAttr(row), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(e)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}
Value insertRow(OpBuilder &b, Location loc, Value row, Value into,
                int64_t index) {
  int64_t e = cast<RankedTensorType>(row.getType()).getDimSize(0);
  return tensor::InsertSliceOp::create(
      b, loc, row, into,
      ArrayRef<OpFoldResult>{b.getIndexAttr(index), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(e)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

struct MoeLoadStatsLowering : OpRewritePattern<MoeLoadStatsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeLoadStatsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value logits = collapseToMatrix(rewriter, loc, op.getLogits());
    Value ids = flatten(rewriter, loc, op.getIndices());
    RankedTensorType st = op.getStats().getType();
    Type acc = st.getElementType();
    int64_t experts = st.getDimSize(1);
    auto [max, sum] = softmaxStats(rewriter, loc, logits, acc);
    AffineExpr e = rewriter.getAffineDimExpr(0),
               n = rewriter.getAffineDimExpr(1);
    SmallVector<OpFoldResult> out = {rewriter.getIndexAttr(experts)};
    // Row 0: Σ_n p[n, e], iteration (e, n).
    Value mass = buildReduction(
        rewriter, loc, out, acc, 0.0, ValueRange{logits, max, sum},
        {AffineMap::get(2, 0, {n, e}, ctx), AffineMap::get(2, 0, {n}, ctx),
         AffineMap::get(2, 0, {n}, ctx)},
        AffineMap::get(2, 0, {e}, ctx), {false, true},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(b, l, a[3],
                                       softmaxAt(b, l, a[0], a[1], a[2], acc));
        });
    // Row 1: pairs routed to e, iteration (e, pair).
    Value counts = buildReduction(
        rewriter, loc, out, acc, 0.0, ValueRange{ids},
        {AffineMap::get(2, 0, {n}, ctx)}, AffineMap::get(2, 0, {e}, ctx),
        {false, true}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value mine = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, a[0],
              toI64(b, l, linalg::IndexOp::create(b, l, 0)));
          return arith::SelectOp::create(
              b, l, mine,
              arith::AddFOp::create(b, l, a[1], constFloat(b, l, acc, 1.0)),
              a[1]);
        });
    Value stats = emptyTensor(
        rewriter, loc,
        {rewriter.getIndexAttr(2), rewriter.getIndexAttr(experts)}, acc);
    stats = insertRow(rewriter, loc, mass, stats, 0);
    stats = insertRow(rewriter, loc, counts, stats, 1);
    rewriter.replaceOp(op, stats);
    return success();
  }
};

struct MoeLoadStatsBackwardLowering : OpRewritePattern<MoeLoadStatsBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeLoadStatsBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value logits = collapseToMatrix(rewriter, loc, op.getLogits());
    Type elem = cast<RankedTensorType>(logits.getType()).getElementType();
    Type acc = op.getDstats().getType().getElementType();
    Value g = statsRow(rewriter, loc, op.getDstats(), 0);
    auto [max, sum] = softmaxStats(rewriter, loc, logits, acc);
    AffineExpr n = rewriter.getAffineDimExpr(0),
               e = rewriter.getAffineDimExpr(1);
    SmallVector<AffineMap> maps = {
        AffineMap::get(2, 0, {n, e}, ctx), AffineMap::get(2, 0, {n}, ctx),
        AffineMap::get(2, 0, {n}, ctx), AffineMap::get(2, 0, {e}, ctx)};
    // dot[n] = Σ_e g_e p[n, e].
    Value dot = buildReduction(
        rewriter, loc, {tensor::getMixedSize(rewriter, loc, logits, 0)}, acc,
        0.0, ValueRange{logits, max, sum, g}, maps,
        AffineMap::get(2, 0, {n}, ctx), {false, true},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value p = softmaxAt(b, l, a[0], a[1], a[2], acc);
          return arith::AddFOp::create(b, l, a[4],
                                       arith::MulFOp::create(b, l, p, a[3]));
        });
    maps.push_back(AffineMap::get(2, 0, {n}, ctx));
    Value dl = buildMap(rewriter, loc, sizesOf(rewriter, loc, logits), elem,
                        ValueRange{logits, max, sum, g, dot}, maps,
                        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                          Value p = softmaxAt(b, l, a[0], a[1], a[2], acc);
                          Value r = arith::MulFOp::create(
                              b, l, p, arith::SubFOp::create(b, l, a[3], a[4]));
                          return castFloat(b, l, r, elem);
                        });
    rewriter.replaceOp(
        op, expandFromMatrix(rewriter, loc, dl, op.getDlogits().getType(),
                             leadingSizes(rewriter, loc, op.getLogits())));
    return success();
  }
};

/// C_e = Σ_l stats[l, 1, e] as an [E] tensor, and Σ_e C_e · P_e, Σ_e C_e.
struct AuxSums {
  Value counts, sumCP, sumC;
};
AuxSums auxSums(OpBuilder &b, Location loc, Value stats) {
  auto t = cast<RankedTensorType>(stats.getType());
  int64_t layers = t.getDimSize(0), experts = t.getDimSize(2);
  Type acc = t.getElementType();
  Value zero = constFloat(b, loc, acc, 0.0);
  Value counts = emptyTensor(b, loc, {b.getIndexAttr(experts)}, acc);
  auto loop = countedLoop(
      b, loc, experts, ValueRange{counts, zero, zero},
      [&](OpBuilder &eb, Location l, Value e, ValueRange st) {
        auto perLayer = countedLoop(
            eb, l, layers, ValueRange{zero, zero},
            [&](OpBuilder &lb, Location ll, Value layer, ValueRange cp) {
              Value p = tensor::ExtractOp::create(
                  lb, ll, stats, ValueRange{layer, idx(lb, ll, 0), e});
              Value c = tensor::ExtractOp::create(
                  lb, ll, stats, ValueRange{layer, idx(lb, ll, 1), e});
              scf::YieldOp::create(
                  lb, ll,
                  ValueRange{arith::AddFOp::create(lb, ll, cp[0], c),
                             arith::AddFOp::create(lb, ll, cp[1], p)});
            });
        Value c = perLayer.getResult(0), p = perLayer.getResult(1);
        scf::YieldOp::create(
            eb, l,
            ValueRange{tensor::InsertOp::create(eb, l, c, st[0], ValueRange{e}),
                       arith::AddFOp::create(
                           eb, l, st[1], arith::MulFOp::create(eb, l, c, p)),
                       arith::AddFOp::create(eb, l, st[2], c)});
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// R = Σ C / k, the routed rows of all layers.
Value routedRows(OpBuilder &b, Location loc, Value sumC, int64_t topK) {
  return arith::DivFOp::create(
      b, loc, sumC, constFloat(b, loc, sumC.getType(), double(topK)));
}

struct MoeAuxLossLowering : OpRewritePattern<MoeAuxLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeAuxLossOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto t = cast<RankedTensorType>(op.getStats().getType());
    Type acc = t.getElementType();
    AuxSums sums = auxSums(rewriter, loc, op.getStats());
    Value r = routedRows(rewriter, loc, sums.sumC, op.getTopK());
    // E · Σ (C/R)(P/R)
    Value numExperts = constFloat(rewriter, loc, acc, double(t.getDimSize(2)));
    Value r2 = arith::MulFOp::create(rewriter, loc, r, r);
    Value loss = arith::MulFOp::create(
        rewriter, loc, numExperts,
        arith::DivFOp::create(rewriter, loc, sums.sumCP, r2));
    rewriter.replaceOp(
        op, tensor::FromElementsOp::create(
                rewriter, loc, op.getLoss().getType(), ValueRange{loss}));
    return success();
  }
};

struct MoeAuxLossBackwardLowering : OpRewritePattern<MoeAuxLossBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoeAuxLossBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto t = cast<RankedTensorType>(op.getStats().getType());
    Type acc = t.getElementType();
    AuxSums sums = auxSums(rewriter, loc, op.getStats());
    Value r = routedRows(rewriter, loc, sums.sumC, op.getTopK());
    Value dloss = castFloat(
        rewriter, loc,
        tensor::ExtractOp::create(rewriter, loc, op.getDloss(), ValueRange{}),
        acc);
    // dloss · E / R², times C_e on row 0.
    Value numExperts = constFloat(rewriter, loc, acc, double(t.getDimSize(2)));
    Value scaled = arith::MulFOp::create(rewriter, loc, dloss, numExperts);
    Value r2 = arith::MulFOp::create(rewriter, loc, r, r);
    Value scale = arith::DivFOp::create(rewriter, loc, scaled, r2);
    AffineExpr e = rewriter.getAffineDimExpr(2);
    Value ds =
        buildMap(rewriter, loc, sizesOf(rewriter, loc, op.getStats()), acc,
                 ValueRange{sums.counts}, {AffineMap::get(3, 0, {e}, ctx)},
                 [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                   Value row = linalg::IndexOp::create(b, l, 1);
                   Value row0 = arith::CmpIOp::create(
                       b, l, arith::CmpIPredicate::eq, row, idx(b, l, 0));
                   Value grad = arith::MulFOp::create(b, l, a[0], scale);
                   return arith::SelectOp::create(b, l, row0, grad,
                                                  constFloat(b, l, acc, 0.0));
                 });
    rewriter.replaceOp(op, ds);
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmMoeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MoeRouterLowering, MoeRouterBackwardLowering,
               MoeRoutePlanLowering, MoeDispatchLowering, MoeCombineLowering,
               MoeCombineBackwardLowering, MoeGroupedMatmulLowering,
               MoeGroupedMatmulGradWeightLowering, MoeLoadStatsLowering,
               MoeLoadStatsBackwardLowering, MoeAuxLossLowering,
               MoeAuxLossBackwardLowering, MoeGroupedBiasGradLowering,
               ClampedSwigluLowering, ClampedSwigluBackwardLowering>(
      patterns.getContext());
}
