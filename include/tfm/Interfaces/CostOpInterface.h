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
///
/// One kind of value has a sequence-position dimension that is not T: the
/// per-chunk states of the chunked scans ([B, NC, ...], NC = ceil(T /
/// chunk_size)). Their type cannot tell, so the Value overloads trace a
/// value to the scan that made it (through tfm.repeat's stacked outputs and
/// block arguments); the Type overloads treat every such dimension as T.
class DimResolver {
public:
  DimResolver(int64_t batch, int64_t seq, int64_t topK = 1)
      : batch(batch), seq(seq), topK(topK) {}
  /// Size of dimension `d` of shaped type `t`.
  int64_t dim(Type t, unsigned d) const { return dim(t, d, 0); }
  int64_t dim(Value v, unsigned d) const;
  /// Number of elements and bytes of a value of type `t`.
  double elements(Type t) const { return elements(t, 0); }
  double bytes(Type t) const { return bytes(t, 0); }
  double elements(Value v) const;
  double bytes(Value v) const;
  int64_t batch, seq, topK;

private:
  /// With `chunk` > 0, the sequence dimension counts chunks of that size.
  int64_t dim(Type t, unsigned d, int64_t chunk) const;
  double elements(Type t, int64_t chunk) const;
  double bytes(Type t, int64_t chunk) const;
};

/// The chunk size when `v` holds per-chunk states of a chunked scan
/// (tfm.mamba_ssd_scan, tfm.gated_delta_rule), directly or stacked by
/// tfm.repeat; 0 otherwise.
int64_t stateChunkSizeOf(Value v);

} // namespace mlir::tfm

#include "tfm/Interfaces/CostOpInterface.h.inc"

#endif // TFM_INTERFACES_COSTOPINTERFACE_H
