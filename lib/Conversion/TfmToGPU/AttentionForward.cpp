//===- AttentionForward.cpp - tfm.attention / flash_attention kernels -----===//
//
// One warp (or, with lanes = 1, one thread) per query row running the
// online softmax over the visible keys; the algorithm is described in
// TfmAttentionToGpu.cpp.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "tfm/Conversion/TfmToGPU/TfmToGPU.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::attention;

namespace {

struct ConvertAttention : KernelPattern<AttentionOp> {
  using KernelPattern::KernelPattern;
  SmallVector<Value> build(AttentionOp op, OpAdaptor adaptor,
                           const AttentionParams &p,
                           ConversionPatternRewriter &rewriter) const override {
    return buildForward(rewriter, op.getLoc(), adaptor.getQ(), adaptor.getK(),
                        adaptor.getV(), adaptor.getSinks(),
                        adaptor.getDocStart(), p, lanes,
                        cast<RankedTensorType>(op.getType()),
                        /*lseType=*/nullptr);
  }
};

/// The packed form: q, k, v are head slices of qkv; lse is a result too.
struct ConvertFlashAttention : KernelPattern<FlashAttentionOp> {
  using KernelPattern::KernelPattern;
  SmallVector<Value> build(FlashAttentionOp op, OpAdaptor adaptor,
                           const AttentionParams &p,
                           ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value qkv = adaptor.getQkv();
    auto slice = [&](PackedQkvHeads::Range range) -> Value {
      SmallVector<OpFoldResult> offsets = {
          rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
          rewriter.getIndexAttr(range.start), rewriter.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes;
      for (int64_t d = 0; d < 4; ++d)
        sizes.push_back(d == 2
                            ? OpFoldResult(rewriter.getIndexAttr(range.count))
                            : tensor::getMixedSize(rewriter, loc, qkv, d));
      SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(rewriter, loc, qkv, offsets, sizes,
                                            strides);
    };
    PackedQkvHeads heads = op.getPackedHeads();
    Value q = slice(heads.query());
    Value k = slice(heads.key());
    Value v = slice(heads.value());
    return buildForward(rewriter, loc, q, k, v, adaptor.getSinks(),
                        adaptor.getDocStart(), p, lanes,
                        cast<RankedTensorType>(op.getResult().getType()),
                        cast<RankedTensorType>(op.getLse().getType()));
  }
};

} // namespace

void mlir::tfm::populateAttentionForwardToGpuPatternsAndLegality(
    RewritePatternSet &patterns, ConversionTarget &target, int64_t lanes) {
  addKernelPattern<AttentionOp, ConvertAttention>(patterns, target, lanes);
  addKernelPattern<FlashAttentionOp, ConvertFlashAttention>(patterns, target,
                                                            lanes);
}
