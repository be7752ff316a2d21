//===- BlockDifferentiator.cpp - reverse-mode over a list of ops ----------===//

#include "tfm/Autodiff/BlockDifferentiator.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Interfaces/DifferentiableOpInterface.h"

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
    auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
    return t && isa<FloatType>(t.getElementType());
  }

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
