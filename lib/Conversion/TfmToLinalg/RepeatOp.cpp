//===- RepeatOp.cpp - tfm.repeat to scf.for -------------------------------===//
//
// One loop over layers; each iteration runs the layer body of its kind,
// chosen by scf.index_switch on the schedule when there are several, on
// layer i's slice of each stacked weight that kind reads (a view after
// bufferization, no copy). A weight covering only some kinds is indexed by
// the layer's rank among them (a constant table). Each body exists once in
// the output, whatever the depth.
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
    auto i64Table = [&](ArrayRef<int64_t> values) -> Value {
      auto type = RankedTensorType::get({int64_t(values.size())},
                                        rewriter.getI64Type());
      return arith::ConstantOp::create(rewriter, loc, type,
                                       DenseElementsAttr::get(type, values));
    };
    Value schedule;
    if (auto s = op.getSchedule())
      schedule = i64Table(*s);
    // A stacked value covering only some kinds is indexed by the layer's
    // rank among the layers of those kinds: one table per kind set.
    DenseMap<Attribute, Value> rankTables;
    auto addRankTable = [&](DenseI64ArrayAttr set) {
      if (!set || rankTables.count(set))
        return;
      SmallVector<int64_t> rank(numLayers, 0);
      for (auto [s, l] : llvm::enumerate(op.getLayersOfKinds(set)))
        rank[l] = s;
      rankTables[set] = i64Table(rank);
    };
    unsigned numKinds = op.getKinds().size();
    SmallVector<DenseI64ArrayAttr> weightSets, stackedSets;
    for (unsigned j = 0; j < op.getWeights().size(); ++j)
      weightSets.push_back(op.getWeightKindSet(j));
    for (unsigned i = 0; i < op.getStackedResults().size(); ++i)
      stackedSets.push_back(op.getStackedKindSet(i));
    for (DenseI64ArrayAttr set :
         llvm::concat<DenseI64ArrayAttr>(weightSets, stackedSets))
      addRankTable(set);

    // Carried values equal in every iteration share one loop-carried value:
    // the reverse scan of a fused residual norm carries the gradients of
    // hidden and residual, which are the same tensor, and two iter_args
    // yielding one value would make bufferization copy it every layer.
    SmallVector<unsigned> carriedSlot = shareEqualCarries(op);
    SmallVector<Value> iterInits;
    for (auto [j, init] : llvm::enumerate(op.getInits()))
      if (carriedSlot[j] == iterInits.size())
        iterInits.push_back(init);
    size_t numLoopCarried = iterInits.size();
    // Stacked outputs start as placeholders; dynamic sizes are only known
    // from the first layer's values (see insertStacked). alloc_tensor, not
    // tensor.empty: CSE would merge identical empties into one buffer that
    // two stacked outputs then both write.
    for (Value r : op.getStackedResults()) {
      auto t = cast<RankedTensorType>(r.getType());
      SmallVector<Value> dyn(t.getNumDynamicDims(), lb);
      iterInits.push_back(
          bufferization::AllocTensorOp::create(rewriter, loc, t, dyn));
    }
    auto forOp = scf::ForOp::create(rewriter, loc, lb, ub, step, iterInits);
    Block *loopBody = forOp.getBody();
    if (!loopBody->empty() && isa<scf::YieldOp>(loopBody->back()))
      rewriter.eraseOp(&loopBody->back());
    rewriter.setInsertionPointToStart(loopBody);
    Value iv = forOp.getInductionVar();
    Value layer = iv;
    if (op.getReverse())
      layer = arith::SubIOp::create(
          rewriter, loc,
          arith::ConstantIndexOp::create(rewriter, loc, numLayers - 1), iv);
    Scan scan{op,         forOp,       layer,       rankTables,
              weightSets, stackedSets, carriedSlot, numLoopCarried};

    SmallVector<Value> next;
    if (numKinds == 1) {
      next = scan.emitKind(rewriter, 0, loopBody);
    } else {
      Value kind =
          tensor::ExtractOp::create(rewriter, loc, schedule, ValueRange{layer});
      kind = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                        kind);
      SmallVector<int64_t> cases;
      for (unsigned k = 0; k + 1 < numKinds; ++k)
        cases.push_back(k);
      auto sw = scf::IndexSwitchOp::create(rewriter, loc,
                                           TypeRange(forOp.getRegionIterArgs()),
                                           kind, cases, cases.size());
      for (unsigned k = 0; k < numKinds; ++k) {
        Region &region =
            k + 1 < numKinds ? sw.getCaseRegions()[k] : sw.getDefaultRegion();
        Block *dest = rewriter.createBlock(&region);
        SmallVector<Value> results = scan.emitKind(rewriter, k, dest);
        scf::YieldOp::create(rewriter, loc, results);
      }
      rewriter.setInsertionPointToEnd(loopBody);
      next.assign(sw.getResults().begin(), sw.getResults().end());
    }
    scf::YieldOp::create(rewriter, loc, next);
    SmallVector<Value> replacements;
    for (unsigned slot : carriedSlot)
      replacements.push_back(forOp.getResult(slot));
    llvm::append_range(replacements,
                       forOp.getResults().drop_front(numLoopCarried));
    rewriter.replaceOp(op, replacements);
    return success();
  }

  /// For each carried value, the loop-carried slot holding it: carried value
  /// j shares the slot of an earlier i when both start from the same value
  /// and every layer kind yields one value for both (so they are equal after
  /// every layer).
  static SmallVector<unsigned> shareEqualCarries(RepeatOp op) {
    OperandRange inits = op.getInits();
    SmallVector<unsigned> slot;
    unsigned numSlots = 0;
    for (unsigned j = 0; j < inits.size(); ++j) {
      std::optional<unsigned> same;
      for (unsigned i = 0; i < j && !same; ++i) {
        bool equal = inits[i] == inits[j];
        for (Region &kind : op.getKinds()) {
          auto yield = cast<YieldOp>(kind.front().getTerminator());
          equal = equal && yield.getValues()[i] == yield.getValues()[j];
        }
        if (equal)
          same = slot[i];
      }
      slot.push_back(same ? *same : numSlots++);
    }
    return slot;
  }

  /// The loop being built: what each layer kind's code needs.
  struct Scan {
    RepeatOp op;
    scf::ForOp forOp;
    Value layer;
    const DenseMap<Attribute, Value> &rankTables;
    ArrayRef<DenseI64ArrayAttr> weightSets, stackedSets;
    /// Carried value j lives in loop-carried slot carriedSlot[j]; the loop
    /// carries numLoopCarried values, then the stacked outputs.
    ArrayRef<unsigned> carriedSlot;
    size_t numLoopCarried;

    /// Where layer `layer` sits in a stacked value covering `set`.
    Value sliceIndex(PatternRewriter &rewriter, DenseI64ArrayAttr set) {
      if (!set)
        return layer;
      Location loc = op.getLoc();
      Value rank = tensor::ExtractOp::create(
          rewriter, loc, rankTables.lookup(set), ValueRange{layer});
      return arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                        rank);
    }

    /// Emits layer kind `k` at the end of `dest`: slices its weights, inlines
    /// its body and inserts its stacked outputs; returns the next carried
    /// values and every stacked buffer (those of other kinds unchanged).
    SmallVector<Value> emitKind(PatternRewriter &rewriter, unsigned k,
                                Block *dest) {
      rewriter.setInsertionPointToEnd(dest);
      size_t numCarried = op.getInits().size();
      ValueRange iterArgs = forOp.getRegionIterArgs();
      SmallVector<Value> args;
      for (unsigned slot : carriedSlot)
        args.push_back(iterArgs[slot]);
      for (unsigned j : op.getWeightsOfKind(k))
        args.push_back(layerSlice(rewriter, op.getWeights()[j],
                                  sliceIndex(rewriter, weightSets[j])));
      SmallVector<Value> results =
          inlineBody(rewriter, op.getKinds()[k].front(), dest, args);
      rewriter.setInsertionPointToEnd(dest);
      SmallVector<Value> next(numLoopCarried);
      for (auto [j, slot] : llvm::enumerate(carriedSlot))
        next[slot] = results[j];
      next.append(iterArgs.begin() + numLoopCarried, iterArgs.end());
      for (auto [pos, i] : llvm::enumerate(op.getStackedOfKind(k)))
        next[numLoopCarried + i] =
            insertStacked(rewriter, i, results[numCarried + pos],
                          iterArgs[numLoopCarried + i]);
      return next;
    }

    /// Slice `index` of stacked input `w` [L, d1, .., dn] as [d1, .., dn].
    Value layerSlice(PatternRewriter &rewriter, Value w, Value index) {
      Location loc = op.getLoc();
      auto type = cast<RankedTensorType>(w.getType());
      int64_t rank = type.getRank();
      SmallVector<OpFoldResult> off(rank, rewriter.getIndexAttr(0));
      off[0] = index;
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, w);
      sizes[0] = rewriter.getIndexAttr(1);
      auto sliceType = RankedTensorType::get(type.getShape().drop_front(),
                                             type.getElementType());
      return tensor::ExtractSliceOp::create(
          rewriter, loc, sliceType, w, off, sizes,
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    }

    /// Inserts layer `layer`'s value `out` of stacked output `i` into `buf`.
    /// A stacked output with dynamic sizes is allocated in the first
    /// iteration that writes it, from the sizes of that layer's value
    /// (batch and sequence do not change across layers).
    Value insertStacked(PatternRewriter &rewriter, unsigned i, Value out,
                        Value buf) {
      Location loc = op.getLoc();
      auto bufType = cast<RankedTensorType>(buf.getType());
      if (!bufType.hasStaticShape()) {
        auto [firstLayer, lastLayer] =
            op.getLayerRangeOfKinds(op.getStackedKindSet(i));
        int64_t firstIteration =
            op.getReverse() ? op.getNumLayers() - 1 - lastLayer : firstLayer;
        Value first = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, forOp.getInductionVar(),
            arith::ConstantIndexOp::create(rewriter, loc, firstIteration));
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
      off[0] = sliceIndex(rewriter, stackedSets[i]);
      SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
      for (OpFoldResult s : tensor::getMixedSizes(rewriter, loc, out))
        sizes.push_back(s);
      return tensor::InsertSliceOp::create(
          rewriter, loc, out, buf, off, sizes,
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    }
  };
};

} // namespace

void mlir::tfm::populateTfmRepeatToScfPatterns(RewritePatternSet &patterns) {
  patterns.add<RepeatLowering>(patterns.getContext());
}
