//===- PlanAttr.cpp - a layer kind's plan as an attribute -----------------===//
//
// What tfm-plan-recompute records on a backward scan and tfm-memory-report
// reads: the plan's sizes and value names, and the frontier (the plan's
// saved bytes and recompute FLOPs at fixed fractions of save-all).
//
//===----------------------------------------------------------------------===//

#include "tfm/Recompute/SavedValues.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The fractions of save-all the frontier is drawn at.
constexpr double kFrontierFractions[] = {1.0, 0.75, 0.5, 0.35, 0.25, 0.15};

ArrayAttr namesOf(Builder &b, const LayerKindGraph &g,
                  const std::vector<bool> &valueSet) {
  SmallVector<Attribute> names;
  for (auto [v, value] : llvm::enumerate(g.values))
    if (valueSet[v])
      names.push_back(b.getStringAttr(value.name));
  return b.getArrayAttr(names);
}

} // namespace

DictionaryAttr mlir::tfm::describePlan(Builder &b, const LayerKindGraph &g,
                                       const RecomputePlan &plan,
                                       const PlannerOptions &options,
                                       bool withFrontier) {
  std::vector<bool> recomputedValues(g.values.size(), false);
  for (auto [v, value] : llvm::enumerate(g.values))
    recomputedValues[v] =
        value.def >= 0 && plan.recomputed[value.def] && !plan.saved[v];
  SmallVector<Attribute> frontier;
  for (double f : withFrontier ? llvm::ArrayRef(kFrontierFractions)
                               : llvm::ArrayRef<double>()) {
    RecomputeBudget budget;
    budget.kind = RecomputeBudget::Kind::Fraction;
    budget.value = f;
    budget.spelling = std::to_string(f);
    llvm::Expected<RecomputePlan> p = planLayerKind(g, budget, options);
    if (!p) {
      llvm::consumeError(p.takeError());
      continue;
    }
    frontier.push_back(b.getArrayAttr(
        {b.getF64FloatAttr(f), b.getF64FloatAttr(p->savedBytesPerToken),
         b.getF64FloatAttr(p->recomputeFlopsPerToken)}));
  }
  auto f64 = [&](double x) { return b.getF64FloatAttr(x); };
  return b.getDictionaryAttr({
      b.getNamedAttr("name", b.getStringAttr(g.name)),
      b.getNamedAttr("layers", b.getI64IntegerAttr(g.layers)),
      b.getNamedAttr("save_all_bytes_per_token", f64(g.saveAllBytesPerToken())),
      b.getNamedAttr("saved_bytes_per_token", f64(plan.savedBytesPerToken)),
      b.getNamedAttr("offloaded_bytes_per_token",
                     f64(plan.offloadedBytesPerToken)),
      b.getNamedAttr("recompute_flops_per_token",
                     f64(plan.recomputeFlopsPerToken)),
      b.getNamedAttr("recompute_traffic_bytes_per_token",
                     f64(plan.recomputeTrafficPerToken)),
      b.getNamedAttr("step_flops_per_token",
                     f64(g.forwardFlopsPerToken + g.backwardFlopsPerToken)),
      b.getNamedAttr("saved", namesOf(b, g, plan.saved)),
      b.getNamedAttr("recomputed", namesOf(b, g, recomputedValues)),
      b.getNamedAttr("offloaded", namesOf(b, g, plan.offloaded)),
      b.getNamedAttr("frontier", b.getArrayAttr(frontier)),
  });
}
