//===- BFloat16.h - bf16 <-> f32 conversion of host buffers -----*- C++ -*-===//
//
// The one place host code converts bf16: parameters passed to a bf16 step,
// bf16 results widened for the caller, bf16 checkpoint tensors. Rounding is
// to nearest even (MLIR's runtime `bf16`, mlir/ExecutionEngine/Float16bits.h).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_SUPPORT_BFLOAT16_H
#define TFM_SUPPORT_BFLOAT16_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mlir::tfm {

/// bf16 bits -> f32 (exact).
float bf16BitsToFloat(uint16_t bits);

/// f32 -> bf16 bits, round to nearest even; NaN stays NaN.
uint16_t floatToBF16Bits(float value);

/// `values` rounded to bf16.
std::vector<uint16_t> roundToBF16(llvm::ArrayRef<float> values);

} // namespace mlir::tfm

#endif // TFM_SUPPORT_BFLOAT16_H
