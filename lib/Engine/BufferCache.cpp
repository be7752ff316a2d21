//===- BufferCache.cpp - large CPU buffers reused across steps ------------===//

#include "BufferCache.h"
#include "tfm/Runtime/HostAllocator.h"

#include <algorithm>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <mutex>

namespace {

/// Smaller buffers come from malloc's own free lists.
constexpr size_t kMinBytes = size_t(1) << 18;
/// What the cache may hold at most; beyond it buffers are freed.
constexpr size_t kMaxCachedBytes = size_t(8) << 30;

class Cache {
public:
  void *allocate(size_t bytes) {
    if (bytes < kMinBytes)
      return mallocOrRelease(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = cached.lower_bound(bytes);
      if (it != cached.end() && it->first <= bytes + bytes / 8) {
        void *buffer = it->second;
        cachedBytes -= it->first;
        cached.erase(it);
        addLive(buffer);
        return buffer;
      }
      // Live, cached and the new buffer together stay within the peak.
      size_t room =
          peakBytes > liveBytes + bytes ? peakBytes - liveBytes - bytes : 0;
      freeUntil(room);
    }
    void *buffer = mallocOrRelease(bytes);
    if (buffer) {
      std::lock_guard<std::mutex> lock(mutex);
      addLive(buffer);
    }
    return buffer;
  }

  void release(void *buffer, bool keep) {
    if (!buffer)
      return;
    size_t bytes = malloc_usable_size(buffer);
    if (bytes >= kMinBytes) {
      std::lock_guard<std::mutex> lock(mutex);
      liveBytes -= std::min(liveBytes, bytes);
      if (keep && cachedBytes + bytes <= kMaxCachedBytes) {
        cached.emplace(bytes, buffer);
        cachedBytes += bytes;
        return;
      }
    }
    std::free(buffer);
  }

private:
  /// Counts `buffer` as handed out. The caller holds the mutex.
  void addLive(void *buffer) {
    liveBytes += malloc_usable_size(buffer);
    peakBytes = std::max(peakBytes, liveBytes);
  }

  /// malloc, and if it fails, again after freeing every cached buffer.
  void *mallocOrRelease(size_t bytes) {
    if (void *buffer = std::malloc(bytes))
      return buffer;
    {
      std::lock_guard<std::mutex> lock(mutex);
      freeUntil(0);
    }
    return std::malloc(bytes);
  }

  /// Frees cached buffers until at most `bytes` are cached: first those
  /// malloc carves from its heap (largest first), which stay in the process
  /// and serve the next malloc of any size without page faults, then mapped
  /// ones (smallest first), whose pages a later malloc faults in and the
  /// kernel zeroes again. The caller holds the mutex.
  void freeUntil(size_t bytes) {
    while (cachedBytes > bytes && !cached.empty()) {
      auto mapped = cached.lower_bound(mlir::tfm::rt::kHeapBlockLimit);
      auto victim = mapped == cached.begin() ? mapped : std::prev(mapped);
      cachedBytes -= victim->first;
      std::free(victim->second);
      cached.erase(victim);
    }
  }

  std::mutex mutex;
  std::multimap<size_t, void *> cached; // by usable size
  size_t cachedBytes = 0;
  /// Large buffers handed out and not yet given back, and their most.
  size_t liveBytes = 0, peakBytes = 0;
};

Cache &cache() {
  static Cache *instance = new Cache; // outlives static destructors
  return *instance;
}

} // namespace

void *mlir::tfm::buffer_cache::allocate(size_t bytes) {
  return cache().allocate(bytes);
}

void mlir::tfm::buffer_cache::release(void *buffer) {
  cache().release(buffer, /*keep=*/true);
}

void mlir::tfm::buffer_cache::discard(void *buffer) {
  cache().release(buffer, /*keep=*/false);
}
