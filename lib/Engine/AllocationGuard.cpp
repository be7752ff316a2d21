//===- AllocationGuard.cpp - allocation failure in JIT'd code as an error -===//

#include "AllocationGuard.h"
#include "BufferCache.h"
#include "tfm/Support/Error.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <csetjmp>
#include <cstdlib>
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

} // namespace

extern "C" void *tfm_rt_guarded_malloc(size_t bytes) {
  void *p = mlir::tfm::buffer_cache::allocate(bytes);
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
  mlir::tfm::buffer_cache::release(pointer);
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
    mlir::tfm::buffer_cache::discard(pointer);
  return makeError(
      "out of memory: the step needs " + formatBytes(guard.failedBytes) +
      " more (one buffer of " + llvm::Twine(guard.failedBytes) +
      " bytes; allocating it failed with " + formatBytes(guard.liveBytes) +
      " already allocated by the step)");
}
