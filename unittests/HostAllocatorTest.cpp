//===- HostAllocatorTest.cpp - freed memory kept for the next step --------===//
//
// After keepFreedHostMemory(), blocks up to kHeapBlockLimit come from
// malloc's heap instead of a mapping of their own (glibc's mallinfo2 counts
// mapped bytes in hblkhd), and larger ones are still mapped.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/HostAllocator.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace mlir::tfm;

#ifdef __GLIBC__
namespace {

/// Bytes malloc holds in mappings of their own while a block of `bytes` is
/// allocated, minus those it holds without it.
size_t mappedBytesOf(size_t bytes) {
  size_t before = mallinfo2().hblkhd;
  // volatile: the compiler may not elide the allocation.
  void *volatile block = std::malloc(bytes);
  std::memset(block, 1, bytes);
  size_t during = mallinfo2().hblkhd;
  std::free(block);
  return during - before;
}

} // namespace

TEST(HostAllocatorTest, StepSizedBlocksComeFromTheHeap) {
  if (!rt::keepFreedHostMemory())
    GTEST_SKIP() << "the user tuned malloc (GLIBC_TUNABLES, MALLOC_*_)";
  // 256 KiB and 4 MiB are mapped under glibc's initial 128 KiB threshold.
  EXPECT_EQ(mappedBytesOf(size_t(256) << 10), 0u);
  EXPECT_EQ(mappedBytesOf(size_t(4) << 20), 0u);
  EXPECT_EQ(mappedBytesOf(rt::kHeapBlockLimit - 4096), 0u);
  // Above the limit blocks are still mapped: the measure sees mappings.
  EXPECT_GE(mappedBytesOf(size_t(64) << 20), size_t(64) << 20);
}
#endif
