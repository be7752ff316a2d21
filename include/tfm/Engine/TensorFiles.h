//===- TensorFiles.h - step inputs and outputs as safetensors ---*- C++ -*-===//
//
// The file conventions of tfm-run: a step's result as `logits`, `loss` and
// `grad/<hf-name>` (what transformers' load_file reads back), and a single
// function's arguments and results as `arg<i>` / `result<i>`.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_TENSORFILES_H
#define TFM_ENGINE_TENSORFILES_H

#include "tfm/Engine/TrainingStep.h"

namespace mlir::tfm {

/// Writes `logits`, `loss` (if any) and `grad/<name>` for every gradient to
/// `path`, atomically.
llvm::Error writeStepResult(llvm::StringRef path, const StepResult &result);

/// Storage for arguments read from a file (aligned copies).
using ArgumentStorage = std::vector<std::vector<char>>;

/// The arguments `arg0`, `arg1`, ... of a function of `types` from the
/// safetensors file `path`: each present, with the argument's element type.
llvm::Expected<std::vector<CompiledFunction::Arg>>
readArguments(llvm::StringRef path, llvm::ArrayRef<RankedTensorType> types,
              ArgumentStorage &storage);

/// Writes `result0`, `result1`, ... to `path`, atomically.
llvm::Error writeResults(llvm::StringRef path,
                         llvm::ArrayRef<HostArray> results);

} // namespace mlir::tfm

#endif // TFM_ENGINE_TENSORFILES_H
