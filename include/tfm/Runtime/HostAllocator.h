//===- HostAllocator.h - malloc settings for repeated steps -----*- C++ -*-===//
//
// glibc's malloc maps every block above its mmap threshold (128 KiB at first,
// raised only by frees of mapped blocks, to 32 MiB at most) with its own
// mmap and unmaps it on free, and returns the heap's free top to the kernel
// beyond its trim threshold. A training step allocates and frees the same
// few hundred MiB every step (results copied to the host, buffers below the
// buffer cache's minimum), so each step faulted in and zeroed them afresh:
// about 380 MiB of page faults per step of the bench model, 5% of its time.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_HOSTALLOCATOR_H
#define TFM_RUNTIME_HOSTALLOCATOR_H

#include <cstddef>

namespace mlir::tfm::rt {

/// Blocks up to this size come from malloc's heap rather than their own
/// mapping (glibc's largest mmap threshold).
constexpr size_t kHeapBlockLimit = size_t(32) << 20;

/// Keeps freed memory in the process for the next step: blocks up to
/// kHeapBlockLimit come from the heap, and the heap is not trimmed below
/// 1 GiB of free top. Meant for a tool's main, which owns the process's
/// allocator: a library embedded in another program leaves it alone. Does
/// nothing when the user tuned malloc (GLIBC_TUNABLES naming malloc, or
/// MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ set) or with another C
/// library. Returns whether the settings were applied.
bool keepFreedHostMemory();

} // namespace mlir::tfm::rt

#endif // TFM_RUNTIME_HOSTALLOCATOR_H
