//===- GpuKernelUtils.h - pieces shared by the kernel-forming passes -----===//
//
// Shared by the kernel-forming passes (lib/Conversion/TfmToGPU,
// lib/GPU/Transforms): the row launch used by the warp-per-row
// reductions and the flash-attention kernels, and mixed-radix index
// decoding used by every kernel that flattens an iteration space.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_GPU_GPUKERNELUTILS_H
#define TFM_GPU_GPUKERNELUTILS_H

#include "mlir/IR/Builders.h"

namespace mlir::tfm::gpukernel {

/// The digits of `index` in the mixed radix `sizes`, last dimension fastest
/// (sizes[0] bounds the leading digit and is not read).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value index,
                               ArrayRef<Value> sizes);

/// A thread of a row launch.
struct RowThread {
  /// The row, clamped to 0 when out of range: every lane of a warp must
  /// reach its shuffles, so out-of-range rows compute row 0 and store
  /// nothing.
  Value row;
  /// The thread's lane in its row, and the number of lanes (an index).
  Value lane, lanes;
  /// Whether the row is in range.
  Value active;
};

/// `scf.if rows > 0 { gpu.launch }` with `lanes` threads per row and
/// `rowsPerBlock` rows per block; `body` is built inside the launch.
void launchRows(OpBuilder &b, Location loc, Value rows, int64_t lanes,
                int64_t rowsPerBlock,
                function_ref<void(const RowThread &)> body);

} // namespace mlir::tfm::gpukernel

#endif // TFM_GPU_GPUKERNELUTILS_H
