//===- BufferCache.h - large CPU buffers reused across steps ----*- C++ -*-===//
//
// A training step allocates the same large buffers every time it runs.
// From malloc each is a fresh mmap whose pages fault in on first touch and
// are zeroed by the kernel: about a tenth of a CPU training step. Buffers
// the step (or its caller, for results) frees are kept here and handed out
// again for the same size. A miss first frees cached buffers as far as
// needed to keep everything held (live and cached) within the largest live
// total seen so far, so the cache never raises a step's peak. It frees the
// buffers malloc took from its heap first: they stay in the process for
// any later malloc, while a freed mapping is faulted in afresh. Evicting
// the largest first, as it once did, unmapped a training step's biggest
// saved activations on every small miss: 48k page faults per update of the
// bench model in tfm-train.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_ENGINE_BUFFERCACHE_H
#define TFM_LIB_ENGINE_BUFFERCACHE_H

#include <cstddef>

namespace mlir::tfm::buffer_cache {

/// A buffer of at least `bytes` (malloc's alignment), or null if even after
/// freeing every cached buffer malloc has none.
void *allocate(size_t bytes);

/// Gives back a buffer from allocate(): kept for reuse or freed.
void release(void *buffer);

/// Frees a buffer from allocate() without keeping it (an abandoned step's).
void discard(void *buffer);

} // namespace mlir::tfm::buffer_cache

#endif // TFM_LIB_ENGINE_BUFFERCACHE_H
