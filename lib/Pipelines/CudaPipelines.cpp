//===- CudaPipelines.cpp - the GPU (NVVM/PTX) compilation pipelines -------===//
//
// The GPU path:
//
//   tfm-lower-to-linalg-cuda  tfm.attention(_backward) -> flash kernels, then
//                           the CPU path's tfm-lower-to-linalg
//   tfm-bufferize-cuda      tensors -> memrefs, f32 GEMMs -> tfm_cuda_sgemm*
//                           (cuBLASLt in the runtime), deallocation
//   tfm-map-to-gpu          linalg -> parallel loops -> one gpu.launch per
//                           loop nest -> outlined kernels in one gpu.module
//   tfm-lower-gpu-to-llvm   kernels -> NVVM -> PTX (or cubin) in gpu.binary;
//                           host -> LLVM calling the mgpu* launch ABI and the
//                           arena allocator (_mlir_memref_to_llvm_alloc)
//   tfm-train-cuda          tfm-autodiff{func=forward}, then all of the above
//
// The device recipe is the one verified in shared/LOWERING-NOTES.md (note the
// explicit +ptx80: the default PTX 6.0 cannot target sm_90).
//
//===----------------------------------------------------------------------===//

#include "tfm/Pipelines/Pipelines.h"
#include "PipelineUtils.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Conversion/Passes.h"

#include "mlir/Pass/PassRegistry.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::tfm::detail;

namespace {
/// Where libdevice (math functions as __nv_*) and ptxas come from: the
/// option, else $CUDA_HOME / $CUDA_PATH / $CUDA_ROOT, else /usr/local/cuda.
/// Upstream only looks at the environment; lit and CI clean it, and a
/// module with an unresolved __nv_sqrtf is rejected by ptxas.
std::string toolkitPath(const tfm::CudaPipelineOptions &options) {
  if (!options.toolkit.empty())
    return options.toolkit;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *value = std::getenv(var); value && *value)
      return value;
  return "/usr/local/cuda";
}

/// Fails with `message`: how a pipeline built from bad options reports them
/// (a pipeline builder cannot return an error).
struct OptionErrorPass : PassWrapper<OptionErrorPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OptionErrorPass)
  explicit OptionErrorPass(std::string message) : message(std::move(message)) {}
  StringRef getArgument() const override { return "tfm-option-error"; }
  void runOnOperation() override {
    getOperation().emitError(message);
    signalPassFailure();
  }
  std::string message;
};

/// sm_<major><minor>[a|f], e.g. sm_80, sm_90a.
bool isSmName(StringRef chip) {
  unsigned version = 0;
  if (!chip.consume_front("sm_"))
    return false;
  chip.consume_back("a") || chip.consume_back("f");
  return !chip.getAsInteger(10, version) && version >= 50 && version < 1000;
}

struct CudaPipelineCLOptions : public PassPipelineOptions<CudaPipelineCLOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target SM, e.g. sm_80 or sm_90"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features (+ptx80 or newer for sm_90)"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> format{*this, "format",
                             llvm::cl::desc("gpu-module-to-binary format: isa (PTX text), "
                                            "bin (cubin via ptxas), fatbin"),
                             llvm::cl::init("isa")};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("CUDA toolkit (libdevice, ptxas); default "
                                             "$CUDA_HOME or /usr/local/cuda"),
                              llvm::cl::init("")};
  Option<std::string> func{*this, "func",
                           llvm::cl::desc("Function to differentiate (tfm-train-cuda)"),
                           llvm::cl::init("forward")};

  tfm::CudaPipelineOptions get() const {
    tfm::CudaPipelineOptions o;
    o.chip = chip;
    o.features = features;
    o.format = format;
    o.toolkit = toolkit;
    o.autodiffFunc = func;
    return o;
  }
};
} // namespace

void mlir::tfm::buildTfmLowerToLinalgCudaPipeline(OpPassManager &pm, int64_t lanes) {
  // Attention first: its flash kernels replace the tfm ops, so the linalg
  // lowering never materialises a score matrix.
  addTextual(pm, "tfm-attention-to-gpu{lanes=" + std::to_string(lanes) + "}");
  buildTfmLowerToLinalgPipeline(pm);
}

void mlir::tfm::buildTfmBufferizeCudaPipeline(OpPassManager &pm) {
  // Same bufferization as the CPU, but GEMMs go to cuBLASLt and are placed
  // before the deallocation pipeline (which must see the final uses).
  addTextual(pm, "func.func(llvm-request-c-wrappers),"
                 "eliminate-empty-tensors,"
                 "one-shot-bufferize{bufferize-function-boundaries=1 "
                 "function-boundary-type-conversion=identity-layout-map "
                 "allow-return-allocs-from-loops=1},"
                 "canonicalize,"
                 "convert-linalg-matmul-to-blas{prefix=tfm_cuda},"
                 "buffer-deallocation-pipeline,convert-bufferization-to-memref");
}

