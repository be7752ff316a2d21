//===- TfmAttentionToGpu.cpp - attention ops as flash-attention kernels ---===//
//
// On the GPU path the HF-literal attention (scores [B, Hq, T, S] in memory,
// as the CPU reference lowers it) is replaced, before the linalg lowering,
// by flash-attention kernels that never hold more than one score at a time:
//
//  forward   one warp per query row (b, h, i): lanes split the head dim; for
//            each visible key j: s = scale·q·k_j (lane partials + xor
//            butterfly), softcap, online softmax (running max m, sum l,
//            rescaled accumulators); sinks join the denominator at the end.
//            tfm.flash_attention (packed qkv) also stores lse = m + ln l.
//  backward  A: per query row, the forward pass again (m, l, out), then
//               δ = dout·out and a second pass: p = exp(s − m)/l,
//               dp = dout·v_j, ds = p(dp − δ)(1 − t² under softcap),
//               dq += ds·k_j; m, l, δ (and the sink term) go to [B·Hq·T]
//               scratch buffers — O(T) memory.
//            B: per key row (b, kvh, j), over the query heads of its group
//               and the queries that see j: dv += p·dout_i, dk += ds·q_i.
//               No atomics: the warp owns its key row.
//            C: dsinks[h] = Σ over (b, i) of the sink terms (one thread per h).
//
// The patterns (AttentionForward.cpp, AttentionBackward.cpp) convert at
// tensor level, as a partial dialect conversion: an attention op the
// kernels can take is illegal, so one left over is reported. The rewrite:
// operands are read through `bufferization.to_buffer` (read-only), results are
// fresh `memref.alloc`s handed back with `bufferization.to_tensor restrict`, so
// one-shot bufferization and the deallocation pipeline treat them like any
// buffer.
//
// `lanes` is the number of threads sharing a row: 32 (a warp) on the GPU.
// With lanes = 1 there are no shuffles, the launches run as CPU loops
// (tfm-gpu-launch-to-loops), and the same arithmetic and indexing are
// checked against HF by the gpu-sim tests. f32, bf16 and f16 tensors are
// rewritten (arithmetic and statistics in f32; results rounded on store;
// unlike the reference, probabilities are not rounded to bf16 before P·V,
// which the online softmax cannot do); head dims must be multiples of
// `lanes`, otherwise the linalg path stays.
//
//===----------------------------------------------------------------------===//

#include "tfm/Conversion/Passes.h"
#include "tfm/Conversion/TfmToGPU/TfmToGPU.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMATTENTIONTOGPUPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct TfmAttentionToGpuPass
    : mlir::tfm::impl::TfmAttentionToGpuPassBase<TfmAttentionToGpuPass> {
  using Base::Base;

  /// Checks the options and builds the target and patterns once, for every
  /// function the pass runs on.
  LogicalResult initialize(MLIRContext *ctx) override {
    // A row's lanes run loops whose trip counts depend on the row and
    // shuffle inside them: on a GPU they must be a whole warp (32), or one
    // thread (1, for running the kernels as CPU loops).
    if (lanes != 1 && lanes != 32)
      return emitError(UnknownLoc::get(ctx),
                       "tfm-attention-to-gpu: lanes must be 32 (a warp) or 1");
    // The kernels are built from these dialects; everything else the
    // function holds is left as it is (a partial conversion).
    auto conversionTarget = std::make_shared<ConversionTarget>(*ctx);
    conversionTarget->addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        gpu::GPUDialect, math::MathDialect, memref::MemRefDialect,
        scf::SCFDialect, tensor::TensorDialect>();
    RewritePatternSet set(ctx);
    populateAttentionForwardToGpuPatternsAndLegality(set, *conversionTarget,
                                                     lanes);
    populateAttentionBackwardToGpuPatternsAndLegality(set, *conversionTarget,
                                                      lanes);
    target = std::move(conversionTarget);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPartialConversion(getOperation(), *target, patterns)))
      signalPassFailure();
  }

  std::shared_ptr<const ConversionTarget> target;
  FrozenRewritePatternSet patterns;
};
} // namespace
