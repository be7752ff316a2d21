//===- CompiledFunction.h - compile and run one function (CPU/CUDA) -*- C++
//-*-===//
//
// The host code of both paths runs in the MLIR JIT. On the CPU it is the
// whole function; with CUDA it launches the kernels of the module's
// gpu.binary and calls cuBLASLt through lib/Runtime/Cuda, and the
// function's buffers (arguments included, copied in by run()) live in the
// CUDA arena.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_COMPILEDFUNCTION_H
#define TFM_ENGINE_COMPILEDFUNCTION_H

#include "tfm/Analysis/EntryContract.h"
#include "tfm/Engine/DeviceTensor.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::tfm {

/// Where a compiled function runs.
enum class Device {
  cpu,
  /// GPU 0 through the CUDA driver and cuBLASLt (docs/gpu.md).
  cuda,
  /// Testing: the GPU path's kernels run as CPU loops (tfm-train-gpu-sim).
  gpuSim,
};

/// "cpu", "cuda", "gpu-sim".
llvm::StringRef deviceName(Device device);
/// The inverse of deviceName; an error names the accepted values.
llvm::Expected<Device> parseDevice(llvm::StringRef name);

struct CompileOptions {
  Device device = Device::cpu;
  /// CPU: f32 GEMMs through OpenBLAS (otherwise loops; benchmarks only).
  bool useBlas = true;
  /// CUDA: the target SM, e.g. sm_90 (empty: the device's own).
  std::string chip;
};

/// A result of a compiled function: row-major, f32 (bf16 results widened)
/// or f64.
struct HostArray {
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<double> f64;
  bool isF64() const { return !f64.empty(); }
  const void *data() const {
    return isF64() ? static_cast<const void *>(f64.data()) : f32.data();
  }
};

/// One function of a tfm module compiled with the MLIR JIT. It keeps the
/// function's argument and result types, so the module's MLIRContext must
/// outlive it.
class CompiledFunction {
public:
  /// Lowers `module` (in place) with the pipeline of `options.device`
  /// (tfm-lower-to-linalg ... for the CPU, the tfm-train-cuda stages for
  /// CUDA, initialising the CUDA runtime first) and JIT-compiles `funcName`.
  /// Argument and result types are taken before lowering. Errors carry the
  /// pipeline's diagnostics.
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(ModuleOp module, llvm::StringRef funcName,
          const CompileOptions &options = {});

  /// The same with any pipeline ending in the LLVM dialect; `gpu`: its host
  /// code calls the CUDA runtime, which must be initialised.
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  compileWithPipeline(ModuleOp module, llvm::StringRef funcName,
                      llvm::function_ref<void(OpPassManager &)> buildPipeline,
                      bool gpu = false);

  /// An argument: `shape` must match the argument's rank and static sizes
  /// (dynamic sizes are taken from it); `data` is row-major of the
  /// argument's element type and is only read (copied first for an
  /// argument the function updates in place). With `resident` (a tensor in
  /// the memory the function runs in), that tensor is passed as it is:
  /// nothing is copied, and `data` and `shape` are ignored. An argument
  /// marked `bufferization.writable = true` (the optimizer step's
  /// parameters and state) is updated in place: its resident tensor holds
  /// the new values afterwards, and the result that returns it shares its
  /// storage.
  struct Arg {
    const void *data = nullptr;
    std::vector<int64_t> shape;
    const DeviceTensor *resident = nullptr;
  };
  /// Calls the function; the results are copied to the host and freed.
  llvm::Expected<std::vector<HostArray>> run(llvm::ArrayRef<Arg> args);
  /// Calls the function and keeps its results where it wrote them (a
  /// result that is an argument shares that argument's storage).
  llvm::Expected<std::vector<DeviceTensor>>
  runResident(llvm::ArrayRef<Arg> args);
  /// Wall time of the last run(): arguments in, the call, results out.
  double getLastRunMs() const { return lastRunMs; }
  /// Bytes the last run copied from the host into the CUDA arena (arguments
  /// that were not resident); on the CPU, where arguments are read in place,
  /// only the host data of arguments updated in place.
  size_t getLastStagedBytes() const { return lastStagedBytes; }

  bool onCuda() const { return gpu; }
  llvm::ArrayRef<RankedTensorType> getArgumentTypes() const { return argTypes; }
  llvm::ArrayRef<RankedTensorType> getResultTypes() const {
    return resultTypes;
  }

private:
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  prepare(ModuleOp module, llvm::StringRef funcName);
  llvm::Error jit(ModuleOp module);

  bool gpu = false;
  double lastRunMs = 0;
  size_t lastStagedBytes = 0;
  std::unique_ptr<ExecutionEngine> engine;
  /// The function's name, and its `_mlir_ciface_` wrapper's.
  std::string name, entry;
  /// What the generated code assumes of its arguments (EntryContract.h):
  /// checked before every call.
  llvm::Error checkContract(llvm::ArrayRef<Arg> args) const;
  EntryContract contract;
  /// The JIT'd `_mlir_ciface_` wrapper's packed form.
  void (*packedEntry)(void **) = nullptr;
  std::vector<RankedTensorType> argTypes;
  std::vector<RankedTensorType> resultTypes;
  /// Per argument: whether the function writes it (see Arg).
  std::vector<bool> updatedInPlace;
};

} // namespace mlir::tfm

#endif // TFM_ENGINE_COMPILEDFUNCTION_H
