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
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
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

/// The allocation or argument a memref view is of.
Value rootOf(Value memref) {
  while (true) {
    if (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
      memref = view.getViewSource();
    else if (auto cast = memref.getDefiningOp<memref::CastOp>())
      memref = cast.getSource();
    else
      return memref;
  }
}

/// Whether `root` is a buffer allocated here: then only values derived
/// from it in SSA can alias it.
bool isAllocation(Value root) {
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>();
}

/// The `linalg.fill` of 0.0 into exactly `c` that `op` can replace: the
/// closest earlier op in the block touching c's buffer, with nothing in
/// between that could read or write it. C must be (a view of) a fresh
/// allocation that `op` does not also read; an op in between with memory
/// effects on anything not provably another allocation stops the search.
linalg::FillOp zeroFillBefore(linalg::LinalgOp op, Value c) {
  Value root = rootOf(c);
  if (!isAllocation(root))
    return nullptr;
  for (OpOperand *input : op.getDpsInputOperands())
    if (rootOf(input->get()) == root)
      return nullptr;
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev);
        fill && fill.getOutputs().front() == c) {
      // ±0.0: the products are then the result (a sum that is exactly
      // zero may keep the sign the products give it).
      return matchPattern(fill.getInputs().front(), m_AnyZeroFloat()) ? fill
                                                                      : nullptr;
    }
    bool touches = false;
    prev->walk([&](Operation *inner) {
      if (isMemoryEffectFree(inner))
        return; // views, casts, dims
      for (Value v : inner->getOperands())
        if (isa<BaseMemRefType>(v.getType()) &&
            (rootOf(v) == root || !isAllocation(rootOf(v))))
          touches = true;
    });
    if (touches)
      return nullptr;
  }
  return nullptr;
}

/// Whether every operand of `op` is an f32 memref (what the BLAS call takes).
bool isF32OnBuffers(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() &&
         llvm::all_of(op->getOperandTypes(), [](Type t) {
           return cast<MemRefType>(t).getElementType().isF32();
         });
}

/// Replaces a GEMM-like linalg op on f32 memrefs with a call of `callee`.
LogicalResult replaceWithCall(linalg::LinalgOp op, func::FuncOp callee,
                              bool transA, bool transB, linalg::FillOp zeroFill,
                              PatternRewriter &rewriter) {
  if (!isF32OnBuffers(op))
    return rewriter.notifyMatchFailure(op, "needs f32 memref operands");
  Location loc = op.getLoc();
  MemRefType m =
      anyStrided(rewriter.getContext(),
                 cast<MemRefType>(op->getOperand(0).getType()).getRank());
  if (zeroFill)
    rewriter.eraseOp(zeroFill);
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

/// The call of `callee` (or its `_overwrite` form, when the zero fill of
/// C before `op` can go) on rank-`rank` memrefs in place of `op`.
LogicalResult replaceWithGemmCall(linalg::LinalgOp op, ModuleOp module,
                                  const std::string &callee, unsigned rank,
                                  bool foldZeroFill, bool transA, bool transB,
                                  PatternRewriter &rewriter) {
  linalg::FillOp fill = foldZeroFill && isF32OnBuffers(op)
                            ? zeroFillBefore(op, op.getDpsInits().front())
                            : nullptr;
  return replaceWithCall(
      op, declareGemm(module, fill ? callee + "_overwrite" : callee, rank),
      transA, transB, fill, rewriter);
}

struct MatmulToSgemm : OpRewritePattern<linalg::MatmulOp> {
  MatmulToSgemm(MLIRContext *ctx, ModuleOp module, std::string callee,
                bool foldZeroFill)
      : OpRewritePattern(ctx), module(module), callee(std::move(callee)),
        foldZeroFill(foldZeroFill) {}
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    bool transA = isa<linalg::MatmulTransposeAOp>(op.getOperation());
    bool transB = isa<linalg::MatmulTransposeBOp>(op.getOperation());
    if (!transA && !transB &&
        !linalg::MatmulOp::isDefaultIndexingMaps(op.getIndexingMaps()))
      return rewriter.notifyMatchFailure(
          op, "only plain and transposed-A/B matmuls");
    return replaceWithGemmCall(op, module, callee, 2, foldZeroFill, transA,
                               transB, rewriter);
  }
  ModuleOp module;
  std::string callee;
  bool foldZeroFill;
};

/// Batched GEMMs (attention's per-head products): one BLAS call per batch.
struct BatchMatmulToSgemm : OpRewritePattern<linalg::BatchMatmulOp> {
  BatchMatmulToSgemm(MLIRContext *ctx, ModuleOp module, std::string callee,
                     bool foldZeroFill)
      : OpRewritePattern(ctx), module(module), callee(std::move(callee)),
        foldZeroFill(foldZeroFill) {}
  LogicalResult matchAndRewrite(linalg::BatchMatmulOp op,
                                PatternRewriter &rewriter) const override {
    bool transA = isa<linalg::BatchMatmulTransposeAOp>(op.getOperation());
    bool transB = isa<linalg::BatchMatmulTransposeBOp>(op.getOperation());
    if (!transA && !transB &&
        !linalg::BatchMatmulOp::isDefaultIndexingMaps(op.getIndexingMaps()))
      return rewriter.notifyMatchFailure(
          op, "only plain and transposed-A/B batch matmuls");
    return replaceWithGemmCall(op, module, callee, 3, foldZeroFill, transA,
                               transB, rewriter);
  }
  ModuleOp module;
  std::string callee;
  bool foldZeroFill;
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
    patterns.add<MatmulToSgemm>(&getContext(), module, prefix + "_sgemm",
                                foldZeroFill);
    patterns.add<BatchMatmulToSgemm>(&getContext(), module,
                                     prefix + "_sgemm_batched", foldZeroFill);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
