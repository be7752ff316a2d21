//===- LowerDynamicExpandShape.cpp - work around an upstream crash --------===//

#include "tfm/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMLOWERDYNAMICEXPANDSHAPEPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

struct ExpandShapeToReinterpretCast : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    MemRefType src = op.getSrcType(), dst = op.getResultType();
    if (!src.getLayout().isIdentity() || !dst.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "needs identity layouts");
    bool buggy = llvm::any_of(op.getReassociationIndices(), [&](auto group) {
      return llvm::count_if(group,
                            [&](int64_t d) { return dst.isDynamicDim(d); }) > 1;
    });
    if (!buggy)
      return rewriter.notifyMatchFailure(op, "upstream handles this expansion");
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    // Row-major strides of the result: suffix products of the sizes.
    SmallVector<OpFoldResult> strides(sizes.size());
    OpFoldResult stride = rewriter.getIndexAttr(1);
    for (int64_t i = sizes.size() - 1; i >= 0; --i) {
      strides[i] = stride;
      // Keep static strides static: the result type's layout demands it.
      std::optional<int64_t> cs = getConstantIntValue(stride);
      std::optional<int64_t> cd = getConstantIntValue(sizes[i]);
      if (cs && cd) {
        stride = rewriter.getIndexAttr(*cs * *cd);
        continue;
      }
      Value s = getValueOrCreateConstantIndexOp(rewriter, loc, stride);
      Value d = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[i]);
      stride = arith::MulIOp::create(rewriter, loc, s, d).getResult();
    }
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, dst, op.getSrc(), rewriter.getIndexAttr(0), sizes, strides);
    return success();
  }
};

struct TfmLowerDynamicExpandShapePass
    : mlir::tfm::impl::TfmLowerDynamicExpandShapePassBase<
          TfmLowerDynamicExpandShapePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandShapeToReinterpretCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
