//===- RepeatAdjoint.cpp - the adjoint of tfm.repeat ----------------------===//
//
// Forward:  h_{i+1} = body_k(h_i, W[i])                       (layers 0..L-1)
// Backward: (dh_i, dW[i]) = body_k'(dh_{i+1}, W[i], S[i])     (layers L-1..0)
//
// Each backward body is built by differentiating the forward body of the
// same kind. Whatever forward value its rules read (through
// AdjointBuilder::primal) becomes a *saved slot*: the forward repeat yields
// it as a stacked output S, and the backward repeat reads S[i] as a stacked
// input. So the saved set is explicit in the IR, and is exactly what the
// adjoints need (the default policy; a recompute planner can rewrite it).
// Slots are shared between layer kinds by type, so kinds with the same
// structure (sliding vs full attention) save into the same buffers; a slot
// only some kinds use covers only their layers (stacked_kinds).
//
// Only active weights (those a trainable parameter reaches: frozen stacked
// parameters are not) get a gradient: the backward yields none for the
// others, so they cost neither weight-gradient work nor a stacked slot.
//
//===----------------------------------------------------------------------===//

#include "RepeatAdjoint.h"
#include "tfm/Autodiff/BlockDifferentiator.h"
#include "tfm/Dialect/Tfm/IR/StackedValues.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The backward body of one layer kind, before its saved slots are block
/// arguments.
struct KindBackward {
  std::unique_ptr<Block> block;
  /// Forward value -> the placeholder standing for it until it is a slot.
  llvm::DenseMap<Value, Operation *> placeholders;
  /// The saved values in forward-body order, and the slot of each.
  SmallVector<std::pair<Value, unsigned>> saved;
};

/// The saved values of one kind in the order they are defined in its
/// forward body (arguments, then results op by op). Slots are numbered in
/// this order, not in the order the adjoint rules asked for the values:
/// that order follows the evaluation order of call arguments, which the C++
/// compilers choose differently, and the IR must not depend on it.
SmallVector<Value> inBodyOrder(Block &body,
                               const llvm::DenseMap<Value, Operation *> &vs) {
  SmallVector<Value> out;
  for (BlockArgument arg : body.getArguments())
    if (vs.count(arg))
      out.push_back(arg);
  for (Operation &op : body)
    for (Value r : op.getResults())
      if (vs.count(r))
        out.push_back(r);
  return out;
}

} // namespace

