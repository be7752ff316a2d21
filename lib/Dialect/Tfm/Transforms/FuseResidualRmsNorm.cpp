//===- FuseResidualRmsNorm.cpp - residual add + RMSNorm -> one op ---------===//
//
// Inside a layer: rmsnorm(add(a, b)) -> fused_residual_rmsnorm. Across
// layers: a scan whose bodies all start with rmsnorm(h) and end with
// yield(add(r, x)) (h the carried hidden state) carries (x, r) instead, and
// each body starts with fused_residual_rmsnorm(x, r) — the add of layer i
// and the norm of layer i + 1 become one op, as the block signatures of
// vLLM and Surogate are (hidden, residual).
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSERESIDUALRMSNORMPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// Replaces `norm` of x + residual by fused_residual_rmsnorm(x, residual)
/// (y and rstd; the caller decides who reads residual_out).
FusedResidualRmsNormOp fuseNorm(RewriterBase &rewriter, RmsNormOp norm, Value x,
                                Value residual) {
  rewriter.setInsertionPoint(norm);
  auto fused = FusedResidualRmsNormOp::create(
      rewriter, norm.getLoc(), norm.getY().getType(), x.getType(),
      norm.getRstd().getType(), x, residual, norm.getWeight(),
      norm.getEpsAttr(), norm.getUnitOffsetAttr());
  rewriter.replaceOp(norm, {fused.getY(), fused.getRstd()});
  return fused;
}

/// rmsnorm(add(a, b)) -> fused_residual_rmsnorm(b, a); the add's other uses
/// read residual_out (the same sum).
struct FuseAddNorm : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RmsNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getX().getDefiningOp<AddOp>();
    if (!add)
      return rewriter.notifyMatchFailure(norm, "input is not a tfm.add");
    auto fused = fuseNorm(rewriter, norm, add.getRhs(), add.getLhs());
    // Every other reader of the sum (the residual stream) takes the fused
    // op's copy; the add is then dead. Readers before the norm keep it.
    rewriter.replaceUsesWithIf(add, fused.getResidualOut(), [&](OpOperand &u) {
      return fused->isBeforeInBlock(u.getOwner()) ||
             u.getOwner()->getBlock() != fused->getBlock();
    });
    if (add->use_empty())
      rewriter.eraseOp(add);
    return success();
  }
};

/// The pieces of one layer body that carrying (hidden, residual) changes.
struct BodyShape {
  RmsNormOp firstNorm; // rmsnorm of the carried hidden state
  AddOp lastAdd;       // the yielded residual add
};

/// Whether `region` reads its carried hidden state (block argument 0) only
/// through one rmsnorm and the residual adds after it, and yields a tfm.add
/// used by nothing else as its first value.
std::optional<BodyShape> matchBody(Region &region) {
  Block &body = region.front();
  Value h = body.getArgument(0);
  BodyShape shape;
  for (Operation *user : h.getUsers()) {
    auto norm = dyn_cast<RmsNormOp>(user);
    if (!norm)
      continue;
    if (shape.firstNorm)
      return std::nullopt;
    shape.firstNorm = norm;
  }
  if (!shape.firstNorm)
    return std::nullopt;
  auto yield = cast<YieldOp>(body.getTerminator());
  shape.lastAdd = yield.getValues()[0].getDefiningOp<AddOp>();
  if (!shape.lastAdd || !shape.lastAdd->hasOneUse() ||
      shape.lastAdd->getBlock() != &body)
    return std::nullopt;
  // Every other reader of h will read residual_out (equal to h), so it must
  // come after the norm.
  for (Operation *user : h.getUsers())
    if (user != shape.firstNorm.getOperation() &&
        (user->getBlock() != &body || !shape.firstNorm->isBeforeInBlock(user)))
      return std::nullopt;
  return shape;
}

