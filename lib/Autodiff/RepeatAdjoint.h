//===- RepeatAdjoint.h - the adjoint of tfm.repeat --------------*- C++ -*-===//

#ifndef TFM_LIB_AUTODIFF_REPEATADJOINT_H
#define TFM_LIB_AUTODIFF_REPEATADJOINT_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Interfaces/DifferentiableOpInterface.h"

namespace mlir::tfm {

/// Differentiates the layer bodies into a reverse tfm.repeat, and rewrites
/// the forward repeat to also output (stacked per layer) every forward value
/// the backward bodies read.
LogicalResult buildRepeatAdjoint(RepeatOp op, AdjointBuilder &ab);

} // namespace mlir::tfm

#endif // TFM_LIB_AUTODIFF_REPEATADJOINT_H
