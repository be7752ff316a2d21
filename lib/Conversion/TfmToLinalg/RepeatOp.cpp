//===- RepeatOp.cpp - tfm.repeat to scf.for -------------------------------===//
//
// One loop over layers; each iteration slices layer i out of every stacked
// weight (a view after bufferization, no copy) and runs the layer body of
// its kind, chosen by scf.index_switch on the schedule when there are
// several. Each body exists once in the output, whatever the depth.
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

struct RepeatLowering : OpRewritePattern<RepeatOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Appends a layer body to `dest`, with its block arguments replaced by
  /// `args`, ending in scf.yield.
  static void moveBody(PatternRewriter &rewriter, Block &body, Block *dest,
                       ValueRange args) {
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.eraseOp(yield);
    rewriter.mergeBlocks(&body, dest, args);
    rewriter.setInsertionPointToEnd(dest);
    scf::YieldOp::create(rewriter, yield.getLoc(), results);
  }

  LogicalResult matchAndRewrite(RepeatOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value ub = arith::ConstantIndexOp::create(rewriter, loc, op.getNumLayers());
    Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value schedule;
    if (auto s = op.getSchedule()) {
      auto type = RankedTensorType::get({int64_t(s->size())}, rewriter.getI64Type());
      schedule = arith::ConstantOp::create(
          rewriter, loc, type, DenseElementsAttr::get(type, *s));
    }
    auto forOp = scf::ForOp::create(rewriter, loc, lb, ub, step, op.getInits());
    Block *loopBody = forOp.getBody();
    rewriter.setInsertionPointToStart(loopBody);
    SmallVector<Value> args(forOp.getRegionIterArgs());
    Value iv = forOp.getInductionVar();
    for (Value w : op.getWeights()) {
      auto type = cast<RankedTensorType>(w.getType());
      int64_t rank = type.getRank();
      SmallVector<OpFoldResult> off(rank, rewriter.getIndexAttr(0));
      off[0] = iv;
      SmallVector<OpFoldResult> sizes;
      sizes.push_back(rewriter.getIndexAttr(1));
      for (int64_t d : type.getShape().drop_front())
        sizes.push_back(rewriter.getIndexAttr(d));
      auto sliceType = RankedTensorType::get(type.getShape().drop_front(), type.getElementType());
      args.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, sliceType, w, off, sizes,
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1))));
    }
    // scf.for built without a body builder may carry an implicit yield.
    if (!loopBody->empty() && isa<scf::YieldOp>(loopBody->back()))
      rewriter.eraseOp(&loopBody->back());

    if (op.getKinds().size() == 1) {
      moveBody(rewriter, op.getKinds().front().front(), loopBody, args);
    } else {
      rewriter.setInsertionPointToEnd(loopBody);
      Value kind = tensor::ExtractOp::create(rewriter, loc, schedule, ValueRange{iv});
      kind = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), kind);
      unsigned numKinds = op.getKinds().size();
      SmallVector<int64_t> cases;
      for (unsigned k = 0; k + 1 < numKinds; ++k)
        cases.push_back(k);
      auto sw = scf::IndexSwitchOp::create(rewriter, loc, op.getResultTypes(), kind, cases,
                                           cases.size());
      for (unsigned k = 0; k < numKinds; ++k) {
        Region &region = k + 1 < numKinds ? sw.getCaseRegions()[k] : sw.getDefaultRegion();
        Block *dest = rewriter.createBlock(&region);
        moveBody(rewriter, op.getKinds()[k].front(), dest, args);
      }
      rewriter.setInsertionPointToEnd(loopBody);
      scf::YieldOp::create(rewriter, loc, sw.getResults());
    }
    rewriter.replaceOp(op, forOp.getResults());
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmRepeatToScfPatterns(RewritePatternSet &patterns) {
  patterns.add<RepeatLowering>(patterns.getContext());
}
