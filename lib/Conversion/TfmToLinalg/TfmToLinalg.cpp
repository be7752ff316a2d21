//===- TfmToLinalg.cpp - the tfm-convert-to-linalg pass -------------------===//

#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

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
    RewritePatternSet patterns(&getContext());
    populateTfmToLinalgPatterns(patterns);
    // Every op has exactly one lowering, and lowerings only create ops of
    // other dialects (or tfm ops that are lowered in the same run).
    GreedyRewriteConfig config;
    config.setMaxIterations(GreedyRewriteConfig::kNoLimit);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    WalkResult left = getOperation().walk([](Operation *op) {
      if (isa<TfmDialect>(op->getDialect())) {
        op->emitError() << "'" << op->getName()
                        << "' could not be lowered to linalg";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
