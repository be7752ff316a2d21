//===- SavedValues.cpp - what a derived backward reads from its forward ---===//

#include "tfm/Recompute/SavedValues.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The position of `x` in `list`, if there.
std::optional<unsigned> indexIn(ArrayRef<unsigned> list, unsigned x) {
  auto it = llvm::find(list, x);
  if (it == list.end())
    return std::nullopt;
  return unsigned(it - list.begin());
}

/// What `selective` rebuilds: element-wise ops, norms, RoPE and views —
/// O(1) work per element, no contraction.
bool isCheapToRecompute(Operation *op) {
  if (op->hasTrait<OpTrait::SameOperandsAndResultType>())
    return true;
  if (isa<RmsNormOp, LayerNormOp, FusedResidualRmsNormOp, QkNormOp,
          QkvQkNormRopeOp, QkvRopeOp, RopeOp, SwigluOp, GegluOp,
          ClampedSwigluOp, SiluGateOp, GatedRmsNormOp, ReshapeOp, SplitOp,
          ExpandOp, ConcatOp>(op))
    return true;
  // Other dialects' side-effect-free ops without a cost (constants, tensor
  // views) are free.
  return op->getDialect() != op->getContext()->getLoadedDialect<TfmDialect>() &&
         !isa<CostOpInterface>(op);
}

} // namespace

std::string ValueNamer::next(Operation &op) {
  std::string mnemonic = op.getName().stripDialect().str();
  if (op.getDialect() &&
      op.getDialect() != op.getContext()->getLoadedDialect<TfmDialect>())
    mnemonic = op.getName().getStringRef().str();
  return mnemonic + "#" + std::to_string(seen[mnemonic]++);
}

std::string ValueNamer::of(OpResult r, llvm::StringRef base) {
  if (r.getOwner()->getNumResults() == 1)
    return base.str();
  return (base + ":" + llvm::Twine(r.getResultNumber())).str();
}

Value SavedScan::savedValue(const Slot &slot, unsigned kind) {
  return forward.getYieldedOfKind(
      slot.forwardResult - forward.getInits().size(), kind);
}

BlockArgument SavedScan::slotArgument(const Slot &slot, unsigned kind) {
  auto pos = indexIn(backward.getWeightsOfKind(kind), slot.backwardInput);
  if (!pos)
    return BlockArgument();
  return backward.getKinds()[kind].front().getArgument(
      backward.getInits().size() + *pos);
}

BlockArgument SavedScan::weightInBackward(BlockArgument arg, unsigned kind) {
  unsigned numCarried = forward.getInits().size();
  if (arg.getArgNumber() < numCarried)
    return BlockArgument();
  unsigned input =
      forward.getWeightsOfKind(kind)[arg.getArgNumber() - numCarried];
  Value weight = forward.getWeights()[input];
  SmallVector<unsigned> ofKind = backward.getWeightsOfKind(kind);
  for (auto [pos, j] : llvm::enumerate(ofKind))
    if (backward.getWeights()[j] == weight &&
        backward.getWeightKindSet(j) == forward.getWeightKindSet(input))
      return backward.getKinds()[kind].front().getArgument(
          backward.getInits().size() + pos);
  return BlockArgument();
}

SmallVector<SavedScan> mlir::tfm::findSavedScans(func::FuncOp func) {
  SmallVector<SavedScan> scans;
  for (auto backward : func.getBody().getOps<RepeatOp>()) {
    SavedScan scan;
    scan.backward = backward;
    for (auto [j, input] : llvm::enumerate(backward.getWeights())) {
      auto forward = input.getDefiningOp<RepeatOp>();
      if (!forward || forward == backward ||
          forward.getNumLayers() != backward.getNumLayers() ||
          forward.getKinds().size() != backward.getKinds().size())
        continue;
      auto result = cast<OpResult>(input);
      if (result.getResultNumber() < forward.getInits().size())
        continue;
      // A slot is read by the backward scan only (as stacked inputs).
      if (!llvm::all_of(result.getUsers(),
                        [&](Operation *u) { return u == backward; }))
        continue;
      if (scan.forward && scan.forward != forward)
        continue; // one forward scan per backward scan
      scan.forward = forward;
      scan.slots.push_back({unsigned(j), result.getResultNumber()});
    }
    if (scan.forward)
      scans.push_back(std::move(scan));
  }
  return scans;
}

LayerKindGraph mlir::tfm::buildLayerKindGraph(SavedScan &scan, unsigned kind,
                                              const DimResolver &dims) {
  RepeatOp fwd = scan.forward;
  Region &region = fwd.getKinds()[kind];
  Block &body = region.front();
  double tokens = double(dims.batch) * double(dims.seq);
  LayerKindGraph g;
  g.kind = kind;
  if (auto names = fwd.getKindNames())
    g.name = cast<StringAttr>((*names)[kind]).str();
  else
    g.name =
        fwd.getKinds().size() == 1 ? "layer" : "kind" + std::to_string(kind);
  g.layers = fwd.getLayerCountsByKind()[kind];

  llvm::DenseMap<Value, int> index;
  auto addValue = [&](Value v, std::string name, int def) {
    index[v] = g.values.size();
    g.values.push_back({v, std::move(name), dims.bytes(v) / tokens, def});
  };
  for (unsigned i = 0; i < fwd.getInits().size(); ++i)
    addValue(body.getArgument(i), "input#" + std::to_string(i), -1);
  ValueNamer namer;
  for (Operation &op : body.without_terminator()) {
    int p = g.ops.size();
    PlanOp planOp;
    planOp.op = &op;
    if (auto c = dyn_cast<CostOpInterface>(&op)) {
      OpCost cost = c.getCost(dims);
      planOp.flopsPerToken = cost.flops / tokens;
      planOp.trafficPerToken = (cost.bytesRead + cost.bytesWritten) / tokens;
    }
    planOp.cheap = isCheapToRecompute(&op);
    bool available = isMemoryEffectFree(&op) && op.getNumRegions() == 0;
    for (Value operand : op.getOperands()) {
      if (auto it = index.find(operand); it != index.end()) {
        planOp.inputs.push_back(it->second);
        continue;
      }
      if (operand.getParentRegion() != &region)
        continue; // from above the scan
      // A weight slice: the backward must read the same weight.
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || !scan.weightInBackward(arg, kind))
        available = false;
    }
    planOp.recomputable = available;
    g.ops.push_back(std::move(planOp));
    g.forwardFlopsPerToken += g.ops.back().flopsPerToken;
    std::string base = namer.next(op);
    for (OpResult r : op.getResults())
      addValue(r, ValueNamer::of(r, base), p);
  }
  for (const SavedScan::Slot &slot : scan.slots) {
    Value v = scan.savedValue(slot, kind);
    BlockArgument arg = scan.slotArgument(slot, kind);
    if (!v || !arg || arg.use_empty())
      continue;
    if (auto it = index.find(v); it != index.end())
      g.values[it->second].needed = true;
  }
  for (Operation &op : scan.backward.getKinds()[kind].front())
    if (auto c = dyn_cast<CostOpInterface>(&op))
      g.backwardFlopsPerToken += c.getCost(dims).flops / tokens;
  return g;
}