void mlir::tfm::buildTfmMapToGpuPipeline(OpPassManager &pm, int64_t lanes, bool outline) {
  // Constants go into kernels (gpu-launch-sink-index-computations) rather
  // than arriving as parameters: lane arithmetic and shuffle offsets fold.
  std::string kernels = "tfm-lower-dynamic-expand-shape,tfm-memref-copy-to-linalg,"
                        "tfm-globals-to-arena,tfm-row-reductions-to-gpu{lanes=" +
                        std::to_string(lanes) +
                        "},tfm-parallel-dims-outermost,"
                        "convert-linalg-to-parallel-loops,tfm-parallel-loops-to-gpu,"
                        "gpu-launch-sink-index-computations,";
  addTextual(pm, kernels + (outline ? "gpu-kernel-outlining,tfm-merge-gpu-modules,"
                                    : "tfm-gpu-launch-to-loops,") +
                     "canonicalize");
}

void mlir::tfm::buildTfmLowerGpuToLlvmPipeline(OpPassManager &pm,
                                               const CudaPipelineOptions &options) {
  if (!isSmName(options.chip)) {
    pm.addPass(std::make_unique<OptionErrorPass>(
        "chip '" + options.chip + "' is not an NVIDIA SM name (e.g. sm_80, sm_90)"));
    return;
  }
  // gpu-module-to-binary reports an unknown format but does not fail (MLIR
  // 22), which would leave kernels without a binary: check it here.
  if (!llvm::is_contained({"isa", "bin", "fatbin"}, options.format)) {
    pm.addPass(std::make_unique<OptionErrorPass>("format '" + options.format +
                                                 "' is not one of isa, bin, fatbin"));
    return;
  }
  addTextual(pm, "scf-parallel-for-to-nested-fors,convert-scf-to-cf,"
                 "expand-strided-metadata,lower-affine,"
                 "nvvm-attach-target{chip=" + options.chip + " features=" + options.features +
                     " O=3},"
                 "gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
                 "reconcile-unrealized-casts),"
                 "gpu-module-to-binary{format=" + options.format +
                     " toolkit=" + toolkitPath(options) + "},"
                 // Host: allocations go through the runtime's arena.
                 "convert-math-to-libm,"
                 "finalize-memref-to-llvm{use-generic-functions=1},"
                 "gpu-to-llvm,convert-to-llvm,canonicalize,reconcile-unrealized-casts");
}

void mlir::tfm::buildTfmTrainCudaPipeline(OpPassManager &pm,
                                          const CudaPipelineOptions &options) {
  addAutodiff(pm, options.autodiffFunc);
  buildTfmLowerToLinalgCudaPipeline(pm);
  buildTfmBufferizeCudaPipeline(pm);
  buildTfmMapToGpuPipeline(pm);
  buildTfmLowerGpuToLlvmPipeline(pm, options);
}

void mlir::tfm::buildTfmTrainGpuSimPipeline(OpPassManager &pm, const std::string &func) {
  addAutodiff(pm, func);
  // One thread per attention or reduced row (no shuffles) and no outlining:
  // the GPU path's launches run as loops on the CPU.
  buildTfmLowerToLinalgCudaPipeline(pm, /*lanes=*/1);
  buildTfmBufferizeCpuPipeline(pm);
  buildTfmMapToGpuPipeline(pm, /*lanes=*/1, /*outline=*/false);
  buildTfmLowerCpuToLlvmPipeline(pm);
}

void mlir::tfm::registerTfmCudaPipelines() {
  PassPipelineRegistration<>("tfm-lower-to-linalg-cuda",
                             "Flash-attention kernels, then tfm-lower-to-linalg "
                             "(GPU stage 1)",
                             [](OpPassManager &pm) { buildTfmLowerToLinalgCudaPipeline(pm); });
  PassPipelineRegistration<>("tfm-bufferize-cuda",
                             "Bufferize, call cuBLASLt for f32 GEMMs, insert "
                             "deallocations (GPU stage 2)",
                             buildTfmBufferizeCudaPipeline);
  PassPipelineRegistration<>("tfm-map-to-gpu",
                             "Turn linalg on memrefs into outlined GPU kernels "
                             "(GPU stage 3)",
                             [](OpPassManager &pm) { buildTfmMapToGpuPipeline(pm); });
  PassPipelineRegistration<CudaPipelineCLOptions>(
      "tfm-lower-gpu-to-llvm",
      "Kernels to NVVM and PTX/cubin (gpu.binary), host to LLVM (GPU stage 4)",
      [](OpPassManager &pm, const CudaPipelineCLOptions &o) {
        CudaPipelineOptions options = o.get();
        buildTfmLowerGpuToLlvmPipeline(pm, options);
      });
  PassPipelineRegistration<>(
      "tfm-train-gpu-sim",
      "Testing: the GPU path's kernels (except warp reductions) run as CPU "
      "loops, for numeric checks without a GPU",
      [](OpPassManager &pm) { buildTfmTrainGpuSimPipeline(pm, "forward"); });
  PassPipelineRegistration<CudaPipelineCLOptions>(
      "tfm-train-cuda",
      "The training step of @forward (loss and gradients) compiled for an "
      "NVIDIA GPU: kernels in gpu.binary, GEMMs through cuBLASLt",
      [](OpPassManager &pm, const CudaPipelineCLOptions &o) {
        buildTfmTrainCudaPipeline(pm, o.get());
      });
}
