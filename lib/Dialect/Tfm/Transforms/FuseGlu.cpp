//===- FuseGlu.cpp - gated MLP projections -> packed matmul + GLU ---------===//

#include "WeightPacking.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSEGLUPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// swiglu (silu) or geglu of `packed` replacing `mul`.
Value buildGlu(RewriterBase &rewriter, MulOp mul, bool silu, Value packed,
               bool gateFirst) {
  rewriter.setInsertionPoint(mul);
  UnitAttr order = gateFirst ? rewriter.getUnitAttr() : UnitAttr();
  if (silu)
    return SwigluOp::create(rewriter, mul.getLoc(), mul.getType(), packed,
                            order);
  return GegluOp::create(rewriter, mul.getLoc(), mul.getType(), packed, order);
}

/// mul(act(a), b) where a and b are the two halves of one split along the
/// last dimension (a packed gate_up projection: Phi-3's MLP, the grouped
/// expert GEMMs of MoE layers) -> the GLU of the packed value, `gate_first`
/// when the gate is the first half.
struct FusePackedGlu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      Operation *act = a.getDefiningOp();
      if (!act || !isa<SiluOp, GeluTanhOp>(act) || !a.hasOneUse())
        continue;
      auto gate = dyn_cast<OpResult>(act->getOperand(0));
      auto up = dyn_cast<OpResult>(b);
      auto split = gate ? dyn_cast<SplitOp>(gate.getOwner()) : SplitOp();
      if (!split || !up || up.getOwner() != split ||
          split.getNumResults() != 2 || gate == up || !gate.hasOneUse() ||
          !up.hasOneUse() || gate.getType() != up.getType() ||
          int64_t(split.getDim()) !=
              cast<RankedTensorType>(split.getX().getType()).getRank() - 1)
        continue;
      Value glu = buildGlu(rewriter, mul, isa<SiluOp>(act), split.getX(),
                           gate.getResultNumber() == 0);
      rewriter.replaceOp(mul, glu);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not act(half) * other half");
  }
};

/// mul(act(matmul(x, Wg)), matmul(x, Wu)) in one layer body; either
/// projection may have a LoRA branch added (tfm-apply-lora's `mm + delta`).
struct GluMatch {
  MulOp mul;
  Operation *act;
  MatmulOp gate, up;
  AddOp gateAdd, upAdd; // null without a branch
};

/// The projection behind `v`: a matmul, or a matmul plus a delta.
std::pair<MatmulOp, AddOp> projectionBehind(Value v) {
  if (auto mm = v.getDefiningOp<MatmulOp>())
    return {mm, AddOp()};
  auto add = v.getDefiningOp<AddOp>();
  if (!add || !v.hasOneUse())
    return {};
  for (Value side : {add.getLhs(), add.getRhs()})
    if (auto mm = side.getDefiningOp<MatmulOp>();
        mm && side.getType() == add.getType())
      return {mm, add};
  return {};
}

/// The delta a GLU half adds (null without one).
Value deltaOf(AddOp add, MatmulOp mm) {
  if (!add)
    return Value();
  return add.getLhs() == mm.getResult() ? add.getRhs() : add.getLhs();
}

std::optional<GluMatch> matchGlu(MulOp mul) {
  for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    Operation *act = a.getDefiningOp();
    if (!act || !isa<SiluOp, GeluTanhOp>(act) || !a.hasOneUse())
      continue;
    auto [gate, gateAdd] = projectionBehind(act->getOperand(0));
    auto [up, upAdd] = projectionBehind(b);
    if (!gate || !up || gate == up || !gate->hasOneUse() || !up->hasOneUse() ||
        gate.getX() != up.getX() || gate.getTranspose() != Transpose::nt ||
        up.getTranspose() != Transpose::nt ||
        bool(gate.getBias()) != bool(up.getBias()) ||
        gate.getType() != up.getType())
      continue;
    return GluMatch{mul, act, gate, up, gateAdd, upAdd};
  }
  return std::nullopt;
}

/// The stacked inputs (weights, then biases) of a GLU's up and gate.
std::optional<std::pair<SmallVector<unsigned>, SmallVector<unsigned>>>
stackedOf(RepeatOp repeat, const GluMatch &m) {
  SmallVector<unsigned> weights, biases;
  for (MatmulOp mm : {m.up, m.gate}) {
    std::optional<unsigned> w = stackedInputOf(repeat, mm.getW());
    if (!w || soleMatmulOf(mm.getW()) != mm)
      return std::nullopt;
    weights.push_back(*w);
    if (mm.getBias()) {
      std::optional<unsigned> b = stackedInputOf(repeat, mm.getBias());
      if (!b || soleMatmulOf(mm.getBias(), true) != mm)
        return std::nullopt;
      biases.push_back(*b);
    }
  }
  return std::pair(weights, biases);
}

