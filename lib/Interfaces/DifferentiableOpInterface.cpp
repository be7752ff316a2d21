//===- DifferentiableOpInterface.cpp - reverse-mode rules -----------------===//

#include "tfm/Interfaces/DifferentiableOpInterface.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;

Value AdjointBuilder::resultGradOrZeros(unsigned i) {
  if (Value g = resultGrad(i))
    return g;
  return ZerosLikeOp::create(builder, getLoc(), primal(op->getResult(i)));
}

#include "tfm/Interfaces/DifferentiableOpInterface.cpp.inc"
