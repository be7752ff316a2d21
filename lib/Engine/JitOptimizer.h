//===- JitOptimizer.h - the LLVM pipeline a JIT'd step gets -----*- C++ -*-===//
//
// MLIR's makeOptimizingTransformer without a target machine leaves LLVM's
// cost model with no vector registers, so no loop is vectorised; with the
// host's machine and its O3 defaults, loop unrolling triples the compile
// time of a training step for no measurable gain. This is O3 for the host
// with LLVM's unroller off: loops vectorised, compile time about as before.
//
// Before it, every function the entry cannot reach is dropped: MLIR's
// ExecutionEngine wraps every defined function in a `_mlir_<name>`
// packed-argument interface, so each outlined loop body (hundreds of
// scalar arguments from its memref descriptors) got one, and a training
// step's module still holds the forward it was derived from. Selecting and
// scheduling instructions for those was over half of LLVM's time on a
// Qwen3-Next step; what is reachable compiles exactly as before.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_ENGINE_JITOPTIMIZER_H
#define TFM_LIB_ENGINE_JITOPTIMIZER_H

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>
#include <memory>

namespace mlir::tfm {

/// The optimizer and the host machine it describes; the machine must outlive
/// every call of `transform`.
struct JitOptimizer {
  std::unique_ptr<llvm::TargetMachine> host;
  std::function<llvm::Error(llvm::Module *)> transform;
};

/// An optimizer for this host that keeps what `root` (the packed entry the
/// engine looks up, `_mlir_<entry>`) and global initializers reach, or an
/// error if LLVM cannot describe the host.
llvm::Expected<JitOptimizer> makeJitOptimizer(std::string root);

} // namespace mlir::tfm

#endif // TFM_LIB_ENGINE_JITOPTIMIZER_H