LogicalResult mlir::tfm::buildRepeatAdjoint(RepeatOp fwd, AdjointBuilder &ab) {
  Location loc = fwd.getLoc();
  MLIRContext *ctx = fwd.getContext();
  unsigned numCarried = fwd.getInits().size();
  unsigned numWeights = fwd.getWeights().size();
  unsigned numKinds = fwd.getKinds().size();
  SmallVector<DenseI64ArrayAttr> weightSets, stackedSets;
  for (unsigned j = 0; j < numWeights; ++j)
    weightSets.push_back(fwd.getWeightKindSet(j));
  // The weights that get a gradient: the backward scan's stacked outputs.
  SmallVector<unsigned> gradedWeights;
  SmallVector<DenseI64ArrayAttr> gradedWeightSets;
  for (unsigned j = 0; j < numWeights; ++j)
    if (ab.needsGrad(numCarried + j)) {
      gradedWeights.push_back(j);
      gradedWeightSets.push_back(weightSets[j]);
    }
  for (unsigned i = 0; i < fwd.getStackedResults().size(); ++i)
    stackedSets.push_back(fwd.getStackedKindSet(i));
  // Stacked outputs with a gradient (per-layer statistics a loss reads):
  // the backward scan reads layer i's slice of it as a stacked input, which
  // seeds the gradient of the value layer i yielded.
  SmallVector<unsigned> gradedStacked; // indices into the stacked outputs
  SmallVector<Value> stackedGrads;
  for (unsigned i = numCarried; i < fwd.getNumResults(); ++i)
    if (Value g = ab.resultGrad(i)) {
      gradedStacked.push_back(i - numCarried);
      stackedGrads.push_back(g);
    }

  // Carried gradients entering the backward scan (the last layer's output).
  SmallVector<Value> dhLast;
  for (unsigned i = 0; i < numCarried; ++i)
    dhLast.push_back(ab.resultGradOrZeros(i));

  // Saved slots: their types and the kinds that save into each.
  SmallVector<Type> slotTypes;
  SmallVector<SmallVector<int64_t>> slotKinds;
  SmallVector<KindBackward> kinds(numKinds);
  for (unsigned k = 0; k < numKinds; ++k) {
    Region &region = fwd.getKinds()[k];
    Block &fb = region.front();
    KindBackward &kb = kinds[k];
    kb.block = std::make_unique<Block>();
    Block *block = kb.block.get();
    // Carried gradients, then this kind's weight slices (as the forward
    // body's arguments), then the gradients of its graded stacked outputs.
    for (BlockArgument arg : fb.getArguments())
      block->addArgument(arg.getType(), loc);
    SmallVector<unsigned> stackedOfKind = fwd.getStackedOfKind(k);
    SmallVector<std::pair<Value, BlockArgument>> stackedGradArgs;
    for (unsigned i : gradedStacked) {
      auto pos = llvm::find(stackedOfKind, i);
      if (pos == stackedOfKind.end())
        continue;
      auto t = cast<RankedTensorType>(fwd.getStackedResults()[i].getType());
      Value yielded = fb.getTerminator()->getOperand(
          numCarried + (pos - stackedOfKind.begin()));
      stackedGradArgs.push_back(
          {yielded,
           block->addArgument(RankedTensorType::get(t.getShape().drop_front(),
                                                    t.getElementType()),
                              loc)});
    }
    // The block is detached (no region yet): give the builders the context.
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(block);
    // A forward value the rules read stands in as a placeholder until all
    // of this kind's rules have run; then it gets its slot.
    auto slotFor = [&](Value v) -> Value {
      Operation *&ph = kb.placeholders[v];
      if (!ph) {
        OpBuilder atStart(ctx);
        atStart.setInsertionPointToStart(block);
        ph = UnrealizedConversionCastOp::create(
            atStart, loc, TypeRange{v.getType()}, ValueRange{});
      }
      return ph->getResult(0);
    };
    auto primalOf = [&](Value v) -> Value {
      if (v.getParentRegion() != &region)
        return v; // defined above the repeat: available as is
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && arg.getArgNumber() >= numCarried)
        return block->getArgument(
            arg.getArgNumber()); // this layer's weight slice
      return slotFor(v); // the layer input or a value computed in the layer
    };

    BlockDifferentiator diff(b, primalOf,
                             [&](Value v) { return ab.isActive(v); });
    auto yield = cast<YieldOp>(fb.getTerminator());
    for (unsigned i = 0; i < numCarried; ++i)
      diff.accumulate(yield.getValues()[i], block->getArgument(i));
    for (auto [yielded, arg] : stackedGradArgs)
      diff.accumulate(yielded, arg);
    SmallVector<Operation *> ops;
    for (Operation &op : fb.without_terminator())
      ops.push_back(&op);
    if (failed(diff.run(ops)))
      return failure();
    // A value captured from above (read by an op or yielded as is) would
    // need its gradient summed over layers outside the scan.
    ops.push_back(yield);
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (operand.getParentRegion() != &region && diff.gradOf(operand))
          return op->emitError(
              "gradients of values captured by a tfm.repeat body are not "
              "supported; pass them as carried values");
    // Carried gradients, then the gradient of each of this kind's graded
    // weights.
    SmallVector<Value> outs;
    for (unsigned i = 0; i < fb.getNumArguments(); ++i) {
      // A weight slice is active exactly when its stacked weight is graded.
      if (i >= numCarried && !ab.isActive(fb.getArgument(i)))
        continue;
      Value g = diff.gradOf(fb.getArgument(i));
      outs.push_back(
          g ? g
            : ZerosLikeOp::create(b, loc, block->getArgument(i)).getResult());
    }
    YieldOp::create(b, loc, outs);
    // Work for gradients that were dropped (an inactive operand's), and the
    // forward values only it read: they are not saved.
    llvm::SmallPtrSet<Operation *, 8> erased;
    eraseDeadBackwardOps(*block, nullptr,
                         [&](Operation *dead) { erased.insert(dead); });
    SmallVector<Value> unread;
    for (auto [v, ph] : kb.placeholders)
      if (erased.contains(ph))
        unread.push_back(v);
    for (Value v : unread)
      kb.placeholders.erase(v);

    // Slots: the first one of the value's type this kind does not use yet.
    llvm::SmallDenseSet<unsigned> usedSlots;
    for (Value v : inBodyOrder(fb, kb.placeholders)) {
      unsigned s = 0;
      while (s < slotTypes.size() &&
             (slotTypes[s] != v.getType() || usedSlots.count(s)))
        ++s;
      if (s == slotTypes.size()) {
        slotTypes.push_back(v.getType());
        slotKinds.emplace_back();
      }
      usedSlots.insert(s);
      slotKinds[s].push_back(k);
      kb.saved.push_back({v, s});
    }
  }

  // A slot covers the kinds that save into it (slots are shared between
  // kinds by type, so kinds with the same structure save into the same
  // buffer); its leading dimension is the number of their layers.
  SmallVector<DenseI64ArrayAttr> slotSets;
  for (ArrayRef<int64_t> ks : slotKinds)
    slotSets.push_back(ks.size() == numKinds ? DenseI64ArrayAttr()
                                             : DenseI64ArrayAttr::get(ctx, ks));
  // Every backward body takes its kind's slots as stacked inputs, in slot
  // order.
  for (KindBackward &kb : kinds) {
    llvm::sort(kb.saved, llvm::less_second());
    for (auto [v, s] : kb.saved) {
      Operation *ph = kb.placeholders.lookup(v);
      BlockArgument arg = kb.block->addArgument(v.getType(), loc);
      ph->getResult(0).replaceAllUsesWith(arg);
      ph->erase();
    }
  }

  // The forward scan now also yields the saved slots.
  OpBuilder fb(fwd);
  SmallVector<Type> fwdTypes(fwd.getResultTypes());
  for (auto [type, set] : llvm::zip(slotTypes, slotSets))
    fwdTypes.push_back(prependLayers(type, fwd.getNumLayersOfKinds(set)));
  SmallVector<DenseI64ArrayAttr> fwdStackedSets(stackedSets);
  fwdStackedSets.append(slotSets.begin(), slotSets.end());
  auto newFwd = RepeatOp::create(fb, loc, fwdTypes, fwd.getInits(),
                                 fwd.getWeights(), fwd.getNumLayersAttr(),
                                 fwd.getScheduleAttr(), fwd.getKindNamesAttr(),
                                 fwd.getReverseAttr(), fwd.getWeightKindsAttr(),
                                 kindSetsAttr(ctx, fwdStackedSets, numKinds),
                                 fwd.getFirstLayerAttr(), numKinds);
  for (unsigned k = 0; k < numKinds; ++k) {
    Region &dst = newFwd.getKinds()[k];
    dst.takeBody(fwd.getKinds()[k]);
    auto yield = cast<YieldOp>(dst.front().getTerminator());
    SmallVector<Value> values(yield.getValues());
    for (auto [v, s] : kinds[k].saved) // sorted by slot above
      values.push_back(v);
    yield->setOperands(values);
  }

  // The backward scan: layers in the opposite order. Its stacked inputs are
  // the weights, the graded stacked outputs' gradients and the slots; its
  // stacked outputs the gradients of the graded weights.
  SmallVector<Value> stackedInputs;
  SmallVector<DenseI64ArrayAttr> inputSets(weightSets);
  for (unsigned j = 0; j < numWeights; ++j)
    stackedInputs.push_back(ab.operand(numCarried + j));
  stackedInputs.append(stackedGrads.begin(), stackedGrads.end());
  for (unsigned i : gradedStacked)
    inputSets.push_back(stackedSets[i]);
  for (Value s : newFwd.getResults().drop_front(fwd.getNumResults()))
    stackedInputs.push_back(s);
  inputSets.append(slotSets.begin(), slotSets.end());
  SmallVector<Type> bwdTypes;
  for (Value v : fwd.getInits())
    bwdTypes.push_back(v.getType());
  for (unsigned j : gradedWeights)
    bwdTypes.push_back(fwd.getWeights()[j].getType());
  UnitAttr reverse = fwd.getReverse() ? UnitAttr() : ab.builder.getUnitAttr();
  auto bwd = RepeatOp::create(ab.builder, loc, bwdTypes, dhLast, stackedInputs,
                              fwd.getNumLayersAttr(), fwd.getScheduleAttr(),
                              fwd.getKindNamesAttr(), reverse,
                              kindSetsAttr(ctx, inputSets, numKinds),
                              kindSetsAttr(ctx, gradedWeightSets, numKinds),
                              fwd.getFirstLayerAttr(), numKinds);
  for (unsigned k = 0; k < numKinds; ++k)
    bwd.getKinds()[k].push_back(kinds[k].block.release());
  for (unsigned i = 0; i < numCarried; ++i)
    ab.addGrad(i, bwd.getResult(i));
  for (auto [pos, j] : llvm::enumerate(gradedWeights))
    ab.addGrad(numCarried + j, bwd.getResult(numCarried + pos));

  for (unsigned i = 0; i < fwd.getNumResults(); ++i)
    fwd.getResult(i).replaceAllUsesWith(newFwd.getResult(i));
  fwd.erase();
  return success();
}
