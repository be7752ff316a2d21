//===- BFloat16.cpp - bf16 <-> f32 conversion of host buffers -------------===//

#include "tfm/Support/BFloat16.h"

#include "mlir/ExecutionEngine/Float16bits.h"

#include <cstring>

using namespace mlir;

float tfm::bf16BitsToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

uint16_t tfm::floatToBF16Bits(float value) { return bf16(value).bits; }

std::vector<uint16_t> tfm::roundToBF16(llvm::ArrayRef<float> values) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = floatToBF16Bits(values[i]);
  return out;
}
