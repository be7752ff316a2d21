//===- AllocationGuard.h - allocation failure in JIT'd code as an error ---===//
//
// The CPU code's buffers come from malloc (memref.alloc lowered by
// convert-to-llvm). A malloc that fails would hand generated code a null
// pointer, which it writes through: a segfault with no hint that the step
// simply needed more memory. The JIT resolves the code's malloc and free to
// the functions here instead; inside runGuarded() a failed allocation
// leaves the generated code (longjmp: its frames hold no destructors), frees
// what the call allocated so far and becomes an error naming the size.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_ENGINE_ALLOCATIONGUARD_H
#define TFM_LIB_ENGINE_ALLOCATIONGUARD_H

#include "llvm/Support/Error.h"

#include <cstddef>

extern "C" {
/// What the JIT binds `malloc` and `free` of CPU code to (large buffers
/// through BufferCache.h). Results the code returns are freed with
/// tfm_rt_guarded_free too, so that the next step reuses them.
void *tfm_rt_guarded_malloc(size_t bytes);
void tfm_rt_guarded_free(void *pointer);
}

namespace mlir::tfm {

/// Calls `fn(args)` (a packed JIT entry). A failed allocation inside it is
/// an error: "the step needs N more bytes (allocating them failed, with M
/// already allocated by this call)". Buffers the call returns stay with the
/// caller.
llvm::Error runGuarded(void (*fn)(void **), void **args);

} // namespace mlir::tfm

#endif // TFM_LIB_ENGINE_ALLOCATIONGUARD_H
