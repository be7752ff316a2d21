//===- Passes.td - tfm conversion passes -------------------*- tablegen -*-===//

#ifndef TFM_CONVERSION_PASSES
#define TFM_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def TfmConvertToLinalgPass
    : InterfacePass<"tfm-convert-to-linalg", "mlir::FunctionOpInterface"> {
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

def TfmLinalgMatmulToBlasPass : Pass<"tfm-linalg-matmul-to-blas", "ModuleOp"> {
  let summary = "Call the runtime GEMM (OpenBLAS) for f32 linalg.matmul on memrefs";
  let description = [{
    After bufferization, each f32 `linalg.matmul` (plain, transposed-A or
    transposed-B) on memrefs becomes a call to `tfm_rt_sgemm` (declared
    with the C interface), which the runtime implements with `cblas_sgemm`.
    Other element types are left to the generic lowering.

    With `fold-zero-fill`, a GEMM whose C (a view of a fresh allocation the
    GEMM does not also read) was filled with 0.0 just before (no op in
    between touching C's buffer or a buffer of unknown provenance) calls
    `<prefix>_sgemm_overwrite` / `<prefix>_sgemm_batched_overwrite`
    (C = op(A)·op(B), BLAS's beta = 0) and the fill is dropped: C is then
    written once instead of zeroed, read and written.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", "\"tfm_rt\"",
           "Callee prefix: <prefix>_sgemm and <prefix>_sgemm_batched "
           "(tfm_rt: OpenBLAS on the CPU; tfm_cuda: cuBLASLt)">,
    Option<"foldZeroFill", "fold-zero-fill", "bool", "false",
           "Call the *_overwrite GEMMs for C just filled with zeros and drop "
           "the fill (the CPU runtime has them)">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect"];
}

def TfmLowerDynamicExpandShapePass
    : InterfacePass<"tfm-lower-dynamic-expand-shape", "mlir::FunctionOpInterface"> {
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

def TfmReadOnlyArgumentsPass
    : Pass<"tfm-read-only-arguments", "ModuleOp"> {
  let summary = "Entry functions write only the arguments marked "
                "bufferization.writable = true";
  let description = [{
    One-shot bufferization treats a function's arguments as writable unless
    told otherwise, so an op whose destination is an argument would write
    into the caller's buffer: parameters, tokens or cotangents the caller
    passed to be read. Before bufferization, this pass marks every tensor
    argument of a public function `bufferization.writable = false` unless it
    already says `bufferization.writable = true`; bufferization then copies
    where an op would have written such an argument.

    An argument marked `true` is updated in place (the optimizer step's
    parameters and state: tfm-add-optimizer-step marks them). It is also
    given `tfm.updated_in_place`, which, unlike bufferization's own
    attribute, survives bufferization: tfm-return-arguments-in-place reads
    it. The runtime copies host data passed for such an argument first
    (CompiledFunction).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def TfmReturnArgumentsInPlacePass
    : Pass<"tfm-return-arguments-in-place", "ModuleOp"> {
  let summary = "Return an entry's argument buffers, not the clones buffer "
                "deallocation makes of them";
  let description = [{
    An entry function that updates an argument in place (the optimizer step
    writes the new parameters and state into the old ones' buffers) returns
    a value equivalent to that argument. The ownership-based deallocation
    pipeline must hand the caller a buffer it owns, so it returns a
    `bufferization.clone` of the argument: a copy of every parameter and
    state tensor per step, into buffers allocated anew.

    This pass runs after that pipeline and returns the argument itself where
    a public function with no callers in the module returns a clone of an
    argument marked `tfm.updated_in_place` (tfm-read-only-arguments), the
    clone has no other use, and nothing between it and the return writes
    memory (only other clones and deallocations). The caller then gets back
    the buffer it passed in: tfm's runtime recognises results that are
    arguments (CompiledFunction::runResident) and does not free them.
    Read-only arguments returned as they are keep their clones (the caller
    may free what it passed), and so do functions the module calls (their
    callers own what they return).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def TfmVectorizeInnerLoopsPass
    : InterfacePass<"tfm-vectorize-inner-loops", "mlir::FunctionOpInterface"> {
  let summary = "Vector loops for linalg.generic's innermost contiguous dimension";
  let description = [{
    On memrefs, before `convert-linalg-to-loops`: a `linalg.generic` whose
    innermost loop walks every operand that depends on it contiguously
    (the loop's dimension is the operand's last, with stride 1) becomes
    `scf.for` loops over the outer dimensions around a loop over the
    innermost one in steps of `lanes`: `vector.load`s, the body's
    element-wise ops on `vector<lanes x T>` (values that do not depend on
    the innermost loop stay scalar and are broadcast where needed), then
    `vector.store`s; the last `size mod lanes` iterations run the scalar
    body. Operands that do not depend on the innermost loop are loaded once
    per outer iteration; a `memref.load` in the body at the same place for
    every innermost iteration (a label per row) stays scalar. When the
    innermost loop does not qualify but a parallel loop does (contiguous in
    every operand that depends on it), that loop is moved innermost
    (`linalg::interchangeGenericOp`; reduction loops keep their order, so
    results are bit-identical). `linalg.transpose` and `linalg.broadcast`
    become generics first, so copies along the last dimension qualify.

    An innermost *reduction* (`addf`, `mulf`, `maximumf`, `minimumf`,
    `maxnumf`, `minnumf` of the output and one value, the output used
    nowhere else) accumulates `lanes` partial results, lane `j` taking
    iterations `j, j + lanes, ...` from the combiner's identity; then the
    initial value and the lanes combine in lane order (`vector.reduction`,
    which LLVM keeps ordered without `reassoc`), and the scalar tail
    follows. The order is fixed by the IR, so the same op gives the same
    bits in every program it appears in (recomputation relies on it); it
    differs from the sequential order in rounding only. LLVM cannot do this
    itself without `reassoc`, which would let its choice of vector width,
    made per loop, change the order.

    Then `math.exp`, `math.log` and `math.tanh` on f32 vectors become
    MLIR's polynomial approximations (scalar ones keep their libm calls),
    and vector `math.fma`, `floor`, `absf`, ... the LLVM intrinsics, which
    `convert-math-to-libm` would otherwise split into scalar calls.

    Left as they are: other element types than f32, i1, i32, i64 and
    index (f64 and bf16 bodies keep the scalar lowering), bodies with ops
    that are not element-wise, a static innermost size below `lanes`,
    operands read across the innermost dimension (transposes) or with a
    non-unit innermost stride, loads whose place changes with the innermost
    loop (gathers) or from what the op writes.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", "16",
           "Vector length (16 f32 lanes: one AVX-512 register)">,
    Option<"approximateMath", "approximate-math", "bool", "true",
           "Polynomial exp, log and tanh on f32 vectors">
  ];
  let dependentDialects = [
    "::mlir::vector::VectorDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def TfmOutlineLoopBodiesPass : Pass<"tfm-outline-loop-bodies", "ModuleOp"> {
  let summary = "Move large scf loop and branch bodies into functions of their own";
  let description = [{
    On memrefs, after bufferization and before linalg becomes loops: each
    single-block region of an `scf.for`, `scf.if` or `scf.index_switch`
    holding a structured op or a loop and at least `min-ops` operations
    (inner regions first, so an outer body counts its outlined
    inner bodies as calls) becomes a private `no_inline` function called in
    its place (`mlir::outlineSingleBlockRegion`: captured values become
    arguments, the yielded values results). A training step is otherwise one
    function per entry with every layer kind's forward and backward inside
    the scans, and LLVM's loop passes take time superlinear in function
    size: a 4-layer Qwen3-Next step spent 40 s in LLVM's -O3 as one
    function.
  }];
  let options = [
    Option<"minOps", "min-ops", "unsigned", "300",
           "Outline regions with at least this many operations (nested ones counted)">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def TfmAttentionToGpuPass
    : InterfacePass<"tfm-attention-to-gpu", "mlir::FunctionOpInterface"> {
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

#endif // TFM_CONVERSION_PASSES
