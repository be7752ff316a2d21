//===- NoCuda.cpp - the CUDA runtime of a build without CUDA headers ------===//
//
// Built instead of the real runtime when cuda.h / cublasLt.h were not found:
// everything links, and initialize() says why there is no GPU support.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/Error.h"

using namespace mlir::tfm;

bool cuda::builtWithCuda() { return false; }
llvm::Error cuda::initialize(int, size_t) {
  return makeError("this tfm was built without the CUDA toolkit headers "
                   "(cuda.h, cublasLt.h); rebuild with CUDAToolkit_ROOT set");
}
std::string cuda::deviceDescription() { return "none"; }
std::string cuda::deviceChip() { return ""; }
void *cuda::arenaAllocate(size_t) { return nullptr; }
void cuda::arenaFree(void *) {}
size_t cuda::arenaBytesInUse() { return 0; }
size_t cuda::arenaPeakBytes() { return 0; }
llvm::Error cuda::synchronize() { return llvm::Error::success(); }
llvm::Error cuda::takeError() { return llvm::Error::success(); }
llvm::orc::SymbolMap cuda::symbolMap(llvm::orc::MangleAndInterner) {
  return {};
}
