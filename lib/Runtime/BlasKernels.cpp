//===- BlasKernels.cpp - choose OpenBLAS's kernels for this CPU -----------===//
//
// OpenBLAS resolves `gotoblas`, its table of kernels, in a constructor that
// runs when the library is loaded (it comes with the process: CBC's LAPACK
// links it too), so setting OPENBLAS_CORETYPE in main() is too late. Its
// dynamic initialiser does re-resolve when the table is cleared, honouring
// OPENBLAS_CORETYPE, which is what OPENBLAS_CORETYPE=SkylakeX at start-up
// would have done. Both symbols are looked up at run time: a BLAS without
// them is left alone.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/BlasKernels.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <cblas.h>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace mlir::tfm::rt {
namespace {

/// The generic kernels OpenBLAS's x86-64 DYNAMIC_ARCH build falls back to.
constexpr const char *kFallbackCore = "Prescott";

/// The newest OpenBLAS x86-64 kernels the host's instruction set runs, or
/// null when none is better than the fallback.
const char *bestCoreForHost() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char *feature) { return features.lookup(feature); };
  // OpenBLAS's SkylakeX kernels use AVX-512 F/CD/BW/DQ/VL.
  if (has("avx512f") && has("avx512cd") && has("avx512bw") && has("avx512dq") &&
      has("avx512vl"))
    return "SkylakeX";
  if (has("avx2") && has("fma"))
    return "Haswell";
  return nullptr;
}

std::string select() {
  std::string current = openblas_get_corename();
  if (std::getenv("OPENBLAS_CORETYPE") || current != kFallbackCore)
    return current;
  const char *best = bestCoreForHost();
  auto **table = reinterpret_cast<void **>(dlsym(RTLD_DEFAULT, "gotoblas"));
  auto *reinit = reinterpret_cast<void (*)()>(
      dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  if (!best || !table || !reinit)
    return current;
  void *fallback = *table;
  // The initialiser keeps a table it already has and reads the choice from
  // the environment; the variable is removed again so that children of this
  // process detect for themselves.
  setenv("OPENBLAS_CORETYPE", best, /*overwrite=*/0);
  *table = nullptr;
  reinit();
  unsetenv("OPENBLAS_CORETYPE");
  if (!*table)
    *table = fallback;
  return openblas_get_corename();
}

} // namespace

std::string selectBlasKernels() {
  static std::once_flag once;
  static std::string chosen;
  std::call_once(once, [] { chosen = select(); });
  return chosen;
}

} // namespace mlir::tfm::rt
