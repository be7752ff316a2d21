//===- TfmOptimizerOps.cpp - verifiers of the optimizer step ops ----------===//
//
// The update ops (TfmOptimizerOps.td) work on one parameter: its gradient and
// state have its shape (static: parameters have no batch or sequence), the
// state is f32, and the hyperparameters are in the ranges torch accepts.
// Every message has an expected-error test in
// test/Dialect/Tfm/optimizer-invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "TfmVerifyUtils.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

/// `grad` and each state tensor have the parameter's (static) shape; state
/// is f32.
static LogicalResult checkParameterState(Operation *op, Value param, Value grad,
                                         ValueRange state,
                                         ArrayRef<StringRef> stateNames) {
  RankedTensorType pt = rankedOf(param);
  if (!pt.hasStaticShape())
    return op->emitOpError() << "param must have a static shape, got " << pt;
  if (failed(checkShape(op, "grad", grad.getType(), pt.getShape())))
    return failure();
  Type f32 = Float32Type::get(op->getContext());
  for (auto [v, name] : llvm::zip(state, stateNames))
    if (failed(checkShape(op, name, v.getType(), pt.getShape())) ||
        failed(checkElementType(op, name, v.getType(), f32)))
      return failure();
  return success();
}

/// `value` finite and in [lo, hi) (hi included with `closedHi`); `range`
/// spells it for the message.
static LogicalResult checkRange(Operation *op, StringRef what, double value,
                                double lo, double hi, StringRef range,
                                bool closedHi = false) {
  bool ok = std::isfinite(value) && value >= lo &&
            (closedHi ? value <= hi : value < hi);
  if (ok)
    return success();
  return op->emitOpError() << what << " must be in " << range << ", got "
                           << value;
}

LogicalResult GlobalGradNormOp::verify() {
  double maxNorm = getMaxNorm().convertToDouble();
  if (!std::isfinite(maxNorm) || maxNorm < 0)
    return emitOpError() << "max_norm must be finite and not negative (0: no "
                            "clipping), got "
                         << maxNorm;
  return success();
}

LogicalResult AdamwUpdateOp::verify() {
  if (failed(checkParameterState(*this, getParam(), getGrad(),
                                 {getExpAvg(), getExpAvgSq()},
                                 {"exp_avg", "exp_avg_sq"})))
    return failure();
  if (failed(checkRange(*this, "beta1", getBeta1().convertToDouble(), 0, 1,
                        "[0, 1)")) ||
      failed(checkRange(*this, "beta2", getBeta2().convertToDouble(), 0, 1,
                        "[0, 1)")) ||
      failed(checkPositive(*this, "eps", getEps().convertToDouble())) ||
      failed(checkRange(*this, "weight_decay",
                        getWeightDecay().convertToDouble(), 0, INFINITY,
                        "[0, inf)")))
    return failure();
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  if (failed(checkParameterState(*this, getParam(), getGrad(),
                                 {getMomentumBuffer()}, {"momentum_buffer"})))
    return failure();
  double momentum = getMomentum().convertToDouble(),
         dampening = getDampening().convertToDouble();
  if (failed(
          checkRange(*this, "momentum", momentum, 0, INFINITY, "[0, inf)")) ||
      failed(checkRange(*this, "dampening", dampening, 0, 1, "[0, 1]",
                        /*closedHi=*/true)) ||
      failed(checkRange(*this, "weight_decay",
                        getWeightDecay().convertToDouble(), 0, INFINITY,
                        "[0, inf)")))
    return failure();
  // torch.optim.SGD: "Nesterov momentum requires a momentum and zero
  // dampening".
  if (getNesterov() && (momentum <= 0 || dampening != 0))
    return emitOpError("nesterov needs momentum > 0 and dampening 0 (as "
                       "torch.optim.SGD)");
  return success();
}
