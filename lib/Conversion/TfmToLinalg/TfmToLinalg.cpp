//===- TfmToLinalg.cpp - the tfm-convert-to-linalg pass -------------------===//

#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCONVERTTOLINALGPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

void mlir::tfm::populateTfmToLinalgPatterns(RewritePatternSet &patterns) {
  populateTfmElementwiseToLinalgPatterns(patterns);
  populateTfmNormToLinalgPatterns(patterns);
  populateTfmMatmulToLinalgPatterns(patterns);
  populateTfmRopeToLinalgPatterns(patterns);
  populateTfmAttentionToLinalgPatterns(patterns);
  populateTfmDocumentToLinalgPatterns(patterns);
  populateTfmLossToLinalgPatterns(patterns);
  populateTfmShapeToLinalgPatterns(patterns);
  populateTfmMoeToLinalgPatterns(patterns);
  populateTfmMambaToLinalgPatterns(patterns);
  populateTfmDeltaNetToLinalgPatterns(patterns);
  populateTfmOptimizerToLinalgPatterns(patterns);
  populateTfmRepeatToScfPatterns(patterns);
}

namespace {

struct TfmConvertToLinalgPass
    : mlir::tfm::impl::TfmConvertToLinalgPassBase<TfmConvertToLinalgPass> {
  /// The target and patterns, built once for every function.
  LogicalResult initialize(MLIRContext *ctx) override {
    // Every tfm op is illegal: one left over (no pattern, or its pattern
    // failed) is reported by the conversion, naming it. The lowerings create
    // ops of these dialects only (and tfm ops, converted in the same run).
    auto conversionTarget = std::make_shared<ConversionTarget>(*ctx);
    conversionTarget->addIllegalDialect<TfmDialect>();
    conversionTarget->addLegalDialect<
        affine::AffineDialect, arith::ArithDialect,
        bufferization::BufferizationDialect, func::FuncDialect,
        linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
        scf::SCFDialect, tensor::TensorDialect>();
    RewritePatternSet set(ctx);
    populateTfmToLinalgPatterns(set);
    target = std::move(conversionTarget);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPartialConversion(getOperation(), *target, patterns)))
      return signalPassFailure();
    // The lowerings build constants and index arithmetic a fold removes
    // (e.g. a scale factor rounded to bf16); fold them here, so the pass's
    // output reads as the lowering meant it.
    GreedyRewriteConfig config;
    config.setMaxIterations(GreedyRewriteConfig::kNoLimit);
    if (failed(applyPatternsGreedily(getOperation(), noPatterns, config)))
      signalPassFailure();
  }

  std::shared_ptr<const ConversionTarget> target;
  FrozenRewritePatternSet patterns;
  /// Folding only.
  FrozenRewritePatternSet noPatterns;
};

} // namespace
