//===- PackProjections.cpp - matmuls of one input -> one packed matmul ----===//

#include "WeightPacking.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPACKPROJECTIONSPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// A matmul whose weight (and bias) are stacked inputs read only by it.
struct Projection {
  MatmulOp mm;
  unsigned weight;
  std::optional<unsigned> bias;
};

std::optional<Projection> projectionOf(RepeatOp repeat, MatmulOp mm) {
  if (mm.getTranspose() != Transpose::nt || soleMatmulOf(mm.getW()) != mm)
    return std::nullopt;
  std::optional<unsigned> w = stackedInputOf(repeat, mm.getW());
  if (!w)
    return std::nullopt;
  Projection p{mm, *w, std::nullopt};
  if (Value b = mm.getBias()) {
    p.bias = stackedInputOf(repeat, b);
    if (!p.bias || soleMatmulOf(b, true) != mm)
      return std::nullopt;
  }
  return p;
}

/// The projections of `x` in its block, in order, that agree with the first
/// on bias presence and result element type.
SmallVector<Projection> projectionsOf(RepeatOp repeat, Value x, Block &body) {
  SmallVector<Projection> out;
  for (Operation &op : body) {
    auto mm = dyn_cast<MatmulOp>(op);
    if (!mm || mm.getX() != x)
      continue;
    std::optional<Projection> p = projectionOf(repeat, mm);
    if (!p)
      continue;
    if (!out.empty() &&
        (bool(p->bias) != bool(out[0].bias) ||
         cast<RankedTensorType>(mm.getType()).getElementType() !=
             cast<RankedTensorType>(out[0].mm.getType()).getElementType()))
      continue;
    out.push_back(*p);
  }
  return out;
}

SmallVector<unsigned> weightsOf(ArrayRef<Projection> ps) {
  return llvm::map_to_vector(ps, [](const Projection &p) { return p.weight; });
}
SmallVector<unsigned> biasesOf(ArrayRef<Projection> ps) {
  SmallVector<unsigned> out;
  for (const Projection &p : ps)
    if (p.bias)
      out.push_back(*p.bias);
  return out;
}

/// The projections reading `weights` in the body of `kind`: all of the
/// same input and in this order, or nothing.
std::optional<SmallVector<Projection>>
sameProjectionsIn(RepeatOp repeat, ArrayRef<unsigned> weights,
                  ArrayRef<unsigned> biases, unsigned kind) {
  SmallVector<Projection> ps;
  for (unsigned w : weights) {
    MatmulOp mm = soleMatmulOf(blockArgOf(repeat, w, kind));
    std::optional<Projection> p = mm ? projectionOf(repeat, mm) : std::nullopt;
    if (!p || (!ps.empty() && mm.getX() != ps[0].mm.getX()))
      return std::nullopt;
    ps.push_back(*p);
  }
  if (biasesOf(ps) != SmallVector<unsigned>(biases))
    return std::nullopt;
  return ps;
}

bool packOne(RepeatOp repeat, IRRewriter &rewriter) {
  for (Region &region : repeat.getKinds()) {
    Block &body = region.front();
    llvm::SmallPtrSet<Value, 8> seen;
    for (MatmulOp mm : body.getOps<MatmulOp>()) {
      if (!seen.insert(mm.getX()).second)
        continue;
      SmallVector<Projection> all = projectionsOf(repeat, mm.getX(), body);
      // Frozen weights pack with frozen ones, trained with trained (LoRA:
      // the base's q, k, v in one GEMM, their adapters' A in another).
      auto frozen = [&](const Projection &p) {
        auto arg = cast<BlockArgument>(repeat.getWeights()[p.weight]);
        auto param =
            repeat->getParentOfType<func::FuncOp>().getArgAttrOfType<ParamAttr>(
                arg.getArgNumber(), kParamAttrName);
        return param && param.getFrozen();
      };
      SmallVector<Projection> ps;
      for (const Projection &p : all)
        if (frozen(p) == frozen(all.front()))
          ps.push_back(p);
      if (ps.size() < 2) {
        ps.clear();
        for (const Projection &p : all)
          if (frozen(p) != frozen(all.front()))
            ps.push_back(p);
      }
      if (ps.size() < 2)
        continue;
      SmallVector<unsigned> weights = weightsOf(ps), biases = biasesOf(ps);
      if (!canPackStackedWeights(repeat, weights) ||
          (!biases.empty() && !canPackStackedWeights(repeat, biases)))
        continue;
      bool everywhere = true;
      for (Region &other : repeat.getKinds())
        if (repeat.weightCoversKind(weights[0], other.getRegionNumber()))
          everywhere &= bool(sameProjectionsIn(repeat, weights, biases,
                                               other.getRegionNumber()));
      if (!everywhere)
        continue;
      // attn_q + attn_k + attn_v -> attn_qkv (the Phi-3 name of the same
      // thing); otherwise the kinds joined.
      SmallVector<StringRef> kinds;
      auto func = repeat->getParentOfType<func::FuncOp>();
      for (unsigned w : weights) {
        auto arg = cast<BlockArgument>(repeat.getWeights()[w]);
        kinds.push_back(
            func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName)
                .getKind());
      }
      std::string kind = llvm::join(kinds, "+");
      if (kind == "attn_q+attn_k+attn_v")
        kind = "attn_qkv";
      SmallVector<WeightGroup> groups{{weights, kind}};
      if (!biases.empty())
        groups.push_back({biases, kind});
      packStackedWeights(
          repeat, groups, [&](unsigned k, ArrayRef<Value> packed) {
            SmallVector<Projection> here =
                *sameProjectionsIn(repeat, weights, biases, k);
            SmallVector<MatmulOp> mms = llvm::map_to_vector(
                here, [](const Projection &p) { return p.mm; });
            Value all =
                buildPackedMatmul(rewriter, mms[0].getX(), packed[0],
                                  packed.size() > 1 ? packed[1] : Value(), mms);
            SmallVector<Type> types;
            for (MatmulOp m : mms)
              types.push_back(m.getType());
            auto split = SplitOp::create(
                rewriter, mms[0].getLoc(), types, all,
                rewriter.getI64IntegerAttr(
                    cast<RankedTensorType>(all.getType()).getRank() - 1));
            for (auto [m, r] : llvm::zip(mms, split.getResults()))
              rewriter.replaceOp(m, r);
          });
      return true;
    }
  }
  return false;
}

struct TfmPackProjectionsPass
    : mlir::tfm::impl::TfmPackProjectionsPassBase<TfmPackProjectionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<RepeatOp> repeats;
    getOperation().walk([&](RepeatOp r) { repeats.push_back(r); });
    for (RepeatOp r : repeats)
      while (packOne(r, rewriter)) {
      }
  }
};

} // namespace
