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

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

struct RepeatLowering : OpRewritePattern<RepeatOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Appends a layer body to `dest`, with its block arguments replaced by
  /// `args`; returns the values its tfm.yield yielded (the yield is erased).
  static SmallVector<Value> inlineBody(PatternRewriter &rewriter, Block &body,
                                       Block *dest, ValueRange args) {
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> results;
    for (Value v : yield.getValues()) {
      // A body may yield its own argument (a saved layer input); merging
      // replaces block arguments, so map those here.
      auto arg = dyn_cast<BlockArgument>(v);
      results.push_back(
          arg && arg.getOwner() == &body ? args[arg.getArgNumber()] : v);
    }
    rewriter.eraseOp(yield);
    rewriter.mergeBlocks(&body, dest, args);
    return results;
  }

  LogicalResult matchAndRewrite(RepeatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t numLayers = op.getNumLayers();
    Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value ub = arith::ConstantIndexOp::create(rewriter, loc, numLayers);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value zero = lb;
    Value schedule;
    if (auto s = op.getSchedule()) {
      auto type =
          RankedTensorType::get({int64_t(s->size())}, rewriter.getI64Type());
      schedule = arith::ConstantOp::create(rewriter, loc, type,
                                           DenseElementsAttr::get(type, *s));
    }
    // Stacked outputs start as placeholders; dynamic sizes are only known
    // from the first layer's values (see below). alloc_tensor, not
    // tensor.empty: CSE would merge identical empties into one buffer that
    // two stacked outputs then both write.
    SmallVector<Value> iterInits(op.getInits());
    for (Value r : op.getStackedResults()) {
      auto t = cast<RankedTensorType>(r.getType());
      SmallVector<Value> dyn(t.getNumDynamicDims(), zero);
      iterInits.push_back(
          bufferization::AllocTensorOp::create(rewriter, loc, t, dyn));
    }
    auto forOp = scf::ForOp::create(rewriter, loc, lb, ub, step, iterInits);
    Block *loopBody = forOp.getBody();
    if (!loopBody->empty() && isa<scf::YieldOp>(loopBody->back()))
      rewriter.eraseOp(&loopBody->back());
    rewriter.setInsertionPointToStart(loopBody);
    size_t numCarried = op.getInits().size();
    ValueRange iterArgs = forOp.getRegionIterArgs();
    Value iv = forOp.getInductionVar();
    Value layer = iv;
    if (op.getReverse())
      layer = arith::SubIOp::create(
          rewriter, loc,
          arith::ConstantIndexOp::create(rewriter, loc, numLayers - 1), iv);
    SmallVector<Value> args(iterArgs.take_front(numCarried));
    for (Value w : op.getWeights()) {
      auto type = cast<RankedTensorType>(w.getType());
      int64_t rank = type.getRank();
      SmallVector<OpFoldResult> off(rank, rewriter.getIndexAttr(0));
      off[0] = layer;
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, w);
      sizes[0] = rewriter.getIndexAttr(1);
      auto sliceType = RankedTensorType::get(type.getShape().drop_front(),
                                             type.getElementType());
      args.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, sliceType, w, off, sizes,
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1))));
    }

    SmallVector<Value> layerResults;
    if (op.getKinds().size() == 1) {
      layerResults =
          inlineBody(rewriter, op.getKinds().front().front(), loopBody, args);
    } else {
      rewriter.setInsertionPointToEnd(loopBody);
      Value kind =
          tensor::ExtractOp::create(rewriter, loc, schedule, ValueRange{layer});
      kind = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                        kind);
      unsigned numKinds = op.getKinds().size();
      SmallVector<int64_t> cases;
      for (unsigned k = 0; k + 1 < numKinds; ++k)
        cases.push_back(k);
      TypeRange yieldTypes =
          op.getKinds().front().front().getTerminator()->getOperandTypes();
      auto sw = scf::IndexSwitchOp::create(rewriter, loc, yieldTypes, kind,
                                           cases, cases.size());
      for (unsigned k = 0; k < numKinds; ++k) {
        Region &region =
            k + 1 < numKinds ? sw.getCaseRegions()[k] : sw.getDefaultRegion();
        Block *dest = rewriter.createBlock(&region);
        SmallVector<Value> results =
            inlineBody(rewriter, op.getKinds()[k].front(), dest, args);
        rewriter.setInsertionPointToEnd(dest);
        scf::YieldOp::create(rewriter, loc, results);
      }
      layerResults.assign(sw.getResults().begin(), sw.getResults().end());
    }

    // Insert each per-layer output at its layer. A stacked output with
    // dynamic sizes is allocated in the first iteration, from the sizes of
    // the first layer's value (batch and sequence do not change across
    // layers).
    rewriter.setInsertionPointToEnd(loopBody);
    SmallVector<Value> next(layerResults.begin(),
                            layerResults.begin() + numCarried);
    for (size_t i = 0; i + numCarried < layerResults.size(); ++i) {
      Value out = layerResults[numCarried + i];
      Value buf = iterArgs[numCarried + i];
      auto bufType = cast<RankedTensorType>(buf.getType());
      if (!bufType.hasStaticShape()) {
        Value first = arith::CmpIOp::create(rewriter, loc,
                                            arith::CmpIPredicate::eq, iv, zero);
        auto ifOp = scf::IfOp::create(
            rewriter, loc, first,
            [&](OpBuilder &b, Location l) {
              SmallVector<Value> dyn;
              for (int64_t d = 1; d < bufType.getRank(); ++d)
                if (bufType.isDynamicDim(d))
                  dyn.push_back(tensor::DimOp::create(b, l, out, d - 1));
              Value fresh =
                  bufferization::AllocTensorOp::create(b, l, bufType, dyn);
              scf::YieldOp::create(b, l, fresh);
            },
            [&](OpBuilder &b, Location l) { scf::YieldOp::create(b, l, buf); });
        buf = ifOp.getResult(0);
      }
      int64_t rank = bufType.getRank();
      SmallVector<OpFoldResult> off(rank, rewriter.getIndexAttr(0));
      off[0] = layer;
      SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
      for (OpFoldResult s : tensor::getMixedSizes(rewriter, loc, out))
        sizes.push_back(s);
      next.push_back(tensor::InsertSliceOp::create(
          rewriter, loc, out, buf, off, sizes,
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1))));
    }
    scf::YieldOp::create(rewriter, loc, next);
    rewriter.replaceOp(op, forOp.getResults());
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmRepeatToScfPatterns(RewritePatternSet &patterns) {
  patterns.add<RepeatLowering>(patterns.getContext());
}
