//===- CompiledFunction.cpp - compile and run one function (CPU/CUDA) -----===//
//
// The compiled entry is `_mlir_ciface_<func>(results*, memref descriptor*...)`
// (requested by tfm-bufferize-cpu). Descriptors are built here as words:
// {allocated, aligned, offset, sizes[r], strides[r]}; result buffers were
// allocated by the compiled code (malloc, or the CUDA arena): run() copies
// them out and frees them, runResident() hands them over as DeviceTensors.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/CompiledFunction.h"
#include "AllocationGuard.h"
#include "JitOptimizer.h"
#include "tfm/Analysis/EntryContract.h"
#include "tfm/Conversion/InPlaceArguments.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/BlasKernels.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/BFloat16.h"
#include "tfm/Support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

extern "C" void _mlir_ciface_tfm_rt_sgemm(void *a, void *b, void *c,
                                          int32_t transA, int32_t transB);
extern "C" void _mlir_ciface_tfm_rt_sgemm_batched(void *a, void *b, void *c,
                                                  int32_t transA,
                                                  int32_t transB);
extern "C" void _mlir_ciface_tfm_rt_sgemm_overwrite(void *a, void *b, void *c,
                                                    int32_t transA,
                                                    int32_t transB);
extern "C" void _mlir_ciface_tfm_rt_sgemm_batched_overwrite(void *a, void *b,
                                                            void *c,
                                                            int32_t transA,
                                                            int32_t transB);
extern "C" void tfm_rt_memref_copy(int64_t elementSize,
                                   UnrankedMemRefType<char> *source,
                                   UnrankedMemRefType<char> *target);

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
  if (func.isDeclaration())
    return makeError("@" + funcName +
                     " is only declared: an entry function needs a body");
  // The entry's arguments and results are memref descriptors of ranked
  // tensors; anything else has no calling convention here.
  auto rankedTypes = [&](TypeRange types, llvm::StringRef what,
                         std::vector<RankedTensorType> &out) -> llvm::Error {
    for (auto [i, t] : llvm::enumerate(types)) {
      auto ranked = dyn_cast<RankedTensorType>(t);
      if (!ranked) {
        std::string type;
        llvm::raw_string_ostream os(type);
        os << t;
        return makeError("@" + funcName + ": " + what + " #" + llvm::Twine(i) +
                         " has type " + type +
                         "; an entry function takes and returns ranked "
                         "tensors (a scalar as a 0-d tensor such as "
                         "tensor<f32>)");
      }
      out.push_back(ranked);
    }
    return llvm::Error::success();
  };
  auto model = std::unique_ptr<CompiledFunction>(new CompiledFunction());
  if (llvm::Error e =
          rankedTypes(func.getArgumentTypes(), "argument", model->argTypes))
    return std::move(e);
  if (llvm::Error e =
          rankedTypes(func.getResultTypes(), "result", model->resultTypes))
    return std::move(e);
  // Arguments the function updates in place (tfm-read-only-arguments).
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    model->updatedInPlace.push_back(isMarkedUpdatedInPlace(func, i));
  model->name = funcName.str();
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
  (*model)->contract = EntryContract::take(module.lookupSymbol(funcName));
  if (llvm::Error e = (*model)->jit(module))
    return std::move(e);
  return model;
}

