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

#endif // TFM_CONVERSION_PASSES
