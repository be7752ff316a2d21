//===- DeviceTensor.h - a tensor in the memory compiled code runs in -*- C++
//-*-===//
//
// Host memory for the CPU (what the compiled code mallocs), the CUDA arena
// for CUDA (managed memory, which the host reads after a synchronisation;
// every CompiledFunction run ends with one). A training loop keeps its
// parameters, gradients and optimizer state as DeviceTensors, so they stay
// where the step reads them across updates instead of being copied in and
// out of every call. Copies share the storage; the last one frees it.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_DEVICETENSOR_H
#define TFM_ENGINE_DEVICETENSOR_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <vector>

namespace mlir::tfm {

struct HostArray;

class DeviceTensor {
public:
  DeviceTensor() = default;
  /// New storage (on the CUDA arena when `gpu`) holding a copy of `data`, a
  /// row-major `shape` of `elementType`.
  static DeviceTensor upload(const void *data, llvm::ArrayRef<int64_t> shape,
                             Type elementType, bool gpu);
  /// Takes ownership of what compiled code returned: `storage` frees the
  /// allocation; `data` is the first element, row-major contiguous.
  static DeviceTensor adopt(std::shared_ptr<char> storage, void *data,
                            llvm::ArrayRef<int64_t> shape, Type elementType,
                            bool gpu);

  /// Rows [firstRow, firstRow + rows) of this tensor (dim 0), sharing its
  /// storage.
  DeviceTensor rows(int64_t firstRow, int64_t rows) const;

  explicit operator bool() const { return bool(storage); }
  void *data() const { return first; }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  Type getElementType() const { return elementType; }
  int64_t getNumElements() const;
  size_t getNumBytes() const;
  bool onGpu() const { return gpu; }
  /// The values as a host array (f32, bf16 widened; f64 as f64).
  HostArray toHost() const;

private:
  std::shared_ptr<char> storage;
  void *first = nullptr;
  std::vector<int64_t> shape;
  Type elementType;
  bool gpu = false;
};

} // namespace mlir::tfm

#endif // TFM_ENGINE_DEVICETENSOR_H
