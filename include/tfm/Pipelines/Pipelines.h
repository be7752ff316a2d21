//===- Pipelines.h - named tfm compilation pipelines ------------*- C++ -*-===//
//
// The stages of the CPU path, each a named pipeline that tfm-opt can run
// (and stop after):
//
//   tfm-lower-to-linalg   tfm -> linalg/tensor/scf/arith/math
//   tfm-bufferize-cpu     tensors -> memrefs, BLAS calls, deallocation
//   tfm-lower-cpu-to-llvm memrefs/loops -> LLVM dialect
//   tfm-train-cpu         tfm-autodiff{func=forward}, then all three
//
//===----------------------------------------------------------------------===//

#ifndef TFM_PIPELINES_PIPELINES_H
#define TFM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::tfm {

/// tfm-fuse: func.func(tfm-fuse-glu, tfm-pack-projections,
/// tfm-fuse-attention, tfm-fuse-residual-rmsnorm, tfm-fuse-lm-head-loss),
/// canonicalize. Fused parameters keep their HF sources (mapping = fuse).
void buildTfmFusePipeline(OpPassManager &pm);

struct CpuPipelineOptions {
  /// Hand f32 GEMMs to OpenBLAS (otherwise they become loops; bench/ only).
  bool useBlas = true;
  /// Run tfm-autodiff on this function first (empty: forward only).
  std::string autodiffFunc;
  /// Run tfm-fuse first (before autodiff).
  bool fuse = true;
  /// After autodiff, tfm-plan-recompute{budget=recompute} (save-all: not
  /// run).
  std::string recompute = "save-all";
};

void buildTfmLowerToLinalgPipeline(OpPassManager &pm);
void buildTfmBufferizeCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options = {});
void buildTfmLowerCpuToLlvmPipeline(OpPassManager &pm);
void buildTfmTrainCpuPipeline(OpPassManager &pm,
                              const CpuPipelineOptions &options = {});

/// Whether `chip` names an NVIDIA target: sm_<major><minor>[a|f], sm_50 or
/// later (sm_80, sm_90a).
bool isSmName(llvm::StringRef chip);

/// The GPU path (lib/Pipelines/CudaPipelines.cpp, docs/gpu.md). Invalid
/// options (chip, format) make the built pipeline fail with a diagnostic.
struct CudaPipelineOptions {
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  /// isa: PTX text in gpu.binary; bin: cubin through ptxas; fatbin.
  std::string format = "isa";
  /// CUDA toolkit for libdevice and ptxas (empty: $CUDA_HOME or
  /// /usr/local/cuda).
  std::string toolkit;
  /// Run tfm-autodiff on this function first (empty: forward only).
  std::string autodiffFunc;
  /// Run tfm-fuse first (before autodiff).
  bool fuse = true;
  /// After autodiff, tfm-plan-recompute{budget=recompute} (save-all: not
  /// run).
  std::string recompute = "save-all";
};

void buildTfmLowerToLinalgCudaPipeline(OpPassManager &pm,
                                       int64_t attentionLanes = 32);
void buildTfmBufferizeCudaPipeline(OpPassManager &pm);
/// `lanes`: threads per reduced row (32, or 1 for simulation); `outline`:
/// kernels into the gpu.module, or (simulation) launches run as CPU loops.
void buildTfmMapToGpuPipeline(OpPassManager &pm, int64_t lanes = 32,
                              bool outline = true);
void buildTfmLowerGpuToLlvmPipeline(OpPassManager &pm,
                                    const CudaPipelineOptions &options);
void buildTfmTrainCudaPipeline(OpPassManager &pm,
                               const CudaPipelineOptions &options);
/// Testing: the GPU path's kernel formation with every launch run as CPU
/// loops (tfm-gpu-launch-to-loops); warp reductions stay linalg loops.
void buildTfmTrainGpuSimPipeline(OpPassManager &pm,
                                 const std::string &autodiffFunc,
                                 bool fuse = true);

/// Registers the pipelines above with their names (CPU and GPU); the
/// library builds them through the functions instead.
void registerTfmPipelines();

} // namespace mlir::tfm

#endif // TFM_PIPELINES_PIPELINES_H
