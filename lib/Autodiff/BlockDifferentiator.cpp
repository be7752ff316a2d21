//===- BlockDifferentiator.cpp - reverse-mode over a list of ops ----------===//

#include "tfm/Autodiff/BlockDifferentiator.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Interfaces/DifferentiableOpInterface.h"

#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The AdjointBuilder one op's rule sees.
class OpAdjoint : public AdjointBuilder {
public:
  OpAdjoint(BlockDifferentiator &engine, Operation *op)
      : AdjointBuilder(engine.builder, op), engine(engine) {}
  Value primal(Value v) override { return engine.primal(v); }
  Value resultGrad(unsigned i) override {
    return engine.gradOf(op->getResult(i));
  }
  void addGrad(unsigned i, Value grad) override {
    if (grad && needsGrad(i))
      engine.accumulate(op->getOperand(i), grad);
  }
  bool needsGrad(unsigned i) override {
    Value v = op->getOperand(i);
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && isa<FloatType>(t.getElementType()) && engine.isActive(v);
  }
  bool isActive(Value v) override { return engine.isActive(v); }

private:
  BlockDifferentiator &engine;
};

} // namespace

void BlockDifferentiator::accumulate(Value v, Value grad) {
  auto [it, inserted] = grads.try_emplace(v, grad);
  if (!inserted)
    it->second = AddOp::create(builder, grad.getLoc(), it->second, grad);
}

LogicalResult BlockDifferentiator::run(ArrayRef<Operation *> ops) {
  for (Operation *op : llvm::reverse(ops)) {
    bool anyGrad = llvm::any_of(op->getResults(),
                                [&](Value r) { return bool(gradOf(r)); });
    // A constant passes its cotangent to nothing: every gradient through
    // it is zero.
    if (!anyGrad || op->hasTrait<OpTrait::ConstantLike>())
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitError()
             << "'" << op->getName()
             << "' has no adjoint rule (DifferentiableOpInterface), but "
                "gradients flow through it";
    OpAdjoint ab(*this, op);
    if (failed(differentiable.buildAdjoint(ab)))
      return failure();
  }
  return success();
}

void mlir::tfm::eraseDeadBackwardOps(
    Block &block, Operation *stop,
    llvm::function_ref<void(Operation *)> onErase) {
  // Users come after their operands: one pass from the end frees chains.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
    if (&op == stop)
      break;
    if (!isOpTriviallyDead(&op))
      continue;
    onErase(&op);
    op.erase();
  }
}
