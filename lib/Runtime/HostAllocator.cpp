//===- HostAllocator.cpp - malloc settings for repeated steps -------------===//

#include "tfm/Runtime/HostAllocator.h"

#include <cstdlib>
#include <cstring>
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace {

/// Whether the user chose malloc's thresholds themselves.
bool userTunedMalloc() {
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  return (tunables && std::strstr(tunables, "glibc.malloc.")) ||
         std::getenv("MALLOC_MMAP_THRESHOLD_") ||
         std::getenv("MALLOC_TRIM_THRESHOLD_");
}

} // namespace

bool mlir::tfm::rt::keepFreedHostMemory() {
#ifdef __GLIBC__
  if (userTunedMalloc())
    return false;
  // Setting either threshold turns off glibc's dynamic adjustment of both,
  // so both are set.
  return mallopt(M_MMAP_THRESHOLD, int(kHeapBlockLimit)) == 1 &&
         mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
#else
  return false;
#endif
}
