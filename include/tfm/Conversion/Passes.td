//===- Passes.td - tfm conversion passes -------------------*- tablegen -*-===//

#ifndef TFM_CONVERSION_PASSES
#define TFM_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTfmToLinalgPass : Pass<"convert-tfm-to-linalg", "ModuleOp"> {
  let summary = "Lower tfm ops to linalg, tensor, arith, math and scf";
  let description = [{
    Every tfm op becomes tensor-level upstream IR: element-wise and
    reduction ops become `linalg.generic`, GEMMs `linalg.matmul` (transposed
    B for HF `[out, in]` weights), shape ops `tensor` reshapes and slices,
    and `tfm.repeat` an `scf.for` over layers (with `scf.index_switch` over
    layer kinds) that slices the stacked weights per layer. Arithmetic on
    bf16/f16 runs in f32 and rounds on store; statistics are f32.
    Fails, naming the op, if any tfm op is left.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect",
    "::mlir::bufferization::BufferizationDialect"
  ];
}

def ConvertLinalgMatmulToBlasPass : Pass<"convert-linalg-matmul-to-blas", "ModuleOp"> {
  let summary = "Call the runtime GEMM (OpenBLAS) for f32 linalg.matmul on memrefs";
  let description = [{
    After bufferization, each f32 `linalg.matmul` (plain, transposed-A or
    transposed-B) on memrefs becomes a call to `tfm_rt_sgemm` (declared
    with the C interface), which the runtime implements with `cblas_sgemm`.
    Other element types are left to the generic lowering.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", "\"tfm_rt\"",
           "Callee prefix: <prefix>_sgemm and <prefix>_sgemm_batched "
           "(tfm_rt: OpenBLAS on the CPU; tfm_cuda: cuBLASLt)">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect"];
}

def LowerDynamicExpandShapePass : Pass<"tfm-lower-dynamic-expand-shape", "ModuleOp"> {
  let summary = "Rewrite memref.expand_shape that splits one dynamic size into several";
  let description = [{
    `expand-strided-metadata` in MLIR 22 crashes on a `memref.expand_shape`
    whose reassociation group has more than one dynamic output size (e.g.
    `[B*T, K] -> [B, T, K]`, which every GEMM on activations produces). For
    a source with the identity layout such an expansion is a
    `memref.reinterpret_cast` with row-major strides, which this pass
    emits. Other expansions are left to the upstream lowering.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TfmMemRefCopyToLinalgPass : Pass<"tfm-memref-copy-to-linalg", "ModuleOp"> {
  let summary = "Rewrite memref.copy as linalg.copy (GPU path)";
  let description = [{
    On the GPU path every copy between device buffers must run as a
    kernel; as `linalg.copy` it is lowered like any element-wise op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TfmParallelLoopsToGpuPass : Pass<"tfm-parallel-loops-to-gpu", "ModuleOp"> {
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

def TfmAttentionToGpuPass : Pass<"tfm-attention-to-gpu", "ModuleOp"> {
  let summary = "Flash-attention kernels for tfm.attention and tfm.attention_backward";
  let description = [{
    Before the linalg lowering, each `tfm.attention` (f32, bf16 or f16
    storage; f32 arithmetic) becomes a
    `gpu.launch` with one lane group per query row running the online
    softmax over the visible keys (no score matrix in memory), and each
    `tfm.attention_backward` three launches: per query row (dq and the row
    statistics m, l, delta in O(B·Hq·T) scratch), per key row (dk, dv over
    the query heads of its group; no atomics) and per head (dsinks).
    Operands are read through `bufferization.to_buffer`; results are fresh
    buffers returned with `bufferization.to_tensor restrict`.

    `lanes` threads share a row: 32 (a warp, with `gpu.shuffle` butterflies
    for the dot products; loops with row-dependent trip counts contain the
    shuffles, so a row must be a whole warp) or 1. With `lanes=1` the
    kernels contain no gpu ops
    and `tfm-gpu-launch-to-loops` can run them on the CPU (the gpu-sim
    tests). Ops with other element types, or head dims not a multiple of
    `lanes`, are left for the linalg lowering. `tfm.flash_attention` is
    handled like `tfm.attention` on its head slices and also stores lse.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "32", "Threads per query/key row: 32 or 1">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def TfmRowReductionsToGpuPass : Pass<"tfm-row-reductions-to-gpu", "ModuleOp"> {
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

def TfmGpuLaunchToLoopsPass : Pass<"tfm-gpu-launch-to-loops", "ModuleOp"> {
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

def TfmGlobalsToArenaPass : Pass<"tfm-globals-to-arena", "ModuleOp"> {
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

def TfmParallelDimsOutermostPass : Pass<"tfm-parallel-dims-outermost", "ModuleOp"> {
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

#endif // TFM_CONVERSION_PASSES
