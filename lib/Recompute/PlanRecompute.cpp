//===- PlanRecompute.cpp - the tfm-plan-recompute pass --------------------===//
//
// Plans each layer kind (RecomputePlanner.cpp), then materialises the plan:
//
//   forward scan   yields the values the plan keeps (new slots, shared
//                  between kinds by type as tfm-autodiff shares them);
//   backward scan  reads those slots; every old slot it no longer gets is
//                  rebuilt by cloning its forward ops (and the chain they
//                  need) right before the first op that reads it.
//
// Rebuilding runs the same ops on the same operands, so results are
// bit-identical and numerics do not change under any plan.
//
//===----------------------------------------------------------------------===//

#include "tfm/Analysis/ReportOptions.h"
#include "tfm/Analysis/TfmCosts.h"
#include "tfm/Dialect/Tfm/IR/StackedValues.h"
#include "tfm/Recompute/Passes.h"
#include "tfm/Recompute/SavedValues.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPLANRECOMPUTEPASS
#include "tfm/Recompute/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The slots of the new plan: one buffer per (type, offloaded) shared by
/// the kinds that keep a value of that type.
struct NewSlots {
  SmallVector<Type> types;
  SmallVector<bool> offloaded;
  SmallVector<SmallVector<int64_t>> kinds;
  /// Per kind: forward value -> slot.
  SmallVector<llvm::MapVector<Value, unsigned>> ofKind;

  NewSlots(ArrayRef<LayerKindGraph> graphs, ArrayRef<RecomputePlan> plans) {
    ofKind.resize(graphs.size());
    for (auto [k, g] : llvm::enumerate(graphs)) {
      llvm::SmallDenseSet<unsigned> used;
      for (auto [v, value] : llvm::enumerate(g.values)) {
        bool off = plans[k].offloaded[v];
        if (!plans[k].saved[v] && !off)
          continue;
        unsigned s = 0;
        while (s < types.size() && (types[s] != value.value.getType() ||
                                    offloaded[s] != off || used.count(s)))
          ++s;
        if (s == types.size()) {
          types.push_back(value.value.getType());
          offloaded.push_back(off);
          kinds.emplace_back();
        }
        used.insert(s);
        kinds[s].push_back(k);
        ofKind[k][value.value] = s;
      }
    }
  }
  /// Kind `k`'s (slot, forward value) pairs in slot order: the order of the
  /// new stacked outputs and inputs.
  SmallVector<std::pair<unsigned, Value>> inSlotOrder(unsigned k) const {
    SmallVector<std::pair<unsigned, Value>> bySlot;
    for (auto [v, s] : ofKind[k])
      bySlot.push_back({s, v});
    llvm::sort(bySlot, llvm::less_first());
    return bySlot;
  }
  DenseI64ArrayAttr kindSet(MLIRContext *ctx, unsigned s,
                            unsigned numKinds) const {
    if (kinds[s].size() == numKinds)
      return DenseI64ArrayAttr();
    return DenseI64ArrayAttr::get(ctx, kinds[s]);
  }
};

/// Rebuilds forward values of one kind inside its backward body.
class Rebuilder {
public:
  Rebuilder(SavedScan &scan, unsigned kind) : scan(scan), kind(kind) {}

  /// The backward body's value for forward value `v`, cloning its defining
  /// ops (and what they need) before `before` when it is not there yet.
  FailureOr<Value> get(Value v, Operation *before) {
    if (Value m = map.lookupOrNull(v))
      return m;
    Region &fwdRegion = scan.forward.getKinds()[kind];
    if (v.getParentRegion() != &fwdRegion)
      return v; // from above the scans
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      BlockArgument w = scan.weightInBackward(arg, kind);
      if (!w)
        return failure(); // a carried input the plan did not keep
      map.map(v, w);
      return Value(w);
    }
    Operation *def = v.getDefiningOp();
    for (Value operand : def->getOperands())
      if (failed(get(operand, before)))
        return failure();
    OpBuilder b(before);
    Operation *clone = b.clone(*def, map);
    clone->setAttr(kRecomputedAttrName, b.getUnitAttr());
    return map.lookup(v);
  }

  IRMapping map;

private:
  SavedScan &scan;
  unsigned kind;
};

/// The op of `block` that contains `op`.
Operation *ancestorIn(Block &block, Operation *op) {
  return block.findAncestorOpInBlock(*op);
}

