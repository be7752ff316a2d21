//===- JitEngine.h - compile and run a tfm model (CPU or CUDA) --*- C++ -*-===//
//
// The host code of both paths runs in the MLIR JIT. On the CPU it is the
// whole step; with CUDA it launches the kernels of the step's gpu.binary
// and calls cuBLASLt through lib/Runtime/Cuda, and the step's buffers
// (arguments included, copied in by run()) live in the CUDA arena.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_CPUENGINE_H
#define TFM_RUNTIME_CPUENGINE_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "tfm/Pipelines/Pipelines.h"

#include <memory>
#include <vector>

namespace mlir::tfm {

/// A result of the compiled step: row-major, f32 (bf16 results widened) or
/// f64.
struct HostArray {
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<double> f64;
  bool isF64() const { return !f64.empty(); }
  const void *data() const {
    return isF64() ? static_cast<const void *>(f64.data()) : f32.data();
  }
};

/// A model function compiled with the MLIR JIT for the CPU or a CUDA GPU.
class JitModel {
public:
  /// Runs --tfm-train-cpu on `module` (in place) and JIT-compiles function
  /// `funcName`. The argument and result types are taken before lowering.
  static llvm::Expected<std::unique_ptr<JitModel>>
  compile(ModuleOp module, llvm::StringRef funcName,
          const CpuPipelineOptions &options = {});

  /// The same with --tfm-train-cuda: initialises the CUDA runtime (device 0)
  /// first; `options.chip` empty means the device's own.
  static llvm::Expected<std::unique_ptr<JitModel>>
  compileForCuda(ModuleOp module, llvm::StringRef funcName, CudaPipelineOptions options);

  /// With any pipeline ending in the LLVM dialect (e.g. the testing
  /// pipeline tfm-train-gpu-sim); `gpu`: its host code calls the CUDA
  /// runtime, which must be initialised.
  static llvm::Expected<std::unique_ptr<JitModel>>
  compileWithPipeline(ModuleOp module, llvm::StringRef funcName,
                      llvm::function_ref<void(OpPassManager &)> buildPipeline,
                      bool gpu = false);

  /// Calls the function. `args[i]` must match argument i (element type and
  /// rank; dynamic sizes are taken from the array). Parameters may be passed
  /// as spans to avoid copies.
  struct Arg {
    const void *data;
    std::vector<int64_t> shape;
  };
  llvm::Expected<std::vector<HostArray>> run(llvm::ArrayRef<Arg> args);

  bool onCuda() const { return gpu; }

private:
  static llvm::Expected<std::unique_ptr<JitModel>>
  prepare(ModuleOp module, llvm::StringRef funcName);
  llvm::Error jit(ModuleOp module);

  bool gpu = false;
  std::unique_ptr<ExecutionEngine> engine;
  std::string entry;
  std::vector<RankedTensorType> argTypes;
  std::vector<RankedTensorType> resultTypes;
};

/// Registers what a context needs for tfm-run: dialects, translations.
void registerRuntimeDialects(DialectRegistry &registry);

} // namespace mlir::tfm

#endif // TFM_RUNTIME_CPUENGINE_H