llvm::Error CompiledFunction::jit(ModuleOp module) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // An ExecutionEngine option holds the transformer only by reference: it
  // and its target machine live until the lookup below has compiled.
  auto optimizer = makeJitOptimizer("_mlir_" + entry);
  if (!optimizer)
    return makeError("cannot describe this host to LLVM: " +
                     llvm::toString(optimizer.takeError()));
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimizer->transform;
  // The perf listener writes a jitdump file per run under $TMPDIR/.debug;
  // only a profiling session wants those (TFM_JIT_PERF=1).
  const char *perf = std::getenv("TFM_JIT_PERF");
  engineOptions.enablePerfNotificationListener =
      perf && std::string(perf) == "1";
  // CPU steps call OpenBLAS; make sure it runs this CPU's kernels.
  if (!gpu)
    rt::selectBlasKernels();
  auto created = ExecutionEngine::create(module, engineOptions);
  if (!created)
    return makeError("JIT compilation failed: " +
                     llvm::toString(created.takeError()));
  bool useCuda = gpu;
  (*created)->registerSymbols([useCuda](llvm::orc::MangleAndInterner interner) {
    if (useCuda)
      return cuda::symbolMap(interner);
    llvm::orc::SymbolMap symbols;
    auto add = [&](llvm::StringRef name, auto *fn) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("_mlir_ciface_tfm_rt_sgemm", &_mlir_ciface_tfm_rt_sgemm);
    add("_mlir_ciface_tfm_rt_sgemm_batched",
        &_mlir_ciface_tfm_rt_sgemm_batched);
    add("_mlir_ciface_tfm_rt_sgemm_overwrite",
        &_mlir_ciface_tfm_rt_sgemm_overwrite);
    add("_mlir_ciface_tfm_rt_sgemm_batched_overwrite",
        &_mlir_ciface_tfm_rt_sgemm_batched_overwrite);
    // Bufferization emits copies of dynamically shaped memrefs as calls.
    add("memrefCopy", &tfm_rt_memref_copy);
    // Buffers: a failed allocation becomes an error (AllocationGuard.h).
    add("malloc", &tfm_rt_guarded_malloc);
    add("free", &tfm_rt_guarded_free);
    return symbols;
  });
  // Global constructors: the GPU module's PTX is loaded here.
  (*created)->initialize();
  if (gpu)
    if (llvm::Error e = cuda::takeError())
      return e;
  // Materialise (LLVM codegen) now, so run() measures only the step.
  auto fn = (*created)->lookupPacked(entry);
  if (!fn)
    return makeError("JIT lookup of " + entry +
                     " failed: " + llvm::toString(fn.takeError()));
  packedEntry = *fn;
  engine = std::move(*created);
  return llvm::Error::success();
}

/// The shape of an argument as given.
static llvm::ArrayRef<int64_t> shapeOf(const CompiledFunction::Arg &a) {
  return a.resident ? a.resident->getShape() : llvm::ArrayRef(a.shape);
}

