//===- DeviceTensor.cpp - a tensor in the memory compiled code runs in ----===//

#include "tfm/Engine/DeviceTensor.h"
#include "tfm/Engine/CompiledFunction.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/BFloat16.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::tfm;

static size_t elementBytes(Type t) {
  return t.isIntOrFloat() ? (t.getIntOrFloatBitWidth() + 7) / 8 : 0;
}

int64_t DeviceTensor::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t DeviceTensor::getNumBytes() const {
  return size_t(getNumElements()) * elementBytes(elementType);
}

DeviceTensor DeviceTensor::upload(const void *data,
                                  llvm::ArrayRef<int64_t> shape,
                                  Type elementType, bool gpu) {
  DeviceTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.elementType = elementType;
  t.gpu = gpu;
  // At least one byte, so that an empty tensor still has storage.
  size_t bytes = std::max<size_t>(1, t.getNumBytes());
  void *p = gpu ? cuda::arenaAllocate(bytes) : std::malloc(bytes);
  if (!p)
    return DeviceTensor();
  if (data)
    std::memcpy(p, data, t.getNumBytes());
  t.storage = std::shared_ptr<char>(static_cast<char *>(p), [gpu](char *q) {
    gpu ? cuda::arenaFree(q) : std::free(q);
  });
  t.first = p;
  return t;
}

DeviceTensor DeviceTensor::adopt(std::shared_ptr<char> storage, void *data,
                                 llvm::ArrayRef<int64_t> shape,
                                 Type elementType, bool gpu) {
  DeviceTensor t;
  t.storage = std::move(storage);
  t.first = data;
  t.shape.assign(shape.begin(), shape.end());
  t.elementType = elementType;
  t.gpu = gpu;
  return t;
}

DeviceTensor DeviceTensor::rows(int64_t firstRow, int64_t rows) const {
  DeviceTensor t = *this;
  size_t rowBytes = shape[0] ? getNumBytes() / size_t(shape[0]) : 0;
  t.first = static_cast<char *>(first) + size_t(firstRow) * rowBytes;
  t.shape[0] = rows;
  return t;
}

HostArray DeviceTensor::toHost() const {
  HostArray out;
  out.shape = shape;
  int64_t n = getNumElements();
  // assign(first, last), not resize + memcpy: no zero-filling pass over
  // what is overwritten next (results of a step are ~150 MiB).
  if (elementType.isF64()) {
    auto *values = static_cast<const double *>(first);
    out.f64.assign(values, values + n);
  } else if (elementType.isBF16()) {
    out.f32.resize(n);
    auto *bits = static_cast<const uint16_t *>(first);
    for (int64_t i = 0; i < n; ++i)
      out.f32[i] = bf16BitsToFloat(bits[i]);
  } else {
    auto *values = static_cast<const float *>(first);
    out.f32.assign(values, values + n);
  }
  return out;
}
