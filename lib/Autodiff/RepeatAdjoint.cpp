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
// structure (sliding vs full attention) save into the same buffers.
//
//===----------------------------------------------------------------------===//

#include "RepeatAdjoint.h"
#include "tfm/Autodiff/BlockDifferentiator.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

RankedTensorType prependLayers(Type t, int64_t layers) {
  auto r = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape{layers};
  shape.append(r.getShape().begin(), r.getShape().end());
  return RankedTensorType::get(shape, r.getElementType());
}

/// The backward body of one layer kind, before its saved slots are block
/// arguments.
struct KindBackward {
  std::unique_ptr<Block> block;
  /// Forward value -> slot, and the placeholder standing for the slot.
  llvm::MapVector<Value, unsigned> saved;
  llvm::DenseMap<unsigned, Operation *> placeholders;
};

} // namespace

LogicalResult mlir::tfm::buildRepeatAdjoint(RepeatOp fwd, AdjointBuilder &ab) {
  Location loc = fwd.getLoc();
  unsigned numCarried = fwd.getInits().size();
  unsigned numWeights = fwd.getWeights().size();
  unsigned numKinds = fwd.getKinds().size();
  int64_t numLayers = fwd.getNumLayers();
  // Stacked outputs with a gradient (per-layer statistics a loss reads):
  // the backward scan reads layer i's slice of it as a stacked input, which
  // seeds the gradient of the value layer i yielded.
  SmallVector<unsigned> gradedStacked;
  SmallVector<Value> stackedGrads;
  for (unsigned i = numCarried; i < fwd.getNumResults(); ++i)
    if (Value g = ab.resultGrad(i)) {
      gradedStacked.push_back(i);
      stackedGrads.push_back(g);
    }

  // Carried gradients entering the backward scan (the last layer's output).
  SmallVector<Value> dhLast;
  for (unsigned i = 0; i < numCarried; ++i)
    dhLast.push_back(ab.resultGradOrZeros(i));

  SmallVector<Type> slotTypes;
  SmallVector<KindBackward> kinds(numKinds);
  for (unsigned k = 0; k < numKinds; ++k) {
    Region &region = fwd.getKinds()[k];
    Block &fb = region.front();
    KindBackward &kb = kinds[k];
    kb.block = std::make_unique<Block>();
    Block *block = kb.block.get();
    for (unsigned i = 0; i < numCarried; ++i)
      block->addArgument(fb.getArgument(i).getType(), loc);
    for (unsigned j = 0; j < numWeights; ++j)
      block->addArgument(fb.getArgument(numCarried + j).getType(), loc);
    SmallVector<BlockArgument> stackedGradArgs;
    for (unsigned i : gradedStacked) {
      auto t = cast<RankedTensorType>(fwd.getResult(i).getType());
      stackedGradArgs.push_back(block->addArgument(
          RankedTensorType::get(t.getShape().drop_front(), t.getElementType()),
          loc));
    }
    // The block is detached (no region yet): give the builders the context.
    OpBuilder b(fwd.getContext());
    b.setInsertionPointToEnd(block);
    llvm::SmallDenseSet<unsigned> usedSlots;

    auto slotFor = [&](Value v) -> Value {
      auto [it, inserted] = kb.saved.try_emplace(v, 0);
      if (!inserted)
        return kb.placeholders[it->second]->getResult(0);
      unsigned s = 0;
      while (s < slotTypes.size() &&
             (slotTypes[s] != v.getType() || usedSlots.count(s)))
        ++s;
      if (s == slotTypes.size())
        slotTypes.push_back(v.getType());
      usedSlots.insert(s);
      it->second = s;
      OpBuilder atStart(fwd.getContext());
      atStart.setInsertionPointToStart(block);
      kb.placeholders[s] = UnrealizedConversionCastOp::create(
          atStart, loc, TypeRange{v.getType()}, ValueRange{});
      return kb.placeholders[s]->getResult(0);
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

    BlockDifferentiator diff(b, primalOf);
    auto yield = cast<YieldOp>(fb.getTerminator());
    for (unsigned i = 0; i < numCarried; ++i)
      diff.accumulate(yield.getValues()[i], block->getArgument(i));
    for (auto [i, arg] : llvm::zip(gradedStacked, stackedGradArgs))
      diff.accumulate(yield.getValues()[i], arg);
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
    SmallVector<Value> outs;
    for (unsigned i = 0; i < numCarried + numWeights; ++i) {
      Value g = diff.gradOf(fb.getArgument(i));
      outs.push_back(
          g ? g
            : ZerosLikeOp::create(b, loc, block->getArgument(i)).getResult());
    }
    YieldOp::create(b, loc, outs);
  }

  // Every backward body takes all slots as stacked inputs, in slot order.
  for (KindBackward &kb : kinds) {
    for (auto [s, type] : llvm::enumerate(slotTypes)) {
      BlockArgument arg = kb.block->addArgument(type, loc);
      if (Operation *ph = kb.placeholders.lookup(s)) {
        ph->getResult(0).replaceAllUsesWith(arg);
        ph->erase();
      }
    }
  }

  // The forward scan now also yields the saved slots.
  OpBuilder fb(fwd);
  SmallVector<Type> fwdTypes(fwd.getResultTypes());
  for (Type t : slotTypes)
    fwdTypes.push_back(prependLayers(t, numLayers));
  auto newFwd =
      RepeatOp::create(fb, loc, fwdTypes, fwd.getInits(), fwd.getWeights(),
                       fwd.getNumLayersAttr(), fwd.getScheduleAttr(),
                       fwd.getKindNamesAttr(), fwd.getReverseAttr(), numKinds);
  for (unsigned k = 0; k < numKinds; ++k) {
    Region &dst = newFwd.getKinds()[k];
    dst.takeBody(fwd.getKinds()[k]);
    Block &body = dst.front();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> values(yield.getValues());
    DenseMap<unsigned, Value> bySlot;
    for (auto [v, s] : kinds[k].saved)
      bySlot[s] = v;
    OpBuilder yb(yield);
    for (auto [s, type] : llvm::enumerate(slotTypes)) {
      Value v = bySlot.lookup(s);
      if (!v) {
        // A slot only other kinds use: yield any value of its type (never
        // read back for this kind's layers).
        for (Value cand : body.getArguments())
          if (!v && cand.getType() == type)
            v = cand;
        for (Operation &op : body.without_terminator())
          for (Value cand : op.getResults())
            if (!v && cand.getType() == type)
              v = cand;
      }
      if (!v) {
        // Size a placeholder from a carried value with as many dynamic
        // (batch, sequence) dimensions, in order.
        auto t = cast<RankedTensorType>(type);
        Value source;
        for (Value arg : body.getArguments().take_front(numCarried))
          if (!source &&
              cast<RankedTensorType>(arg.getType()).getNumDynamicDims() >=
                  t.getNumDynamicDims())
            source = arg;
        if (!source)
          return fwd.emitError()
                 << "cannot size a placeholder for saved slot " << type;
        auto st = cast<RankedTensorType>(source.getType());
        SmallVector<Value> dyn;
        for (int64_t d = 0, c = 0; d < t.getRank(); ++d) {
          if (!t.isDynamicDim(d))
            continue;
          while (!st.isDynamicDim(c))
            ++c;
          dyn.push_back(tensor::DimOp::create(yb, loc, source, c++));
        }
        v = tensor::EmptyOp::create(yb, loc, t, dyn);
      }
      values.push_back(v);
    }
    yield->setOperands(values);
  }

  // The backward scan: layers in the opposite order.
  SmallVector<Value> stackedInputs;
  for (unsigned j = 0; j < numWeights; ++j)
    stackedInputs.push_back(ab.operand(numCarried + j));
  stackedInputs.append(stackedGrads.begin(), stackedGrads.end());
  for (Value s : newFwd.getResults().drop_front(fwd.getNumResults()))
    stackedInputs.push_back(s);
  SmallVector<Type> bwdTypes;
  for (Value v : fwd.getInits())
    bwdTypes.push_back(v.getType());
  for (Value w : fwd.getWeights())
    bwdTypes.push_back(w.getType());
  UnitAttr reverse = fwd.getReverse() ? UnitAttr() : ab.builder.getUnitAttr();
  auto bwd = RepeatOp::create(ab.builder, loc, bwdTypes, dhLast, stackedInputs,
                              fwd.getNumLayersAttr(), fwd.getScheduleAttr(),
                              fwd.getKindNamesAttr(), reverse, numKinds);
  for (unsigned k = 0; k < numKinds; ++k)
    bwd.getKinds()[k].push_back(kinds[k].block.release());
  for (unsigned i = 0; i < numCarried + numWeights; ++i)
    ab.addGrad(i, bwd.getResult(i));

  for (unsigned i = 0; i < fwd.getNumResults(); ++i)
    fwd.getResult(i).replaceAllUsesWith(newFwd.getResult(i));
  fwd.erase();
  return success();
}
