//===- LinalgMatmulToBlas.cpp - f32 GEMMs to the runtime BLAS call --------===//
//
// Generated loops reach ~1 GFLOP/s on a GEMM; OpenBLAS reaches ~100x that
// (bench/cpu_gemm). After bufferization each f32 linalg.matmul on memrefs
// becomes a call of
//
//   tfm_rt_sgemm(A, B, C, transpose_a, transpose_b)  // C += op(A)·op(B)
//
// declared with the C interface, so the runtime receives memref descriptors
// (any strides; it falls back to a loop when rows are not contiguous).
// With prefix=tfm_cuda the same calls go to the CUDA runtime's cuBLASLt
// GEMMs (docs/gpu.md).
//
//===----------------------------------------------------------------------===//

#include "tfm/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMLINALGMATMULTOBLASPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

MemRefType anyStrided(MLIRContext *ctx, unsigned rank) {
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t> shape(rank, dyn);
  return MemRefType::get(shape, Float32Type::get(ctx),
                         StridedLayoutAttr::get(ctx, dyn, shape));
}

/// `name(A, B, C, i32 transA, i32 transB)` on rank-`rank` memrefs.
func::FuncOp declareGemm(ModuleOp module, StringRef name, unsigned rank) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MemRefType m = anyStrided(module.getContext(), rank);
  auto f = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType({m, m, m, b.getI32Type(), b.getI32Type()}, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

/// Replaces a GEMM-like linalg op on f32 memrefs with a call of `callee`.
LogicalResult replaceWithCall(linalg::LinalgOp op, func::FuncOp callee,
                              bool transA, bool transB,
                              PatternRewriter &rewriter) {
  if (!op.hasPureBufferSemantics())
    return rewriter.notifyMatchFailure(op, "needs memref operands");
  for (Value v : op->getOperands())
    if (!cast<MemRefType>(v.getType()).getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "only f32");
  Location loc = op.getLoc();
  MemRefType m =
      anyStrided(rewriter.getContext(),
                 cast<MemRefType>(op->getOperand(0).getType()).getRank());
  SmallVector<Value> args;
  for (Value v : op->getOperands())
    args.push_back(memref::CastOp::create(rewriter, loc, m, v));
  args.push_back(
      arith::ConstantIntOp::create(rewriter, loc, transA ? 1 : 0, 32));
  args.push_back(
      arith::ConstantIntOp::create(rewriter, loc, transB ? 1 : 0, 32));
  func::CallOp::create(rewriter, loc, callee, args);
  rewriter.eraseOp(op);
  return success();
}

struct MatmulToSgemm : OpRewritePattern<linalg::MatmulOp> {
  MatmulToSgemm(MLIRContext *ctx, ModuleOp module, std::string callee)
      : OpRewritePattern(ctx), module(module), callee(std::move(callee)) {}
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    bool transA = isa<linalg::MatmulTransposeAOp>(op.getOperation());
    bool transB = isa<linalg::MatmulTransposeBOp>(op.getOperation());
    if (!transA && !transB &&
        !linalg::MatmulOp::isDefaultIndexingMaps(op.getIndexingMaps()))
      return rewriter.notifyMatchFailure(
          op, "only plain and transposed-A/B matmuls");
    return replaceWithCall(op, declareGemm(module, callee, 2), transA, transB,
                           rewriter);
  }
  ModuleOp module;
  std::string callee;
};

/// Batched GEMMs (attention's per-head products): one BLAS call per batch.
struct BatchMatmulToSgemm : OpRewritePattern<linalg::BatchMatmulOp> {
  BatchMatmulToSgemm(MLIRContext *ctx, ModuleOp module, std::string callee)
      : OpRewritePattern(ctx), module(module), callee(std::move(callee)) {}
  LogicalResult matchAndRewrite(linalg::BatchMatmulOp op,
                                PatternRewriter &rewriter) const override {
    bool transA = isa<linalg::BatchMatmulTransposeAOp>(op.getOperation());
    bool transB = isa<linalg::BatchMatmulTransposeBOp>(op.getOperation());
    if (!transA && !transB &&
        !linalg::BatchMatmulOp::isDefaultIndexingMaps(op.getIndexingMaps()))
      return rewriter.notifyMatchFailure(
          op, "only plain and transposed-A/B batch matmuls");
    return replaceWithCall(op, declareGemm(module, callee, 3), transA, transB,
                           rewriter);
  }
  ModuleOp module;
  std::string callee;
};

struct TfmLinalgMatmulToBlasPass
    : mlir::tfm::impl::TfmLinalgMatmulToBlasPassBase<
          TfmLinalgMatmulToBlasPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<memref::MemRefDialect, func::FuncDialect,
                    arith::ArithDialect>();
  }
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RewritePatternSet patterns(&getContext());
    patterns.add<MatmulToSgemm>(&getContext(), module, prefix + "_sgemm");
    patterns.add<BatchMatmulToSgemm>(&getContext(), module,
                                     prefix + "_sgemm_batched");
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
