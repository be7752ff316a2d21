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
  populateTfmLossToLinalgPatterns(patterns);
  populateTfmShapeToLinalgPatterns(patterns);
  populateTfmRepeatToScfPatterns(patterns);
}

namespace {

struct TfmConvertToLinalgPass
    : mlir::tfm::impl::TfmConvertToLinalgPassBase<TfmConvertToLinalgPass> {
  void runOnOperation() override {
    // Every tfm op is illegal: one left over (no pattern, or its pattern
    // failed) is reported by the conversion, naming it. The lowerings create
    // ops of these dialects only (and tfm ops, converted in the same run).
    ConversionTarget target(getContext());
    target.addIllegalDialect<TfmDialect>();
    target.addLegalDialect<affine::AffineDialect, arith::ArithDialect,
                           bufferization::BufferizationDialect,
                           func::FuncDialect, linalg::LinalgDialect,
                           math::MathDialect, memref::MemRefDialect,
                           scf::SCFDialect, tensor::TensorDialect>();
    RewritePatternSet patterns(&getContext());
    populateTfmToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    // The lowerings build constants and index arithmetic a fold removes
    // (e.g. a scale factor rounded to bf16); fold them here, so the pass's
    // output reads as the lowering meant it.
    GreedyRewriteConfig config;
    config.setMaxIterations(GreedyRewriteConfig::kNoLimit);
    if (failed(applyPatternsGreedily(getOperation(),
                                     RewritePatternSet(&getContext()), config)))
      signalPassFailure();
  }
};

} // namespace
