//===- AttentionKernels.h - building flash-attention kernels ----*- C++ -*-===//
//
// Internal to lib/Conversion/TfmToGPU: the kernel-building pieces the
// forward (AttentionForward.cpp) and backward (AttentionBackward.cpp)
// patterns share. The algorithm is described in TfmAttentionToGpu.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CONVERSION_TFMTOGPU_ATTENTIONKERNELS_H
#define TFM_LIB_CONVERSION_TFMTOGPU_ATTENTIONKERNELS_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <optional>

namespace mlir::tfm::attention {

/// Rows (warps) per block of every attention launch.
inline constexpr int64_t kWarpsPerBlock = 4;

struct AttentionParams {
  double scale;
  bool causal;
  std::optional<int64_t> window;
  std::optional<double> softcap;
  int64_t hq, hkv, d, dv;
};

/// Builds kernel code: constants, lane slices, butterflies, scores.

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  int64_t lanes;
  Value lane; // this thread's lane in its row group

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value max(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value iadd(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value imul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value imin(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value imax(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }

  /// Head-dim index of this lane's c-th element.
  Value dimIndex(int64_t c) { return iadd(lane, idx(c * lanes)); }

  /// Loads as f32 (bf16/f16 storage is widened; arithmetic is f32).
  Value load(Value mem, ValueRange at) {
    Value v = memref::LoadOp::create(b, loc, mem, at);
    return v.getType().isF32()
               ? v
               : arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  }
  /// Stores an f32 value, rounded to the buffer's element type.
  void store(Value v, Value mem, ValueRange at) {
    Type elem = cast<MemRefType>(mem.getType()).getElementType();
    if (elem != v.getType())
      v = arith::TruncFOp::create(b, loc, elem, v);
    memref::StoreOp::create(b, loc, v, mem, at);
  }

  /// This lane's elements of row `mem[b, pos, head, :]` (n = dim / lanes).
  SmallVector<Value> loadSlice(Value mem, Value bi, Value pos, Value head,
                               int64_t n) {
    SmallVector<Value> out;
    for (int64_t c = 0; c < n; ++c)
      out.push_back(load(mem, ValueRange{bi, pos, head, dimIndex(c)}));
    return out;
  }
  void storeSlice(ArrayRef<Value> values, Value mem, Value bi, Value pos,
                  Value head) {
    for (auto [c, v] : llvm::enumerate(values))
      store(v, mem, ValueRange{bi, pos, head, dimIndex(c)});
  }

  /// Σ over lanes (every lane gets the total).
  Value laneSum(Value partial) {
    for (int64_t offset = lanes / 2; offset > 0; offset /= 2) {
      auto other =
          gpu::ShuffleOp::create(b, loc, partial, int32_t(offset),
                                 int32_t(lanes), gpu::ShuffleMode::XOR);
      partial = add(partial, other.getShuffleResult());
    }
    return partial;
  }

  /// x · mem[b, pos, head, :] over the whole row (x is this lane's slice).
  Value dot(ArrayRef<Value> x, Value mem, Value bi, Value pos, Value head) {
    SmallVector<Value> y = loadSlice(mem, bi, pos, head, x.size());
    Value partial = f32(0);
    for (auto [xv, yv] : llvm::zip(x, y))
      partial = math::FmaOp::create(b, loc, xv, yv, partial);
    return laneSum(partial);
  }

  /// The score from a raw dot product; `tanhOut` gets t (softcap only).
  Value score(Value rawDot, const AttentionParams &p,
              Value *tanhOut = nullptr) {
    Value s = mul(rawDot, f32(p.scale));
    if (!p.softcap)
      return s;
    Value t = math::TanhOp::create(b, loc, div(s, f32(*p.softcap)));
    if (tanhOut)
      *tanhOut = t;
    return mul(t, f32(*p.softcap));
  }

  /// Keys visible from query i: [lo, hi).
  std::pair<Value, Value> keyRange(Value i, Value keys,
                                   const AttentionParams &p) {
    if (!p.causal)
      return {idx(0), keys};
    Value hi = imin(keys, iadd(i, idx(1)));
    Value lo = idx(0);
    if (p.window)
      lo = imax(lo, iadd(i, idx(1 - *p.window)));
    return {lo, hi};
  }

  /// The first key of query i's document: docMem[bi, i] as an index.
  Value documentStart(Value docMem, Value bi, Value i) {
    Value start = memref::LoadOp::create(b, loc, docMem, ValueRange{bi, i});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), start);
  }

  /// Keys visible from query i, [lo, hi), within its document when
  /// `docMem` (doc_start's buffer) is given.
  std::pair<Value, Value> keyRange(Value i, Value keys,
                                   const AttentionParams &p, Value docMem,
                                   Value bi) {
    auto [lo, hi] = keyRange(i, keys, p);
    if (docMem)
      lo = imax(lo, documentStart(docMem, bi, i));
    return {lo, hi};
  }

  /// Queries that see key j: [lo, hi).
  std::pair<Value, Value> queryRange(Value j, Value queries,
                                     const AttentionParams &p) {
    if (!p.causal)
      return {idx(0), queries};
    Value lo = imin(j, queries);
    Value hi = queries;
    if (p.window)
      hi = imin(queries, iadd(j, idx(*p.window)));
    return {lo, hi};
  }

  /// As above, within key j's document when `docMem` is given: the queries
  /// i in [lo, hi) with docMem[bi, i] <= j. Document starts do not decrease
  /// along a row, so those queries are a prefix of [lo, hi) (its end found
  /// by binary search: log T loads per key, nothing in the loop over
  /// queries). doc_start is causal only (verified).
  std::pair<Value, Value> queryRange(Value j, Value queries,
                                     const AttentionParams &p, Value docMem,
                                     Value bi);
};

/// The kernel parameters of an attention op, or none when it is left to the
/// linalg lowering (element types other than f32/bf16/f16, head dims not a
/// multiple of `lanes`, query heads not a multiple of key heads). Reads only
/// types and attributes.
std::optional<AttentionParams> getKernelParams(AttentionOp op, int64_t lanes);
std::optional<AttentionParams> getKernelParams(FlashAttentionOp op,
                                               int64_t lanes);
std::optional<AttentionParams> getKernelParams(AttentionBackwardOp op,
                                               int64_t lanes);
std::optional<AttentionParams> getKernelParams(FlashAttentionBackwardOp op,
                                               int64_t lanes);

/// gpukernel::launchRows with kWarpsPerBlock rows per block; `body` gets
/// the kernel builder, the (clamped) row and whether it is in range.
void launchRows(
    OpBuilder &b, Location loc, Value rows, int64_t lanes,
    function_ref<void(KernelBuilder &, Value row, Value active)> body);

/// scf.if active { ... } inside a kernel.
void ifActive(OpBuilder &b, Location loc, Value active,
              function_ref<void()> then);

/// Decodes `row` = ((b * heads) + h) * len + pos.
std::tuple<Value, Value, Value> decodeRow(KernelBuilder &k, Value row,
                                          Value len, int64_t heads);

/// The forward recurrence of one query row: running max, sum and (if
/// `withOutput`) the rescaled output accumulators.
struct RowState {
  Value m, l;
  SmallVector<Value> acc;
};
/// Over the keys [lo, hi) (KernelBuilder::keyRange).
RowState forwardPass(KernelBuilder &k, ArrayRef<Value> q, Value kMem,
                     Value vMem, Value bi, Value kvh, Value lo, Value hi,
                     const AttentionParams &p, bool withOutput);

/// Folds the sink logit into (m, l, acc); returns the sink's probability
/// numerator exp(sink - m) (before division by l).
Value foldSink(KernelBuilder &k, RowState &st, Value sinksMem, Value h);

/// A read-only buffer of a tensor operand (bufferization.to_buffer).
Value readBuffer(OpBuilder &b, Location loc, Value tensor);
/// A fresh buffer of `type` (dynamic sizes taken from `from`).
Value allocLike(OpBuilder &b, Location loc, RankedTensorType type, Value from);
/// A buffer handed back as a tensor result (bufferization.to_tensor restrict).
Value asTensor(OpBuilder &b, Location loc, RankedTensorType type, Value buffer);

/// The forward kernel on tensors q, k, v (, sinks); `lseType` non-null also
/// produces lse [B, Hq, T] = m + ln l.
SmallVector<Value> buildForward(OpBuilder &b, Location loc, Value qT, Value kT,
                                Value vT, Value sinksT, Value docStartT,
                                const AttentionParams &p, int64_t lanes,
                                RankedTensorType outType,
                                RankedTensorType lseType);

/// A conversion pattern building kernels with `lanes` threads per row; it
/// converts exactly the ops getKernelParams accepts.
template <typename OpTy> struct KernelPattern : OpConversionPattern<OpTy> {
  KernelPattern(MLIRContext *ctx, int64_t lanes)
      : OpConversionPattern<OpTy>(ctx), lanes(lanes) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    std::optional<AttentionParams> p = getKernelParams(op, lanes);
    if (!p)
      return rewriter.notifyMatchFailure(op,
                                         "not a supported attention kernel");
    rewriter.replaceOp(op, build(op, adaptor, *p, rewriter));
    return success();
  }

  /// The kernels' results, replacing those of `op`.
  virtual SmallVector<Value>
  build(OpTy op, typename OpTy::Adaptor adaptor, const AttentionParams &p,
        ConversionPatternRewriter &rewriter) const = 0;

  int64_t lanes;
};

/// Marks the `OpTy` ops the kernels can take illegal (the others stay, for
/// the linalg lowering) and adds `Pattern`.
template <typename OpTy, typename Pattern>
void addKernelPattern(RewritePatternSet &patterns, ConversionTarget &target,
                      int64_t lanes) {
  target.addDynamicallyLegalOp<OpTy>(
      [lanes](OpTy op) { return !getKernelParams(op, lanes); });
  patterns.add<Pattern>(patterns.getContext(), lanes);
}

} // namespace mlir::tfm::attention

#endif // TFM_LIB_CONVERSION_TFMTOGPU_ATTENTIONKERNELS_H
