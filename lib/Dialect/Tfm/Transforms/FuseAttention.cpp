//===- FuseAttention.cpp - packed projection + attention -> flash ---------===//
//
// attention(rope(norm(q)), rope(norm(k)), v) where q, k, v are head views of
// one packed projection's split becomes qkv_(qk_norm_)rope on the packed
// heads and flash_attention: the split, the separate rotations and the
// T x T scores disappear.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSEATTENTIONPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// One of q, k, v traced back to its slice of the packed projection.
struct HeadChain {
  RopeOp rope;       // may be null
  Value normed;      // the qk_norm result, or null
  ReshapeOp reshape; // [B, T, H*D] -> [B, T, H, D]
  OpResult part;     // the split result
  Value delta;       // added to the part first (LoRA), or null
};

std::optional<HeadChain> trace(Value v, bool allowRotation) {
  HeadChain c;
  if (allowRotation) {
    if (auto rope = v.getDefiningOp<RopeOp>()) {
      if (!v.hasOneUse() || rope.getInterleaved())
        return std::nullopt;
      c.rope = rope;
      v = rope.getX();
    }
    if (auto norm = v.getDefiningOp<QkNormOp>()) {
      if (!v.hasOneUse() || norm.getMode() != QkNormMode::per_head)
        return std::nullopt;
      c.normed = v;
      v = cast<OpResult>(v).getResultNumber() == 0 ? norm.getQ() : norm.getK();
    }
  }
  c.reshape = v.getDefiningOp<ReshapeOp>();
  if (!c.reshape || !v.hasOneUse())
    return std::nullopt;
  Value flat = c.reshape.getX();
  if (!flat.hasOneUse())
    return std::nullopt;
  // part + delta: a LoRA branch on the projection.
  if (auto add = flat.getDefiningOp<AddOp>()) {
    for (auto [part, delta] : {std::pair(add.getLhs(), add.getRhs()),
                               std::pair(add.getRhs(), add.getLhs())})
      if (part.getDefiningOp<SplitOp>() && part.hasOneUse() &&
          part.getType() == delta.getType()) {
        c.delta = delta;
        flat = part;
        break;
      }
    if (!c.delta)
      return std::nullopt;
  }
  if (!flat.getDefiningOp<SplitOp>())
    return std::nullopt;
  c.part = cast<OpResult>(flat);
  return c;
}

bool sameRope(RopeOp a, RopeOp b) {
  return a.getPositions() == b.getPositions() && a.getTheta() == b.getTheta() &&
         a.getRotaryDim() == b.getRotaryDim() &&
         a.getScalingAttr() == b.getScalingAttr();
}

struct FuseAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp attn,
                                PatternRewriter &rewriter) const override {
    if (!attn.getCausal())
      return rewriter.notifyMatchFailure(attn, "not causal");
    auto q = trace(attn.getQ(), true), k = trace(attn.getK(), true),
         v = trace(attn.getV(), false);
    if (!q || !k || !v)
      return rewriter.notifyMatchFailure(attn, "q, k, v not split heads");
    auto split = cast<SplitOp>(q->part.getOwner());
    auto packedType = cast<RankedTensorType>(split.getX().getType());
    if (split.getNumResults() != 3 || q->part.getResultNumber() != 0 ||
        k->part.getOwner() != split || k->part.getResultNumber() != 1 ||
        v->part.getOwner() != split || v->part.getResultNumber() != 2 ||
        int64_t(split.getDim()) != packedType.getRank() - 1 ||
        packedType.getRank() != 3)
      return rewriter.notifyMatchFailure(attn, "not one q | k | v split");
    auto qt = attn.getQ().getType(), kt = attn.getK().getType(),
         vt = attn.getV().getType();
    int64_t d = qt.getDimSize(3);
    if (kt.getDimSize(3) != d || vt.getDimSize(3) != d ||
        kt.getDimSize(2) != vt.getDimSize(2))
      return rewriter.notifyMatchFailure(attn, "head sizes differ");
    if (bool(q->rope) != bool(k->rope) ||
        (q->rope && !sameRope(q->rope, k->rope)))
      return rewriter.notifyMatchFailure(attn, "q and k rotate differently");
    QkNormOp norm;
    if (q->normed || k->normed) {
      norm = q->normed ? q->normed.getDefiningOp<QkNormOp>() : QkNormOp();
      if (!q->normed || !k->normed ||
          k->normed.getDefiningOp<QkNormOp>() != norm ||
          cast<OpResult>(q->normed).getResultNumber() != 0 || !q->rope ||
          !norm.getQRstd().use_empty() || !norm.getKRstd().use_empty())
        return rewriter.notifyMatchFailure(attn, "q/k norms not fusable");
    }
    int64_t hq = qt.getDimSize(2), hkv = kt.getDimSize(2);
    Location loc = attn.getLoc();
    auto heads = RankedTensorType::get(
        {packedType.getDimSize(0), packedType.getDimSize(1), hq + 2 * hkv, d},
        packedType.getElementType());
    rewriter.setInsertionPoint(attn);
    Value packed = split.getX();
    if (q->delta || k->delta || v->delta) {
      // The LoRA branches join the packed projection: packed + (dq | dk |
      // dv), zeros where one has none.
      SmallVector<Value> deltas;
      for (const HeadChain *c : {&*q, &*k, &*v})
        deltas.push_back(
            c->delta ? c->delta
                     : ZerosLikeOp::create(rewriter, loc, c->part).getResult());
      Value joined = ConcatOp::create(rewriter, loc, packedType, deltas,
                                      rewriter.getI64IntegerAttr(2));
      packed = AddOp::create(rewriter, loc, packed, joined);
    }
    Value qkv = ReshapeOp::create(rewriter, loc, heads, packed);
    auto i64 = [&](int64_t x) { return rewriter.getI64IntegerAttr(x); };
    if (norm) {
      auto statType = [&](int64_t h) {
        return RankedTensorType::get(
            {packedType.getDimSize(0), packedType.getDimSize(1), h},
            norm.getQRstd().getType().getElementType());
      };
      qkv = QkvQkNormRopeOp::create(
                rewriter, loc, heads, statType(hq), statType(hkv), qkv,
                norm.getQWeight(), norm.getKWeight(), q->rope.getPositions(),
                i64(hq), i64(hkv), norm.getEpsAttr(), norm.getUnitOffsetAttr(),
                q->rope.getThetaAttr(), q->rope.getRotaryDimAttr(),
                q->rope.getScalingAttr())
                .getResult();
    } else if (q->rope) {
      qkv = QkvRopeOp::create(rewriter, loc, heads, qkv, q->rope.getPositions(),
                              i64(hq), i64(hkv), q->rope.getThetaAttr(),
                              q->rope.getRotaryDimAttr(),
                              q->rope.getScalingAttr());
    }
    auto lseType = RankedTensorType::get(
        {packedType.getDimSize(0), hq, packedType.getDimSize(1)},
        rewriter.getF32Type());
    if (packedType.getElementType().isF64())
      lseType =
          RankedTensorType::get(lseType.getShape(), rewriter.getF64Type());
    auto flash = FlashAttentionOp::create(
        rewriter, loc, attn.getType(), lseType, qkv, attn.getSinks(),
        attn.getDocStart(), i64(hq), i64(hkv), attn.getScaleAttr(),
        attn.getCausalAttr(), attn.getSlidingWindowAttr(),
        attn.getSoftcapAttr());
    rewriter.replaceOp(attn, flash.getResult());
    return success();
  }
};

struct TfmFuseAttentionPass
    : mlir::tfm::impl::TfmFuseAttentionPassBase<TfmFuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
