//===- InitAll.h - register everything tfm provides -------------*- C++ -*-===//
//
// The one registration entry point, used by every tool and by the engine
// (as mlir/InitAllDialects.h and InitAllPasses.h are upstream): a context
// made from registerAllTfmDialects can parse, verify, differentiate, cost
// and lower any tfm module; registerAllTfmPasses makes every pass and
// pipeline available by name (tfm-opt command lines, textual pipelines).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_INITALL_H
#define TFM_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tfm {

/// The tfm dialect with its external models (adjoint rules, cost models),
/// every upstream dialect and extension the lowerings produce, and the LLVM
/// IR translations the JIT and gpu-module-to-binary need.
void registerAllTfmDialects(DialectRegistry &registry);

/// Every upstream pass, every tfm pass and every tfm pipeline.
void registerAllTfmPasses();

} // namespace mlir::tfm

#endif // TFM_INITALL_H
