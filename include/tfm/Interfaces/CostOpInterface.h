//===- CostOpInterface.h - FLOPs and bytes of an op -------------*- C++ -*-===//

#ifndef TFM_INTERFACES_COSTOPINTERFACE_H
#define TFM_INTERFACES_COSTOPINTERFACE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include <functional>

namespace mlir::tfm {

/// Floating-point operations and memory traffic of one op execution.
struct OpCost {
  double flops = 0;
  double bytesRead = 0;
  double bytesWritten = 0;
  OpCost &operator+=(const OpCost &o) {
    flops += o.flops;
    bytesRead += o.bytesRead;
    bytesWritten += o.bytesWritten;
    return *this;
  }
  OpCost scaled(double n) const {
    return {flops * n, bytesRead * n, bytesWritten * n};
  }
};

/// Concrete sizes for dynamic dimensions. tfm's dynamic dimensions are, in
/// order of appearance in a type, batch then sequence ([B, T, ...],
/// [B, H, T], [L, B, T, ...]), so a resolver needs only those two numbers,
/// and the top-k of MoE layers: the one dynamic dimension of the
/// expert-grouped rows ([R], [R, H]) is R = batch * seq * topK.
class DimResolver {
public:
  DimResolver(int64_t batch, int64_t seq, int64_t topK = 1)
      : batch(batch), seq(seq), topK(topK) {}
  /// Size of dimension `d` of shaped type `t`.
  int64_t dim(Type t, unsigned d) const;
  int64_t dim(Value v, unsigned d) const { return dim(v.getType(), d); }
  /// Number of elements and bytes of a value of type `t`.
  double elements(Type t) const;
  double bytes(Type t) const;
  double elements(Value v) const { return elements(v.getType()); }
  double bytes(Value v) const { return bytes(v.getType()); }
  int64_t batch, seq, topK;
};

} // namespace mlir::tfm

#include "tfm/Interfaces/CostOpInterface.h.inc"

#endif // TFM_INTERFACES_COSTOPINTERFACE_H