/// Carries (hidden, residual) through `repeat` when every body matches.
LogicalResult carryResidual(RepeatOp repeat, RewriterBase &rewriter) {
  if (repeat.getReverse() || repeat.getInits().empty())
    return failure();
  Value init = repeat.getInits()[0];
  SmallVector<BodyShape> shapes;
  for (Region &region : repeat.getKinds()) {
    std::optional<BodyShape> s = matchBody(region);
    if (!s)
      return failure();
    shapes.push_back(*s);
  }
  // After the scan, the hidden state is read by one rmsnorm (the final
  // norm); other readers get hidden + residual.
  Value out = repeat.getResult(0);
  RmsNormOp finalNorm;
  for (Operation *user : out.getUsers())
    if (auto n = dyn_cast<RmsNormOp>(user); n && !finalNorm)
      finalNorm = n;
  if (!finalNorm)
    return failure();

  Location loc = repeat.getLoc();
  rewriter.setInsertionPoint(repeat);
  Value zeros = ZerosLikeOp::create(rewriter, loc, init);
  SmallVector<Value> inits(repeat.getInits());
  inits.insert(inits.begin() + 1, zeros);
  SmallVector<Type> types(repeat.getResultTypes());
  types.insert(types.begin() + 1, init.getType());
  auto fused = RepeatOp::create(
      rewriter, loc, types, inits, repeat.getWeights(),
      repeat.getNumLayersAttr(), repeat.getScheduleAttr(),
      repeat.getKindNamesAttr(), repeat.getReverseAttr(),
      repeat.getWeightKindsAttr(), repeat.getStackedKindsAttr(),
      repeat.getFirstLayerAttr(), repeat.getKinds().size());
  for (auto [region, shape] : llvm::zip(repeat.getKinds(), shapes)) {
    Region &dest = fused.getKinds()[region.getRegionNumber()];
    rewriter.inlineRegionBefore(region, dest, dest.end());
    Block &body = dest.front();
    // (hidden = x, residual = r): the layer's input is x + r.
    BlockArgument x = body.getArgument(0);
    BlockArgument r = body.insertArgument(1u, init.getType(), loc);
    auto norm = fuseNorm(rewriter, shape.firstNorm, x, r);
    rewriter.replaceUsesWithIf(x, norm.getResidualOut(), [&](OpOperand &u) {
      return u.getOwner() != norm.getOperation();
    });
    // yield(add(a, b), ...) -> yield(b, a, ...): the next layer adds them.
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> values(yield.getValues());
    values[0] = shape.lastAdd.getRhs();
    values.insert(values.begin() + 1, shape.lastAdd.getLhs());
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<YieldOp>(yield, values);
    rewriter.eraseOp(shape.lastAdd);
  }
  auto last =
      fuseNorm(rewriter, finalNorm, fused.getResult(0), fused.getResult(1));
  SmallVector<Value> results;
  for (auto [i, r] : llvm::enumerate(repeat.getResults()))
    results.push_back(i == 0 ? last.getResidualOut() : fused.getResult(i + 1));
  // Readers of the hidden state before the final norm see x + r there.
  for (OpOperand &use : llvm::make_early_inc_range(out.getUses()))
    if (!last->isBeforeInBlock(use.getOwner()) &&
        use.getOwner()->getBlock() == last->getBlock()) {
      rewriter.setInsertionPoint(use.getOwner());
      use.set(
          AddOp::create(rewriter, loc, fused.getResult(0), fused.getResult(1)));
    }
  rewriter.replaceOp(repeat, results);
  return success();
}

struct TfmFuseResidualRmsNormPass
    : mlir::tfm::impl::TfmFuseResidualRmsNormPassBase<
          TfmFuseResidualRmsNormPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<RepeatOp> repeats;
    getOperation().walk([&](RepeatOp r) { repeats.push_back(r); });
    for (RepeatOp r : repeats)
      (void)carryResidual(r, rewriter);
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAddNorm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
