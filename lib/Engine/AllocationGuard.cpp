//===- AllocationGuard.cpp - allocation failure in JIT'd code as an error -===//

#include "AllocationGuard.h"
#include "tfm/Support/Error.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <csetjmp>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <mutex>
#include <unordered_map>

namespace {
/// The state of one guarded call on this thread.
struct Guard {
  std::jmp_buf resume;
  size_t failedBytes = 0;
  size_t liveBytes = 0;
  /// What the call allocated and has not freed: freed if it is abandoned.
  std::unordered_map<void *, size_t> live;
};
thread_local Guard *active = nullptr;

/// Large buffers the generated code freed, kept for the next step. A step
/// allocates the same sizes every time; without this, each large buffer is
/// a fresh mmap whose pages fault in on first touch and are zeroed by the
/// kernel (about a tenth of a CPU training step's time).
class BlockCache {
public:
  /// Smaller blocks come from malloc's own free lists.
  static constexpr size_t kMinBytes = size_t(1) << 18;
  /// What the cache may hold; beyond it blocks are really freed.
  static constexpr size_t kMaxCachedBytes = size_t(8) << 30;

  /// A cached block of at least `bytes` and at most 1/8 more, or null.
  void *take(size_t bytes) {
    if (bytes < kMinBytes)
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = blocks.lower_bound(bytes);
    if (it == blocks.end() || it->first > bytes + bytes / 8)
      return nullptr;
    void *p = it->second;
    cachedBytes -= it->first;
    blocks.erase(it);
    return p;
  }

  /// Keeps `p` for reuse; false if it is small or the cache is full.
  bool keep(void *p) {
    size_t bytes = malloc_usable_size(p);
    if (bytes < kMinBytes)
      return false;
    std::lock_guard<std::mutex> lock(mutex);
    if (cachedBytes + bytes > kMaxCachedBytes)
      return false;
    blocks.emplace(bytes, p);
    cachedBytes += bytes;
    return true;
  }

  /// Frees every cached block (before giving up on an allocation).
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[bytes, p] : blocks)
      std::free(p);
    blocks.clear();
    cachedBytes = 0;
  }

private:
  std::mutex mutex;
  std::multimap<size_t, void *> blocks; // by usable size
  size_t cachedBytes = 0;
};

BlockCache &blockCache() {
  static BlockCache *cache = new BlockCache; // outlives static destructors
  return *cache;
}

void *allocate(size_t bytes) {
  if (void *p = blockCache().take(bytes))
    return p;
  if (void *p = std::malloc(bytes))
    return p;
  blockCache().release();
  return std::malloc(bytes);
}
} // namespace

extern "C" void *tfm_rt_guarded_malloc(size_t bytes) {
  void *p = allocate(bytes);
  Guard *guard = active;
  if (!guard)
    return p;
  if (!p && bytes) {
    guard->failedBytes = bytes;
    std::longjmp(guard->resume, 1);
  }
  guard->live[p] = bytes;
  guard->liveBytes += bytes;
  return p;
}

extern "C" void tfm_rt_guarded_free(void *pointer) {
  if (Guard *guard = active) {
    auto it = guard->live.find(pointer);
    if (it != guard->live.end()) {
      guard->liveBytes -= it->second;
      guard->live.erase(it);
    }
  }
  if (pointer && blockCache().keep(pointer))
    return;
  std::free(pointer);
}

static std::string formatBytes(size_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= (size_t(1) << 30))
    os << llvm::format("%.1f GiB", double(bytes) / double(size_t(1) << 30));
  else
    os << llvm::format("%.1f MiB", double(bytes) / double(size_t(1) << 20));
  return text;
}

llvm::Error mlir::tfm::runGuarded(void (*fn)(void **), void **args) {
  // Written only through `active` after setjmp, so longjmp cannot leave it
  // stale in a register.
  Guard guard;
  Guard *outer = active;
  active = &guard;
  if (setjmp(guard.resume) == 0) {
    fn(args);
    active = outer;
    return llvm::Error::success();
  }
  active = outer;
  for (auto &[pointer, bytes] : guard.live)
    std::free(pointer);
  return makeError(
      "out of memory: the step needs " + formatBytes(guard.failedBytes) +
      " more (one buffer of " + llvm::Twine(guard.failedBytes) +
      " bytes; allocating it failed with " + formatBytes(guard.liveBytes) +
      " already allocated by the step)");
}
