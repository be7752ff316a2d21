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
//
//===----------------------------------------------------------------------===//

#include "tfm/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTLINALGMATMULTOBLASPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kSgemm = "tfm_rt_sgemm";

MemRefType anyStrided2d(MLIRContext *ctx) {
  int64_t dyn = ShapedType::kDynamic;
  return MemRefType::get({dyn, dyn}, Float32Type::get(ctx),
                         StridedLayoutAttr::get(ctx, dyn, {dyn, dyn}));
}

func::FuncOp declareSgemm(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(kSgemm))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MLIRContext *ctx = module.getContext();
  MemRefType m = anyStrided2d(ctx);
  auto f = func::FuncOp::create(b, module.getLoc(), kSgemm,
                                b.getFunctionType({m, m, m, b.getI32Type(), b.getI32Type()}, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

struct MatmulToSgemm : OpRewritePattern<linalg::MatmulOp> {
  MatmulToSgemm(MLIRContext *ctx, func::FuncOp callee)
      : OpRewritePattern(ctx), callee(callee) {}

  LogicalResult matchAndRewrite(linalg::MatmulOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "needs memref operands");
    bool transA = isa<linalg::MatmulTransposeAOp>(op.getOperation());
    bool transB = isa<linalg::MatmulTransposeBOp>(op.getOperation());
    if (!transA && !transB && !linalg::MatmulOp::isDefaultIndexingMaps(op.getIndexingMaps()))
      return rewriter.notifyMatchFailure(op, "only plain and transposed-A/B matmuls");
    for (Value v : op->getOperands())
      if (!cast<MemRefType>(v.getType()).getElementType().isF32())
        return rewriter.notifyMatchFailure(op, "only f32");
    Location loc = op.getLoc();
    MemRefType m = anyStrided2d(rewriter.getContext());
    SmallVector<Value> args;
    for (Value v : op->getOperands())
      args.push_back(memref::CastOp::create(rewriter, loc, m, v));
    args.push_back(arith::ConstantIntOp::create(rewriter, loc, transA ? 1 : 0, 32));
    args.push_back(arith::ConstantIntOp::create(rewriter, loc, transB ? 1 : 0, 32));
    func::CallOp::create(rewriter, loc, callee, args);
    rewriter.eraseOp(op);
    return success();
  }
  func::FuncOp callee;
};

struct ConvertLinalgMatmulToBlasPass
    : mlir::tfm::impl::ConvertLinalgMatmulToBlasPassBase<ConvertLinalgMatmulToBlasPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<memref::MemRefDialect, func::FuncDialect, arith::ArithDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool any = false;
    module.walk([&](linalg::MatmulOp op) {
      any |= op.hasPureBufferSemantics();
    });
    if (!any)
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<MatmulToSgemm>(&getContext(), declareSgemm(module));
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
