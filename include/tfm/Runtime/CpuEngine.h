//===- CpuEngine.h - compile and run a tfm model on the CPU -----*- C++ -*-===//

#ifndef TFM_RUNTIME_CPUENGINE_H
#define TFM_RUNTIME_CPUENGINE_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "tfm/Pipelines/Pipelines.h"

#include <memory>
#include <vector>

namespace mlir::tfm {

/// A result of the compiled step: row-major, f32 or f64.
struct HostArray {
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<double> f64;
  bool isF64() const { return !f64.empty(); }
  const void *data() const {
    return isF64() ? static_cast<const void *>(f64.data()) : f32.data();
  }
};

/// A model function compiled for the CPU with the MLIR JIT.
class CpuModel {
public:
  /// Runs --tfm-train-cpu on `module` (in place) and JIT-compiles function
  /// `funcName`. The argument and result types are taken before lowering.
  static llvm::Expected<std::unique_ptr<CpuModel>>
  compile(ModuleOp module, llvm::StringRef funcName,
          const CpuPipelineOptions &options = {});

  /// Calls the function. `args[i]` must match argument i (element type and
  /// rank; dynamic sizes are taken from the array). Parameters may be passed
  /// as spans to avoid copies.
  struct Arg {
    const void *data;
    std::vector<int64_t> shape;
  };
  llvm::Expected<std::vector<HostArray>> run(llvm::ArrayRef<Arg> args);

private:
  std::unique_ptr<ExecutionEngine> engine;
  std::string entry;
  std::vector<RankedTensorType> argTypes;
  std::vector<RankedTensorType> resultTypes;
};

/// Registers what a context needs for tfm-run: dialects, translations.
void registerCpuRuntimeDialects(DialectRegistry &registry);

} // namespace mlir::tfm

#endif // TFM_RUNTIME_CPUENGINE_H
