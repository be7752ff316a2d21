//===- TfmToLinalg.h - tfm to linalg patterns -------------------*- C++ -*-===//

#ifndef TFM_CONVERSION_TFMTOLINALG_TFMTOLINALG_H
#define TFM_CONVERSION_TFMTOLINALG_TFMTOLINALG_H

#include "mlir/IR/PatternMatch.h"

#include <vector>

namespace mlir::tfm {

class RopeScalingAttr;

/// Patterns lowering each tfm op family to tensor-level upstream IR.
void populateTfmElementwiseToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmNormToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmMatmulToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmRopeToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmAttentionToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmDocumentToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmLossToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmShapeToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmMoeToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmMambaToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmDeltaNetToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmOptimizerToLinalgPatterns(RewritePatternSet &patterns);
void populateTfmRepeatToScfPatterns(RewritePatternSet &patterns);

/// All of the above.
void populateTfmToLinalgPatterns(RewritePatternSet &patterns);

/// RoPE inverse frequencies (rotary_dim / 2 of them) as the HF rope
/// initialisers compute them; `longTable` selects longrope's long factors.
std::vector<double> computeRopeInvFreq(double theta, int64_t rotaryDim,
                                       RopeScalingAttr scaling,
                                       bool longTable = false);

} // namespace mlir::tfm

#endif // TFM_CONVERSION_TFMTOLINALG_TFMTOLINALG_H