/// Rewrites `scan` to save what `plans` keep and rebuild the rest.
LogicalResult materialise(SavedScan &scan, ArrayRef<LayerKindGraph> graphs,
                          ArrayRef<RecomputePlan> plans, Attribute planAttr) {
  RepeatOp fwd = scan.forward, bwd = scan.backward;
  MLIRContext *ctx = fwd.getContext();
  Location loc = fwd.getLoc();
  unsigned numKinds = fwd.getKinds().size();
  unsigned fwdCarried = fwd.getInits().size();
  NewSlots slots(graphs, plans);
  llvm::SmallDenseSet<unsigned> oldResults, oldInputs;
  for (const SavedScan::Slot &s : scan.slots) {
    oldResults.insert(s.forwardResult);
    oldInputs.insert(s.backwardInput);
  }

  // Backward bodies first (they need the forward bodies in place to look
  // values up): new slot arguments at the end, old slot reads replaced by
  // the new slots or by rebuilt values, old slot arguments erased.
  for (unsigned k = 0; k < numKinds; ++k) {
    Block &body = bwd.getKinds()[k].front();
    Rebuilder rebuild(scan, k);
    for (auto [s, v] : slots.inSlotOrder(k))
      rebuild.map.map(v, body.addArgument(slots.types[s], loc));
    // Old slot arguments in the order of their first reader, so that what
    // several rebuilds share is cloned before the earliest.
    SmallVector<std::pair<Operation *, const SavedScan::Slot *>> reads;
    for (const SavedScan::Slot &slot : scan.slots) {
      BlockArgument arg = scan.slotArgument(slot, k);
      if (!arg || arg.use_empty())
        continue;
      Operation *first = nullptr;
      for (Operation *user : arg.getUsers()) {
        Operation *a = ancestorIn(body, user);
        if (!first || a->isBeforeInBlock(first))
          first = a;
      }
      reads.push_back({first, &slot});
    }
    llvm::sort(reads, [](auto &a, auto &b) {
      return a.first != b.first && a.first->isBeforeInBlock(b.first);
    });
    for (auto [first, slot] : reads) {
      Value v = scan.savedValue(*slot, k);
      FailureOr<Value> nv = rebuild.get(v, first);
      if (failed(nv))
        return bwd.emitError("tfm-plan-recompute: layer kind '")
               << graphs[k].name
               << "': a rebuilt value needs a layer input the plan does "
                  "not keep";
      scan.slotArgument(*slot, k).replaceAllUsesWith(*nv);
    }
    SmallVector<unsigned> erase;
    for (const SavedScan::Slot &slot : scan.slots)
      if (BlockArgument arg = scan.slotArgument(slot, k))
        erase.push_back(arg.getArgNumber());
    llvm::sort(erase);
    for (unsigned i : llvm::reverse(erase))
      body.eraseArgument(i);
  }

  // The forward scan: kept results, then the new slots.
  SmallVector<Type> fwdTypes;
  SmallVector<DenseI64ArrayAttr> fwdSets;
  SmallVector<int> keptIndex(fwd.getNumResults(), -1);
  for (unsigned i = 0; i < fwd.getNumResults(); ++i) {
    if (oldResults.count(i))
      continue;
    keptIndex[i] = fwdTypes.size();
    fwdTypes.push_back(fwd.getResult(i).getType());
    if (i >= fwdCarried)
      fwdSets.push_back(fwd.getStackedKindSet(i - fwdCarried));
  }
  for (unsigned s = 0; s < slots.types.size(); ++s) {
    DenseI64ArrayAttr set = slots.kindSet(ctx, s, numKinds);
    fwdTypes.push_back(
        prependLayers(slots.types[s], fwd.getNumLayersOfKinds(set)));
    fwdSets.push_back(set);
  }
  for (unsigned k = 0; k < numKinds; ++k) {
    Operation *yield = fwd.getKinds()[k].front().getTerminator();
    SmallVector<unsigned> stacked = fwd.getStackedOfKind(k);
    SmallVector<Value> values(yield->getOperands().take_front(fwdCarried));
    for (auto [pos, i] : llvm::enumerate(stacked))
      if (!oldResults.count(fwdCarried + i))
        values.push_back(yield->getOperand(fwdCarried + pos));
    for (auto [s, v] : slots.inSlotOrder(k))
      values.push_back(v);
    yield->setOperands(values);
  }
  OpBuilder fb(fwd);
  auto newFwd = RepeatOp::create(
      fb, loc, fwdTypes, fwd.getInits(), fwd.getWeights(),
      fwd.getNumLayersAttr(), fwd.getScheduleAttr(), fwd.getKindNamesAttr(),
      fwd.getReverseAttr(), fwd.getWeightKindsAttr(),
      kindSetsAttr(ctx, fwdSets, numKinds), fwd.getFirstLayerAttr(), numKinds);
  for (unsigned k = 0; k < numKinds; ++k)
    newFwd.getKinds()[k].takeBody(fwd.getKinds()[k]);

  // The backward scan: kept inputs, then the new slots.
  SmallVector<Value> bwdInputs;
  SmallVector<DenseI64ArrayAttr> bwdSets;
  for (auto [j, input] : llvm::enumerate(bwd.getWeights())) {
    if (oldInputs.count(j))
      continue;
    bwdInputs.push_back(input);
    bwdSets.push_back(bwd.getWeightKindSet(j));
  }
  for (unsigned s = 0; s < slots.types.size(); ++s) {
    bwdInputs.push_back(
        newFwd.getResult(fwdTypes.size() - slots.types.size() + s));
    bwdSets.push_back(slots.kindSet(ctx, s, numKinds));
  }
  OpBuilder bb(bwd);
  auto newBwd = RepeatOp::create(
      bb, bwd.getLoc(), bwd.getResultTypes(), bwd.getInits(), bwdInputs,
      bwd.getNumLayersAttr(), bwd.getScheduleAttr(), bwd.getKindNamesAttr(),
      bwd.getReverseAttr(), kindSetsAttr(ctx, bwdSets, numKinds),
      bwd.getStackedKindsAttr(), bwd.getFirstLayerAttr(), numKinds);
  for (unsigned k = 0; k < numKinds; ++k)
    newBwd.getKinds()[k].takeBody(bwd.getKinds()[k]);
  newBwd->setAttr(kRecomputePlanAttrName, planAttr);
  bwd.replaceAllUsesWith(newBwd.getResults());
  bwd.erase();
  for (unsigned i = 0; i < fwd.getNumResults(); ++i)
    if (keptIndex[i] >= 0)
      fwd.getResult(i).replaceAllUsesWith(newFwd.getResult(keptIndex[i]));
  fwd.erase();
  return success();
}

