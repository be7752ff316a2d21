//===- Passes.td - tfm GPU passes --------------------------*- tablegen -*-===//
//
// The passes of the GPU path after tfm-attention-to-gpu, by job: kernel
// formation on memrefs (lib/GPU/Transforms), the step's contract with the
// CUDA runtime (lib/GPU/RuntimeABI) and debugging (lib/GPU/Debug). One file
// per pass, named after it; function-local passes run on any
// FunctionOpInterface (nest them under func.func).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_GPU_PASSES
#define TFM_GPU_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Kernel formation
//===----------------------------------------------------------------------===//

def TfmMemRefCopyToLinalgPass : InterfacePass<"tfm-memref-copy-to-linalg", "mlir::FunctionOpInterface"> {
  let summary = "Rewrite memref.copy as linalg.copy (GPU path)";
  let description = [{
    On the GPU path every copy between device buffers must run as a
    kernel; as `linalg.copy` it is lowered like any element-wise op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TfmRowReductionsToGpuPass : InterfacePass<"tfm-row-reductions-to-gpu", "mlir::FunctionOpInterface"> {
  let summary = "Launch last-dimension reductions with one warp per row";
  let description = [{
    A `linalg.generic` on f32 memrefs whose loops are parallel except the
    last (a reduction) and whose outputs are combined with `addf`, `mulf`,
    `maximumf`, `minimumf`, `maxnumf` or `minnumf` (norm statistics,
    softmax max and sum, log-sum-exp, backward dot products) becomes a
    `gpu.launch` with one warp per row: lanes stride over the row (coalesced
    loads), then a `gpu.shuffle xor` butterfly (5 steps) combines the
    lanes and lane 0 stores. Other generics are left to the element-wise
    path (`tfm-parallel-loops-to-gpu`).
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", "8", "Rows (warps) per block">,
    Option<"lanes", "lanes", "int64_t", "32",
           "Threads per row: 32 (a warp) or 1 (no shuffles: runs as CPU loops, testing)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect"];
}

def TfmParallelDimsOutermostPass : InterfacePass<"tfm-parallel-dims-outermost", "mlir::FunctionOpInterface"> {
  let summary = "Interchange linalg.generic loops: parallel first, reductions last";
  let description = [{
    A generic reducing over leading dimensions (weight and bias gradients
    summed over tokens) would become host loops around a parallel loop, and
    on the GPU path one launch per token. Interchanged so its parallel
    dimensions come first (in order) and reductions last, it becomes one
    launch with a thread per output looping over the reduction.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TfmParallelLoopsToGpuPass : InterfacePass<"tfm-parallel-loops-to-gpu", "mlir::FunctionOpInterface"> {
  let summary = "Launch each outermost scf.parallel as a flat 1-D GPU grid";
  let description = [{
    Each outermost `scf.parallel` without results becomes a `gpu.launch`
    with one thread per point of its iteration space: the space is
    flattened (last dimension fastest, so neighbouring threads access
    neighbouring elements), `block-size` threads per block, a bounds check
    in the kernel and an `N > 0` guard around the launch. Sequential loops
    inside the body (reduction dimensions) run per thread.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256", "Threads per block">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TfmMergeGpuModulesPass : Pass<"tfm-merge-gpu-modules", "ModuleOp"> {
  let summary = "Merge the gpu.modules of outlined kernels into one";
  let description = [{
    `gpu-kernel-outlining` creates one `gpu.module` per kernel. This pass
    moves every kernel into a single `gpu.module @tfm_kernels` (keeping the
    first module's targets) and retargets each `gpu.launch_func`, so a
    compiled step is one PTX module: loaded once, assembled by `ptxas` once.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TfmStripGpuBinaryTimingsPass
    : Pass<"tfm-strip-gpu-binary-timings", "ModuleOp"> {
  let summary = "Drop compile-time measurements from gpu.binary objects";
  let description = [{
    `gpu-module-to-binary` records how long the NVPTX back end took in each
    object's properties (`LLVMIRToISATimeInMs`, and the like for other
    stages). The value changes from run to run, so the compiled module
    would never be byte-identical for the same input. This pass removes
    every property named `*TimeInMs` from every `#gpu.object` of every
    `gpu.binary`, and leaves all else (the PTX, the other properties, the
    kernel tables) as it was.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TfmGpuLaunchToLoopsPass : InterfacePass<"tfm-gpu-launch-to-loops", "mlir::FunctionOpInterface"> {
  let summary = "Run gpu.launch bodies as CPU loops over blocks and threads (testing)";
  let description = [{
    A `gpu.launch` whose threads do not communicate (no gpu ops besides the
    terminator in its body) is replaced by six nested `scf.for` loops over
    grid and block indices around its body. Used by `tfm-train-gpu-sim` to
    check the GPU path's kernel formation numerically on a CPU. A launch
    with communicating threads (shuffles, barriers) is an error.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Runtime ABI
//===----------------------------------------------------------------------===//

def TfmGlobalsToArenaPass : InterfacePass<"tfm-globals-to-arena", "mlir::FunctionOpInterface"> {
  let summary = "Copy constant globals into buffers at function entry (GPU path)";
  let description = [{
    Kernels cannot read the host module's `memref.global`s. In each
    function, every constant global read with `memref.get_global` is copied
    once at entry into a `memref.alloc` buffer (the CUDA arena), its uses
    are replaced by the buffer, and the buffer is freed before each return.
    Run after `tfm-memref-copy-to-linalg`: the copy is a host copy.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def TfmDumpGpuBinariesPass : Pass<"tfm-dump-gpu-binaries", "ModuleOp"> {
  let summary = "Write every gpu.binary object (PTX, cubin) to a directory";
  let description = [{
    For each object of each `gpu.binary`, writes `<dir>/<binary>.<chip>.ptx`
    (format isa), `.cubin` (bin) or `.fatbin`, so the generated code can be
    read and checked with `ptxas -v`. The IR is not changed.
  }];
  let options = [
    Option<"dir", "dir", "std::string", "\".\"", "Output directory">
  ];
}

#endif // TFM_GPU_PASSES