llvm::Error CompiledFunction::checkContract(llvm::ArrayRef<Arg> args) const {
  auto sizeOf = [&](std::pair<unsigned, unsigned> m) -> std::optional<int64_t> {
    if (m.first >= args.size() || m.second >= shapeOf(args[m.first]).size())
      return std::nullopt; // reported by the rank check after this one
    return shapeOf(args[m.first])[m.second];
  };
  auto where = [](std::pair<unsigned, unsigned> m) {
    return "argument #" + std::to_string(m.first) + " dimension " +
           std::to_string(m.second);
  };
  std::string func = "@" + name;
  for (const EntryContract::DimClass &c : contract.dims) {
    std::optional<std::pair<unsigned, unsigned>> first;
    for (auto m : c.members) {
      std::optional<int64_t> size = sizeOf(m);
      if (!size)
        continue;
      if (c.size && *size != *c.size)
        return makeError(where(m) + " is " + llvm::Twine(*size) + ", but " +
                         func + " needs " + llvm::Twine(*c.size) + " there");
      if (!first) {
        first = m;
        continue;
      }
      if (*size != *sizeOf(*first))
        return makeError(where(m) + " is " + llvm::Twine(*size) + ", but " +
                         where(*first) + " is " + llvm::Twine(*sizeOf(*first)) +
                         ": " + func + " uses them as one size");
    }
  }
  for (const EntryContract::AtLeast &r : contract.atLeast) {
    auto size = [&](const EntryContract::Size &s) -> std::optional<int64_t> {
      if (!s.argument)
        return s.dimOrSize;
      return sizeOf({*s.argument, unsigned(s.dimOrSize)});
    };
    auto describe = [&](const EntryContract::Size &s) {
      return s.argument ? where({*s.argument, unsigned(s.dimOrSize)}) + " (" +
                              std::to_string(*size(s)) + ")"
                        : "its static size " + std::to_string(s.dimOrSize);
    };
    std::optional<int64_t> big = size(r.big), small = size(r.small);
    if (big && small && *big < *small)
      return makeError(describe(r.big) + " is smaller than " +
                       describe(r.small) + ": " + func +
                       " reads it at each index up to that size");
  }
  for (const EntryContract::IndexBound &ib : contract.indexBounds) {
    if (ib.argument >= args.size() || ib.argument >= argTypes.size())
      continue;
    const Arg &a = args[ib.argument];
    // Host data only: resident tensors were checked when they were made.
    const void *data =
        a.resident ? (a.resident->onGpu() ? nullptr : a.resident->data())
                   : a.data;
    Type elem = argTypes[ib.argument].getElementType();
    if (!data || !elem.isSignlessInteger() ||
        (elem.getIntOrFloatBitWidth() != 32 &&
         elem.getIntOrFloatBitWidth() != 64))
      continue;
    int64_t n = 1;
    for (int64_t d : shapeOf(a))
      n *= d;
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = elem.getIntOrFloatBitWidth() == 64
                      ? static_cast<const int64_t *>(data)[i]
                      : static_cast<const int32_t *>(data)[i];
      if ((v >= 0 && v < ib.bound) || (ib.allowed && v == *ib.allowed))
        continue;
      return makeError(
          "argument #" + llvm::Twine(ib.argument) + " of " + func + ": index " +
          llvm::Twine(v) + " at element " + llvm::Twine(i) +
          " is outside [0, " + llvm::Twine(ib.bound) + ")" +
          (ib.allowed ? " and is not " + std::to_string(*ib.allowed)
                      : std::string()));
    }
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<DeviceTensor>>
CompiledFunction::runResident(llvm::ArrayRef<Arg> args) {
  auto start = std::chrono::steady_clock::now();
  llvm::scope_exit timeRun([&] {
    lastRunMs = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  });
  lastStagedBytes = 0;
  if (args.size() != argTypes.size())
    return makeError("expected " + llvm::Twine(argTypes.size()) +
                     " arguments, got " + llvm::Twine(args.size()));
  if (llvm::Error e = checkContract(args))
    return e;
  // Descriptors: one vector of words per argument. Every argument's tensor
  // (resident, or staged into the arena) by its data pointer, so that a
  // result which is an argument shares its storage.
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<DeviceTensor> staged;
  std::map<const void *, DeviceTensor> argTensors;
  for (size_t i = 0; i < args.size(); ++i) {
    RankedTensorType t = argTypes[i];
    const Arg &a = args[i];
    llvm::ArrayRef<int64_t> shape = shapeOf(a);
    if (int64_t(shape.size()) != t.getRank())
      return makeError("argument #" + llvm::Twine(i) + " has rank " +
                       llvm::Twine(shape.size()) + ", expected " +
                       llvm::Twine(t.getRank()));
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (!t.isDynamicDim(d) && t.getDimSize(d) != shape[d])
        return makeError("argument #" + llvm::Twine(i) + " dimension " +
                         llvm::Twine(d) + " is " + llvm::Twine(shape[d]) +
                         ", expected " + llvm::Twine(t.getDimSize(d)));
    const void *data = a.data;
    if (a.resident) {
      if (a.resident->onGpu() != gpu)
        return makeError("argument #" + llvm::Twine(i) +
                         " is resident on another device");
      data = a.resident->data();
      argTensors[data] = *a.resident;
    } else if (gpu || updatedInPlace[i]) {
      // Host arguments are copied into the arena, where kernels read them;
      // on the CPU, those the function writes (`data` is only read).
      DeviceTensor copy =
          DeviceTensor::upload(a.data, shape, t.getElementType(), gpu);
      if (!copy)
        return gpu ? cuda::takeError() : makeError("out of host memory");
      lastStagedBytes += copy.getNumBytes();
      data = copy.data();
      argTensors[data] = copy;
      staged.push_back(std::move(copy));
    }
    auto ptr = reinterpret_cast<int64_t>(data);
    std::vector<int64_t> desc = {ptr, ptr, 0};
    desc.insert(desc.end(), shape.begin(), shape.end());
    int64_t stride = 1;
    std::vector<int64_t> strides(shape.size());
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= shape[d];
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
  // The CPU code's allocations are guarded (AllocationGuard.h); the GPU
  // host code allocates from the CUDA arena, which reports its own errors.
  if (llvm::Error e = gpu ? engine->invokePacked(entry, packed)
                          : runGuarded(packedEntry, packed.data()))
    return std::move(e);
  if (gpu)
    if (llvm::Error e = cuda::synchronize())
      return std::move(e);

  // Each returned buffer is owned by the caller; several results may share
  // one (a value returned twice): one owner per allocation.
  bool onGpu = gpu;
  std::map<void *, std::shared_ptr<char>> owners;
  auto ownerOf = [&](void *allocated) -> std::shared_ptr<char> {
    auto arg = argTensors.find(allocated);
    if (arg != argTensors.end()) {
      DeviceTensor keep = arg->second;
      return std::shared_ptr<char>(static_cast<char *>(allocated),
                                   [keep](char *) {});
    }
    std::shared_ptr<char> &o = owners[allocated];
    if (!o)
      o = std::shared_ptr<char>(
          static_cast<char *>(allocated), [onGpu](char *p) {
            onGpu ? cuda::arenaFree(p) : tfm_rt_guarded_free(p);
          });
    return o;
  };
  std::vector<std::shared_ptr<char>> all;
  size_t w = 0;
  for (RankedTensorType t : resultTypes) {
    all.push_back(ownerOf(reinterpret_cast<void *>(results[w])));
    w += 3 + 2 * t.getRank();
  }
  std::vector<DeviceTensor> out;
  w = 0;
  for (auto [r, t] : llvm::enumerate(resultTypes)) {
    int64_t rank = t.getRank();
    Type elem = t.getElementType();
    size_t bytes = (elem.getIntOrFloatBitWidth() + 7) / 8;
    auto *aligned = reinterpret_cast<char *>(results[w + 1]);
    int64_t offset = results[w + 2];
    std::vector<int64_t> shape(results.begin() + w + 3,
                               results.begin() + w + 3 + rank);
    std::vector<int64_t> strides(results.begin() + w + 3 + rank,
                                 results.begin() + w + 3 + 2 * rank);
    w += 3 + 2 * rank;
    bool contiguous = true;
    int64_t expect = 1, n = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      contiguous &= shape[d] == 1 || strides[d] == expect;
      expect *= shape[d];
    }
    n = expect;
    if (contiguous) {
      out.push_back(DeviceTensor::adopt(all[r], aligned + offset * bytes, shape,
                                        elem, gpu));
      continue;
    }
    // A strided view: compact it (the host reads the arena after the
    // synchronisation above).
    DeviceTensor compact = DeviceTensor::upload(nullptr, shape, elem, gpu);
    if (!compact)
      return gpu ? cuda::takeError() : makeError("out of memory");
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = offset;
      for (int64_t d = rank - 1; d >= 0; --d) {
        off += (rem % shape[d]) * strides[d];
        rem /= shape[d];
      }
      std::memcpy(static_cast<char *>(compact.data()) + i * bytes,
                  aligned + off * bytes, bytes);
    }
    out.push_back(std::move(compact));
  }
  return out;
}

llvm::Expected<std::vector<HostArray>>
CompiledFunction::run(llvm::ArrayRef<Arg> args) {
  auto start = std::chrono::steady_clock::now();
  for (RankedTensorType t : resultTypes) {
    Type elem = t.getElementType();
    if (!elem.isF64() && !elem.isF32() && !elem.isBF16())
      return makeError(
          "only f32, f64 and bf16 (returned as f32) results are supported");
  }
  llvm::Expected<std::vector<DeviceTensor>> results = runResident(args);
  if (!results)
    return results.takeError();
  std::vector<HostArray> out;
  for (const DeviceTensor &r : *results)
    out.push_back(r.toHost());
  lastRunMs = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  return out;
}
