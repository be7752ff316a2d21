//===- CpuMemrefCopy.cpp - the memref copy compiled CPU code calls --------===//
//
// Bufferization lowers copies of dynamically shaped memrefs to calls of
// `memrefCopy(elementSize, source, target)`. MLIR's runtime version copies
// one element per call to memcpy, about 1 GB/s: a training step's copies
// into its saved activations took a tenth of the step. This one copies the
// longest run both layouts store contiguously with one memmove per run.
//
//===----------------------------------------------------------------------===//

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <cstring>

extern "C" void tfm_rt_memref_copy(int64_t elementSize,
                                   UnrankedMemRefType<char> *source,
                                   UnrankedMemRefType<char> *target) {
  DynamicMemRefType<char> src(*source), dst(*target);
  int64_t rank = src.rank;
  for (int64_t d = 0; d < rank; ++d)
    if (src.sizes[d] == 0)
      return;
  char *from = src.data + src.offset * elementSize;
  char *to = dst.data + dst.offset * elementSize;
  // Innermost dimensions both sides store densely form one run.
  int64_t inner = rank, run = 1;
  while (inner > 0 && src.strides[inner - 1] == run &&
         dst.strides[inner - 1] == run) {
    run *= src.sizes[inner - 1];
    --inner;
  }
  size_t runBytes = size_t(run * elementSize);
  if (inner == 0) {
    std::memmove(to, from, runBytes);
    return;
  }
  // Odometer over the outer dimensions.
  llvm::SmallVector<int64_t, 8> index(inner, 0);
  int64_t srcAt = 0, dstAt = 0;
  while (true) {
    std::memmove(to + dstAt * elementSize, from + srcAt * elementSize,
                 runBytes);
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      srcAt += src.strides[d];
      dstAt += dst.strides[d];
      if (++index[d] < src.sizes[d])
        break;
      srcAt -= src.strides[d] * src.sizes[d];
      dstAt -= dst.strides[d] * dst.sizes[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
