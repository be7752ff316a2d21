//===- CudaArena.cpp - one managed-memory arena for every buffer ----------===//
//
// The compiled step allocates through _mlir_memref_to_llvm_(aligned_)alloc
// (finalize-memref-to-llvm{use-generic-functions}); here those come from one
// cuMemAllocManaged block made at start-up: no driver allocation per
// buffer, and one place that knows the step's peak memory.
//
// Managed rather than device memory because a few host instructions of the
// step touch buffers: 0-d scalars (the loss division) and the deallocation
// helper's pointer lists, which live in the same arena. The host touches
// them only after a synchronisation (every launch is followed by one).
//
// First fit over an address-ordered free list, coalescing on free, 256-byte
// granules (what cuBLASLt and vector loads want).
//
//===----------------------------------------------------------------------===//

#include "CudaInternal.h"
#include "tfm/Runtime/CudaRuntime.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

using namespace mlir::tfm::cuda::detail;

namespace {
constexpr size_t kGranule = 256;

struct Arena {
  char *base = nullptr;
  size_t size = 0;
  std::map<size_t, size_t> freeBlocks;          // offset -> size
  std::unordered_map<size_t, size_t> allocated; // offset -> size
  size_t inUse = 0, peak = 0;
  std::mutex mutex;

  void *allocate(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    bytes = std::max<size_t>(kGranule,
                             (bytes + kGranule - 1) / kGranule * kGranule);
    for (auto it = freeBlocks.begin(); it != freeBlocks.end(); ++it) {
      if (it->second < bytes)
        continue;
      size_t offset = it->first, remaining = it->second - bytes;
      freeBlocks.erase(it);
      if (remaining)
        freeBlocks[offset + bytes] = remaining;
      allocated[offset] = bytes;
      inUse += bytes;
      peak = std::max(peak, inUse);
      return base + offset;
    }
    // Compiled code cannot handle a null buffer (it would store through
    // it): stop here with the reason.
    llvm::reportFatalUsageError(llvm::Twine(
        llvm::formatv(
            "CUDA arena out of memory: {0} bytes requested, {1} of {2} in use "
            "(a smaller batch or sequence needs less)",
            bytes, inUse, size)
            .str()));
  }

  void release(void *ptr) {
    if (!ptr)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    size_t offset = static_cast<char *>(ptr) - base;
    auto it = allocated.find(offset);
    if (it == allocated.end()) {
      fail("free of a pointer the arena did not allocate");
      return;
    }
    size_t bytes = it->second;
    allocated.erase(it);
    inUse -= bytes;
    auto next = freeBlocks.lower_bound(offset);
    if (next != freeBlocks.end() && offset + bytes == next->first) {
      bytes += next->second;
      next = freeBlocks.erase(next);
    }
    if (next != freeBlocks.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        prev->second += bytes;
        return;
      }
    }
    freeBlocks[offset] = bytes;
  }
};

Arena &arena() {
  static Arena a;
  return a;
}
} // namespace

namespace mlir::tfm::cuda {
llvm::Error createArena(size_t bytes) {
  size_t freeBytes = 0, totalBytes = 0;
  if (!check(api().cuMemGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo"))
    return takeError();
  if (bytes == 0)
    bytes = freeBytes / 10 * 9;
  bytes = bytes / kGranule * kGranule;
  CUdeviceptr ptr = 0;
  if (!check(api().cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL),
             "cuMemAllocManaged (arena)"))
    return takeError();
  Arena &a = arena();
  a.base = reinterpret_cast<char *>(ptr);
  a.size = bytes;
  a.freeBlocks[0] = bytes;
  return llvm::Error::success();
}

void *arenaAllocate(size_t bytes) { return arena().allocate(bytes); }
void arenaFree(void *ptr) { arena().release(ptr); }
size_t arenaBytesInUse() { return arena().inUse; }
size_t arenaPeakBytes() { return arena().peak; }
} // namespace mlir::tfm::cuda

// The allocation ABI of finalize-memref-to-llvm{use-generic-functions=1}.
extern "C" void *tfm_cuda_memref_alloc(size_t bytes) {
  return mlir::tfm::cuda::arenaAllocate(bytes);
}
extern "C" void *tfm_cuda_memref_aligned_alloc(size_t alignment, size_t bytes) {
  if (alignment > kGranule)
    fail(llvm::formatv("alignment {0} above the arena's {1}", alignment,
                       kGranule));
  return mlir::tfm::cuda::arenaAllocate(bytes);
}
extern "C" void tfm_cuda_memref_free(void *ptr) {
  mlir::tfm::cuda::arenaFree(ptr);
}
