//===- PipelineRegistration.cpp - the pipelines by name -------------------===//
//
// Registers every pipeline of Pipelines.h for tfm-opt and textual pipeline
// strings; the library builds them through the typed functions instead.
//
//===----------------------------------------------------------------------===//

#include "tfm/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct TrainPipelineCLOptions
    : public PassPipelineOptions<TrainPipelineCLOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("Run tfm-fuse first"),
                    llvm::cl::init(true)};
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("tfm-plan-recompute budget after tfm-autodiff "
                     "(save-all: none)"),
      llvm::cl::init("save-all")};
};

struct CudaPipelineCLOptions
    : public PassPipelineOptions<CudaPipelineCLOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target SM, e.g. sm_80 or sm_90"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (+ptx80 or newer for sm_90)"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX text), "
                     "bin (cubin via ptxas), fatbin"),
      llvm::cl::init("isa")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (libdevice, ptxas); default "
                     "$CUDA_HOME or /usr/local/cuda"),
      llvm::cl::init("")};
  Option<std::string> func{
      *this, "func",
      llvm::cl::desc("Function to differentiate (tfm-train-cuda)"),
      llvm::cl::init("forward")};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Run tfm-fuse first (tfm-train-cuda)"),
                    llvm::cl::init(true)};
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("tfm-plan-recompute budget after tfm-autodiff "
                     "(tfm-train-cuda; save-all: none)"),
      llvm::cl::init("save-all")};

  tfm::CudaPipelineOptions get() const {
    tfm::CudaPipelineOptions o;
    o.chip = chip;
    o.features = features;
    o.format = format;
    o.toolkit = toolkit;
    o.autodiffFunc = func;
    o.fuse = fuse;
    o.recompute = recompute;
    return o;
  }
};
} // namespace

void tfm::registerTfmPipelines() {
  PassPipelineRegistration<>(
      "tfm-fuse",
      "Fuse HF-literal tfm IR into the fused training ops (GLUs, packed "
      "projections, flash attention, residual norms, the LM-head loss)",
      buildTfmFusePipeline);
  PassPipelineRegistration<>("tfm-lower-to-linalg",
                             "Lower tfm ops to linalg/tensor/scf (CPU stage 1)",
                             buildTfmLowerToLinalgPipeline);
  PassPipelineRegistration<>(
      "tfm-bufferize-cpu",
      "Bufferize, call BLAS for GEMMs, insert deallocations (CPU stage 2)",
      [](OpPassManager &pm) { buildTfmBufferizeCpuPipeline(pm); });
  PassPipelineRegistration<>(
      "tfm-lower-cpu-to-llvm",
      "Lower loops and memrefs to the LLVM dialect (CPU stage 3)",
      buildTfmLowerCpuToLlvmPipeline);
  PassPipelineRegistration<TrainPipelineCLOptions>(
      "tfm-train-cpu",
      "The training step of @forward (tfm-fuse, then loss and gradients, "
      "tfm-autodiff) compiled for the CPU down to LLVM",
      [](OpPassManager &pm, const TrainPipelineCLOptions &o) {
        CpuPipelineOptions options;
        options.autodiffFunc = "forward";
        options.fuse = o.fuse;
        options.recompute = o.recompute;
        buildTfmTrainCpuPipeline(pm, options);
      });
  PassPipelineRegistration<>(
      "tfm-lower-to-linalg-cuda",
      "Flash-attention kernels, then tfm-lower-to-linalg (GPU stage 1)",
      [](OpPassManager &pm) { buildTfmLowerToLinalgCudaPipeline(pm); });
  PassPipelineRegistration<>("tfm-bufferize-cuda",
                             "Bufferize, call cuBLASLt for f32 GEMMs, insert "
                             "deallocations (GPU stage 2)",
                             buildTfmBufferizeCudaPipeline);
  PassPipelineRegistration<>(
      "tfm-map-to-gpu",
      "Turn linalg on memrefs into outlined GPU kernels (GPU stage 3)",
      [](OpPassManager &pm) { buildTfmMapToGpuPipeline(pm); });
  PassPipelineRegistration<CudaPipelineCLOptions>(
      "tfm-lower-gpu-to-llvm",
      "Kernels to NVVM and PTX/cubin (gpu.binary), host to LLVM (GPU stage 4)",
      [](OpPassManager &pm, const CudaPipelineCLOptions &o) {
        buildTfmLowerGpuToLlvmPipeline(pm, o.get());
      });
  PassPipelineRegistration<TrainPipelineCLOptions>(
      "tfm-train-gpu-sim",
      "Testing: the GPU path's kernels (except warp reductions) run as CPU "
      "loops, for numeric checks without a GPU",
      [](OpPassManager &pm, const TrainPipelineCLOptions &o) {
        buildTfmTrainGpuSimPipeline(pm, "forward", o.fuse);
      });
  PassPipelineRegistration<CudaPipelineCLOptions>(
      "tfm-train-cuda",
      "The training step of @forward (loss and gradients) compiled for an "
      "NVIDIA GPU: kernels in gpu.binary, GEMMs through cuBLASLt",
      [](OpPassManager &pm, const CudaPipelineCLOptions &o) {
        buildTfmTrainCudaPipeline(pm, o.get());
      });
}