/// The GLU that reads stacked input `weight` as its up projection in the
/// body of `kind`, if that body has one.
std::optional<GluMatch> gluReading(RepeatOp repeat, unsigned weight,
                                   unsigned kind) {
  MatmulOp mm = soleMatmulOf(blockArgOf(repeat, weight, kind));
  if (!mm || !mm->hasOneUse())
    return std::nullopt;
  Operation *user = *mm->getUsers().begin();
  if (isa<AddOp>(user) && user->hasOneUse())
    user = *user->getUsers().begin(); // through a LoRA branch
  auto mul = dyn_cast<MulOp>(user);
  if (!mul)
    return std::nullopt;
  std::optional<GluMatch> m = matchGlu(mul);
  if (!m || m->up != mm)
    return std::nullopt;
  return m;
}

/// Packs one GLU of `repeat` (and the same GLU in every other kind reading
/// its weights); false when none is left to pack.
bool packOneGlu(RepeatOp repeat, IRRewriter &rewriter) {
  for (Region &region : repeat.getKinds()) {
    for (MulOp mul : region.front().getOps<MulOp>()) {
      std::optional<GluMatch> m = matchGlu(mul);
      if (!m)
        continue;
      auto stacked = stackedOf(repeat, *m);
      if (!stacked)
        continue;
      // References, not a structured binding: a lambda below captures them.
      SmallVector<unsigned> &weights = stacked->first;
      SmallVector<unsigned> &biases = stacked->second;
      if (!canPackStackedWeights(repeat, weights) ||
          (!biases.empty() && !canPackStackedWeights(repeat, biases)))
        continue;
      // Every kind that reads the weights has the same GLU over them.
      bool everywhere = true;
      for (Region &other : repeat.getKinds()) {
        unsigned k = other.getRegionNumber();
        if (!repeat.weightCoversKind(weights[0], k))
          continue;
        std::optional<GluMatch> o = gluReading(repeat, weights[0], k);
        auto os = o ? stackedOf(repeat, *o) : std::nullopt;
        everywhere &= os && os->first == weights && os->second == biases &&
                      isa<SiluOp>(o->act) == isa<SiluOp>(m->act);
      }
      if (!everywhere)
        continue;
      bool silu = isa<SiluOp>(m->act);
      SmallVector<WeightGroup> groups{{weights, "mlp_gate_up"}};
      if (!biases.empty())
        groups.push_back({biases, "mlp_gate_up"});
      packStackedWeights(
          repeat, groups, [&](unsigned kind, ArrayRef<Value> packed) {
            GluMatch g = *gluReading(repeat, weights[0], kind);
            Value mm = buildPackedMatmul(
                rewriter, g.up.getX(), packed[0],
                packed.size() > 1 ? packed[1] : Value(), {g.up, g.gate});
            rewriter.setInsertionPoint(g.mul);
            Value du = deltaOf(g.upAdd, g.up), dg = deltaOf(g.gateAdd, g.gate);
            if (du || dg) {
              // The LoRA branches join the packed projection (up | gate),
              // zeros for a half without one (both halves share a type).
              Location loc = g.mul.getLoc();
              if (!du)
                du = ZerosLikeOp::create(rewriter, loc, dg);
              if (!dg)
                dg = ZerosLikeOp::create(rewriter, loc, du);
              auto type = cast<RankedTensorType>(mm.getType());
              Value joined = ConcatOp::create(
                  rewriter, loc, type, ValueRange{du, dg},
                  rewriter.getI64IntegerAttr(type.getRank() - 1));
              mm = AddOp::create(rewriter, loc, mm, joined);
            }
            Value glu = buildGlu(rewriter, g.mul, silu, mm, false);
            rewriter.replaceOp(g.mul, glu);
            rewriter.eraseOp(g.act);
            for (AddOp add : {g.gateAdd, g.upAdd})
              if (add)
                rewriter.eraseOp(add);
            rewriter.eraseOp(g.gate);
            rewriter.eraseOp(g.up);
          });
      return true;
    }
  }
  return false;
}

struct TfmFuseGluPass : mlir::tfm::impl::TfmFuseGluPassBase<TfmFuseGluPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<RepeatOp> repeats;
    getOperation().walk([&](RepeatOp r) { repeats.push_back(r); });
    for (RepeatOp r : repeats)
      while (packOneGlu(r, rewriter)) {
      }
    RewritePatternSet patterns(&getContext());
    patterns.add<FusePackedGlu>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
