//===- CompiledFunction.cpp - compile and run one function (CPU/CUDA) -----===//
//
// The compiled entry is `_mlir_ciface_<func>(results*, memref descriptor*...)`
// (requested by tfm-bufferize-cpu). Descriptors are built here as words:
// {allocated, aligned, offset, sizes[r], strides[r]}; result buffers were
// allocated by the compiled code (malloc, or the CUDA arena) and are copied
// out and freed.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/CompiledFunction.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/BFloat16.h"
#include "tfm/Support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

extern "C" void _mlir_ciface_tfm_rt_sgemm(void *a, void *b, void *c,
                                          int32_t transA, int32_t transB);
extern "C" void _mlir_ciface_tfm_rt_sgemm_batched(void *a, void *b, void *c,
                                                  int32_t transA,
                                                  int32_t transB);

using namespace mlir;
using namespace mlir::tfm;

llvm::StringRef mlir::tfm::deviceName(Device device) {
  switch (device) {
  case Device::cpu:
    return "cpu";
  case Device::cuda:
    return "cuda";
  case Device::gpuSim:
    return "gpu-sim";
  }
  llvm_unreachable("unknown device");
}

llvm::Expected<Device> mlir::tfm::parseDevice(llvm::StringRef name) {
  for (Device d : {Device::cpu, Device::cuda, Device::gpuSim})
    if (name == deviceName(d))
      return d;
  return makeError("--device " + name + ": expected cpu, cuda or gpu-sim");
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::prepare(ModuleOp module, llvm::StringRef funcName) {
  auto func = module.lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return makeError("no function @" + funcName);
  auto model = std::unique_ptr<CompiledFunction>(new CompiledFunction());
  for (Type t : func.getArgumentTypes())
    model->argTypes.push_back(cast<RankedTensorType>(t));
  for (Type t : func.getResultTypes())
    model->resultTypes.push_back(cast<RankedTensorType>(t));
  model->entry = ("_mlir_ciface_" + funcName).str();
  return model;
}

/// Runs `build`'s pipeline on `module`, collecting diagnostics for the error.
static llvm::Error
runPipeline(ModuleOp module, llvm::function_ref<void(OpPassManager &)> build) {
  MLIRContext *ctx = module.getContext();
  DiagnosticCollector diagnostics(ctx);
  PassManager pm(ctx);
  build(pm);
  if (failed(pm.run(module)))
    return diagnostics.takeError("compilation failed: ");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, llvm::StringRef funcName,
                          const CompileOptions &options) {
  switch (options.device) {
  case Device::cpu: {
    // The module is fused (TrainingStep) and differentiated already; kernel
    // mode runs functions as written.
    CpuPipelineOptions cpu;
    cpu.useBlas = options.useBlas;
    cpu.fuse = false;
    return compileWithPipeline(module, funcName, [&](OpPassManager &pm) {
      buildTfmTrainCpuPipeline(pm, cpu);
    });
  }
  case Device::gpuSim:
    return compileWithPipeline(module, funcName, [](OpPassManager &pm) {
      buildTfmTrainGpuSimPipeline(pm, /*autodiffFunc=*/"", /*fuse=*/false);
    });
  case Device::cuda: {
    // The JIT runs the module's constructor (loading the PTX) at once.
    if (llvm::Error e = cuda::initialize())
      return std::move(e);
    CudaPipelineOptions cudaOptions;
    cudaOptions.chip = options.chip.empty() ? cuda::deviceChip() : options.chip;
    cudaOptions.fuse = false;
    return compileWithPipeline(
        module, funcName,
        [&](OpPassManager &pm) { buildTfmTrainCudaPipeline(pm, cudaOptions); },
        /*gpu=*/true);
  }
  }
  llvm_unreachable("unknown device");
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compileWithPipeline(
    ModuleOp module, llvm::StringRef funcName,
    llvm::function_ref<void(OpPassManager &)> buildPipeline, bool gpu) {
  auto model = prepare(module, funcName);
  if (!model)
    return model.takeError();
  (*model)->gpu = gpu;
  if (llvm::Error e = runPipeline(module, buildPipeline))
    return std::move(e);
  if (llvm::Error e = (*model)->jit(module))
    return std::move(e);
  return model;
}

llvm::Error CompiledFunction::jit(ModuleOp module) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // The transformer is a function_ref: keep its target alive (an
  // ExecutionEngine option holds only a reference).
  auto optimize = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                            /*targetMachine=*/nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  // The perf listener writes a jitdump file per run under $TMPDIR/.debug;
  // only a profiling session wants those (TFM_JIT_PERF=1).
  const char *perf = std::getenv("TFM_JIT_PERF");
  engineOptions.enablePerfNotificationListener =
      perf && std::string(perf) == "1";
  auto created = ExecutionEngine::create(module, engineOptions);
  if (!created)
    return makeError("JIT compilation failed: " +
                     llvm::toString(created.takeError()));
  bool useCuda = gpu;
  (*created)->registerSymbols([useCuda](llvm::orc::MangleAndInterner interner) {
    if (useCuda)
      return cuda::symbolMap(interner);
    llvm::orc::SymbolMap symbols;
    symbols[interner("_mlir_ciface_tfm_rt_sgemm")] = {
        llvm::orc::ExecutorAddr::fromPtr(&_mlir_ciface_tfm_rt_sgemm),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("_mlir_ciface_tfm_rt_sgemm_batched")] = {
        llvm::orc::ExecutorAddr::fromPtr(&_mlir_ciface_tfm_rt_sgemm_batched),
        llvm::JITSymbolFlags::Exported};
    // Bufferization emits copies of dynamically shaped memrefs as calls.
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  // Global constructors: the GPU module's PTX is loaded here.
  (*created)->initialize();
  if (gpu)
    if (llvm::Error e = cuda::takeError())
      return e;
  // Materialise (LLVM codegen) now, so run() measures only the step.
  if (auto fn = (*created)->lookupPacked(entry); !fn)
    return makeError("JIT lookup of " + entry +
                     " failed: " + llvm::toString(fn.takeError()));
  engine = std::move(*created);
  return llvm::Error::success();
}

llvm::Expected<std::vector<HostArray>>
CompiledFunction::run(llvm::ArrayRef<Arg> args) {
  auto start = std::chrono::steady_clock::now();
  llvm::scope_exit timeRun([&] {
    lastRunMs = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  });
  if (args.size() != argTypes.size())
    return makeError("expected " + llvm::Twine(argTypes.size()) +
                     " arguments, got " + llvm::Twine(args.size()));
  // Descriptors: one vector of words per argument.
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> stagedArgs;
  llvm::scope_exit releaseArgs([&] {
    for (void *p : stagedArgs)
      cuda::arenaFree(p);
  });
  for (size_t i = 0; i < args.size(); ++i) {
    RankedTensorType t = argTypes[i];
    const Arg &a = args[i];
    if (int64_t(a.shape.size()) != t.getRank())
      return makeError("argument #" + llvm::Twine(i) + " has rank " +
                       llvm::Twine(a.shape.size()) + ", expected " +
                       llvm::Twine(t.getRank()));
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (!t.isDynamicDim(d) && t.getDimSize(d) != a.shape[d])
        return makeError("argument #" + llvm::Twine(i) + " dimension " +
                         llvm::Twine(d) + " is " + llvm::Twine(a.shape[d]) +
                         ", expected " + llvm::Twine(t.getDimSize(d)));
    std::vector<int64_t> desc;
    const void *data = a.data;
    if (gpu) {
      // Arguments are copied into the arena, where kernels can read them.
      size_t bytes = t.getElementTypeBitWidth() / 8;
      for (int64_t s : a.shape)
        bytes *= size_t(s);
      void *staged = cuda::arenaAllocate(bytes);
      if (!staged)
        return cuda::takeError();
      std::memcpy(staged, a.data, bytes);
      stagedArgs.push_back(staged);
      data = staged;
    }
    auto ptr = reinterpret_cast<int64_t>(data);
    desc.push_back(ptr);
    desc.push_back(ptr);
    desc.push_back(0);
    for (int64_t s : a.shape)
      desc.push_back(s);
    int64_t stride = 1;
    std::vector<int64_t> strides(a.shape.size());
    for (int64_t d = int64_t(a.shape.size()) - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= a.shape[d];
    }
    desc.insert(desc.end(), strides.begin(), strides.end());
    descriptors.push_back(std::move(desc));
  }
  size_t resultWords = 0;
  for (RankedTensorType t : resultTypes)
    resultWords += 3 + 2 * t.getRank();
  std::vector<int64_t> results(resultWords, 0);

  std::vector<void *> pointers; // the values the packed arguments point to
  pointers.reserve(args.size() + 1);
  pointers.push_back(results.data());
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : pointers)
    packed.push_back(&p);
  if (llvm::Error e = engine->invokePacked(entry, packed))
    return std::move(e);
  if (gpu)
    if (llvm::Error e = cuda::synchronize())
      return std::move(e);

  std::vector<HostArray> out;
  // Every returned buffer is owned by the caller; several results may share
  // one (a value returned twice), so free each once, after all are read.
  std::set<void *> owned;
  size_t word = 0;
  for (RankedTensorType t : resultTypes) {
    owned.insert(reinterpret_cast<void *>(results[word]));
    word += 3 + 2 * t.getRank();
  }
  llvm::scope_exit release([&] {
    for (void *p : owned)
      gpu ? cuda::arenaFree(p) : std::free(p);
  });
  size_t w = 0;
  for (RankedTensorType t : resultTypes) {
    int64_t rank = t.getRank();
    auto *aligned = reinterpret_cast<char *>(results[w + 1]);
    int64_t offset = results[w + 2];
    HostArray arr;
    int64_t n = 1;
    for (int64_t d = 0; d < rank; ++d) {
      arr.shape.push_back(results[w + 3 + d]);
      n *= results[w + 3 + d];
    }
    std::vector<int64_t> strides(results.begin() + w + 3 + rank,
                                 results.begin() + w + 3 + 2 * rank);
    Type elem = t.getElementType();
    bool isF64 = elem.isF64();
    if (!isF64 && !elem.isF32() && !elem.isBF16())
      return makeError(
          "only f32, f64 and bf16 (returned as f32) results are supported");
    if (isF64)
      arr.f64.resize(n);
    else
      arr.f32.resize(n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = offset;
      for (int64_t d = rank - 1; d >= 0; --d) {
        off += (rem % arr.shape[d]) * strides[d];
        rem /= arr.shape[d];
      }
      if (isF64) {
        arr.f64[i] = reinterpret_cast<const double *>(aligned)[off];
      } else if (elem.isBF16()) {
        arr.f32[i] =
            bf16BitsToFloat(reinterpret_cast<const uint16_t *>(aligned)[off]);
      } else {
        arr.f32[i] = reinterpret_cast<const float *>(aligned)[off];
      }
    }
    out.push_back(std::move(arr));
    w += 3 + 2 * rank;
  }
  return out;
}
