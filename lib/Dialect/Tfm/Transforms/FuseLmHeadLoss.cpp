//===- FuseLmHeadLoss.cpp - LM head + cross-entropy -> one chunked op -----===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSELMHEADLOSSPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// cross_entropy(softcap?(scale?(matmul(h, W)))) with every intermediate
/// read only by the next -> fused_lm_head_loss(h, W).
struct FuseLmHeadLoss : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp ce,
                                PatternRewriter &rewriter) const override {
    // Every value from the matmul to the loss is read only by the next op.
    Value v = ce.getLogits();
    if (!v.hasOneUse())
      return rewriter.notifyMatchFailure(ce, "the logits are read elsewhere");
    FloatAttr softcap, scale;
    if (auto cap = v.getDefiningOp<SoftcapOp>()) {
      softcap = cap.getCapAttr();
      v = cap.getX();
    }
    if (auto s = v.getDefiningOp<ScaleOp>(); s && !s.getRoundFactor()) {
      if (!v.hasOneUse())
        return failure();
      scale = s.getFactorAttr();
      v = s.getX();
    }
    auto mm = v.getDefiningOp<MatmulOp>();
    if (!mm || !v.hasOneUse() || mm.getBias() ||
        mm.getTranspose() != Transpose::nt ||
        cast<RankedTensorType>(mm.getX().getType()).getRank() != 3)
      return rewriter.notifyMatchFailure(ce, "no plain lm-head matmul");
    auto h = cast<RankedTensorType>(mm.getX().getType());
    auto lseType =
        RankedTensorType::get({h.getDimSize(0), h.getDimSize(1)},
                              ce.getLoss().getType().getElementType());
    auto fused = FusedLmHeadLossOp::create(
        rewriter, ce.getLoc(), ce.getLoss().getType(), lseType, mm.getX(),
        mm.getW(), ce.getLabels(), ce.getIgnoreIndexAttr(), softcap, scale);
    rewriter.replaceOp(ce, fused.getLoss());
    return success();
  }
};

struct TfmFuseLmHeadLossPass
    : mlir::tfm::impl::TfmFuseLmHeadLossPassBase<TfmFuseLmHeadLossPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseLmHeadLoss>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
