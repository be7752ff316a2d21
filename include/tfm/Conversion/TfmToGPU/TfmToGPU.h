//===- TfmToGPU.h - tfm ops as GPU kernels, on tensors ----------*- C++ -*-===//
//
// Patterns and legality per op family, composed by tfm-attention-to-gpu
// (and by anyone building their own GPU pipeline): each populate function
// marks the ops its patterns convert illegal (where they can be converted)
// next to the patterns that convert them.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CONVERSION_TFMTOGPU_TFMTOGPU_H
#define TFM_CONVERSION_TFMTOGPU_TFMTOGPU_H

#include <cstdint>

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
} // namespace mlir

namespace mlir::tfm {

/// tfm.attention and tfm.flash_attention as flash-attention forward kernels
/// with `lanes` (32 or 1) threads per query row.
void populateAttentionForwardToGpuPatternsAndLegality(
    RewritePatternSet &patterns, ConversionTarget &target, int64_t lanes);

/// tfm.attention_backward as the three backward kernels (per query row, per
/// key row, per head for the sinks).
void populateAttentionBackwardToGpuPatternsAndLegality(
    RewritePatternSet &patterns, ConversionTarget &target, int64_t lanes);

} // namespace mlir::tfm

#endif // TFM_CONVERSION_TFMTOGPU_TFMTOGPU_H
