//===- JitOptimizer.h - the LLVM pipeline a JIT'd step gets -----*- C++ -*-===//
//
// MLIR's makeOptimizingTransformer without a target machine leaves LLVM's
// cost model with no vector registers, so no loop is vectorised; with the
// host's machine and its O3 defaults, loop unrolling triples the compile
// time of a training step for no measurable gain. This is O3 for the host
// with LLVM's unroller off: loops vectorised, compile time about as before.
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

/// An optimizer for this host, or an error if LLVM cannot describe it.
llvm::Expected<JitOptimizer> makeJitOptimizer();

} // namespace mlir::tfm

#endif // TFM_LIB_ENGINE_JITOPTIMIZER_H