struct TfmPlanRecomputePass
    : mlir::tfm::impl::TfmPlanRecomputePassBase<TfmPlanRecomputePass> {
  using TfmPlanRecomputePassBase::TfmPlanRecomputePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<RecomputeBudget> parsed = RecomputeBudget::parse(budget);
    if (!parsed) {
      module.emitError() << "tfm-plan-recompute: option 'budget': "
                         << llvm::toString(parsed.takeError());
      return signalPassFailure();
    }
    // Rates a device could have (GB/s of host offload, TFLOP/s); NaN and
    // infinities are refused, not planned with.
    if (failed(checkReportOptions(module, "tfm-plan-recompute", batch, seq)) ||
        failed(checkReportRate(module, "tfm-plan-recompute",
                               "offload-bandwidth", offloadBandwidth, 0,
                               1e9)) ||
        failed(checkReportRate(module, "tfm-plan-recompute", "device-tflops",
                               deviceTflops, 1e-6, 1e9)))
      return signalPassFailure();
    PlannerOptions options;
    options.offloadBytesPerSecond = offloadBandwidth * 1e9;
    options.deviceFlopsPerSecond = deviceTflops * 1e12;
    Builder b(module.getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      DimResolver dims(batch, seq, moeTopKOf(func));
      for (SavedScan &scan : findSavedScans(func)) {
        SmallVector<LayerKindGraph> graphs;
        SmallVector<RecomputePlan> plans;
        SmallVector<Attribute> kinds;
        for (unsigned k = 0; k < scan.forward.getKinds().size(); ++k) {
          graphs.push_back(buildLayerKindGraph(scan, k, dims));
          llvm::Expected<RecomputePlan> plan =
              planLayerKind(graphs.back(), *parsed, options);
          if (!plan) {
            scan.backward.emitError()
                << "tfm-plan-recompute: " << llvm::toString(plan.takeError());
            return signalPassFailure();
          }
          kinds.push_back(
              describePlan(b, graphs.back(), *plan, options, frontier));
          plans.push_back(std::move(*plan));
        }
        auto attr = b.getDictionaryAttr(
            {b.getNamedAttr("budget", b.getStringAttr(parsed->spelling)),
             b.getNamedAttr("kinds", b.getArrayAttr(kinds))});
        if (parsed->kind == RecomputeBudget::Kind::SaveAll) {
          scan.backward->setAttr(kRecomputePlanAttrName, attr);
          continue;
        }
        if (failed(materialise(scan, graphs, plans, attr)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
