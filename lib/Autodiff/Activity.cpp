//===- Activity.cpp - which values a trainable argument reaches -----------===//

#include "tfm/Autodiff/Activity.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::tfm;

/// Only float tensors carry a gradient: indices and masks are never active.
static bool canBeActive(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

ActivityAnalysis::ActivityAnalysis(
    Block &body, llvm::function_ref<bool(BlockArgument)> isActiveArgument) {
  for (BlockArgument arg : body.getArguments())
    if (isActiveArgument(arg))
      markActive(arg);
  propagate(body);
}

bool ActivityAnalysis::markActive(Value v) {
  return canBeActive(v) && active.insert(v).second;
}

void ActivityAnalysis::propagate(Block &block) {
  for (Operation &op : block)
    propagate(&op);
}

void ActivityAnalysis::propagate(Operation *op) {
  auto repeat = dyn_cast<RepeatOp>(op);
  if (!repeat) {
    bool anyActive =
        llvm::any_of(op->getOperands(), [&](Value v) { return isActive(v); });
    // Another op with regions: whatever it holds may depend on anything
    // (conservative; tfm models nest only tfm.repeat).
    if (op->getNumRegions() != 0) {
      op->walk([&](Operation *inner) {
        for (Region &r : inner->getRegions())
          for (Block &b : r)
            for (BlockArgument arg : b.getArguments())
              markActive(arg);
        for (Value v : inner->getResults())
          markActive(v);
      });
      return;
    }
    if (anyActive)
      for (Value v : op->getResults())
        markActive(v);
    return;
  }

  // tfm.repeat: a layer's weight slices are active with their stacked
  // parameter; carried values with their initial value, or once any layer
  // kind yields an active value into them (iterate to the fixed point: the
  // carried set only grows).
  unsigned numCarried = repeat.getInits().size();
  SmallVector<bool> carriedActive;
  for (Value init : repeat.getInits())
    carriedActive.push_back(isActive(init));
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned k = 0; k < repeat.getKinds().size(); ++k) {
      Block &body = repeat.getKinds()[k].front();
      SmallVector<unsigned> weights = repeat.getWeightsOfKind(k);
      for (unsigned i = 0; i < numCarried; ++i)
        if (carriedActive[i])
          markActive(body.getArgument(i));
      for (auto [pos, w] : llvm::enumerate(weights))
        if (isActive(repeat.getWeights()[w]))
          markActive(body.getArgument(numCarried + pos));
      propagate(body);
      Operation *yield = body.getTerminator();
      for (unsigned i = 0; i < numCarried; ++i)
        if (!carriedActive[i] && isActive(yield->getOperand(i))) {
          carriedActive[i] = true;
          changed = true;
        }
    }
  }
  for (unsigned i = 0; i < numCarried; ++i)
    if (carriedActive[i])
      markActive(repeat.getResult(i));
  // A stacked output is active when any kind writing it yields an active
  // value.
  for (unsigned s = 0; s < repeat.getStackedResults().size(); ++s)
    for (unsigned k = 0; k < repeat.getKinds().size(); ++k)
      if (Value y = repeat.getYieldedOfKind(s, k); y && isActive(y))
        markActive(repeat.getStackedResults()[s]);
}
