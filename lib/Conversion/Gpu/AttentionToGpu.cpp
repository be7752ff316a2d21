//===- AttentionToGpu.cpp - attention ops as flash-attention kernels ------===//
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
// The rewrite is at tensor level: operands are read through
// `bufferization.to_buffer` (read-only), results are fresh `memref.alloc`s
// handed back with `bufferization.to_tensor restrict`, so one-shot
// bufferization and the deallocation pipeline treat them like any buffer.
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

#include "GpuKernelUtils.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMATTENTIONTOGPUPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpukernel = mlir::tfm::gpukernel;
using namespace mlir::tfm;

namespace {

constexpr int64_t kWarpsPerBlock = 4;

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
  Value f32(double v) { return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v))); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value max(Value x, Value y) { return arith::MaximumFOp::create(b, loc, x, y); }
  Value iadd(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value imul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value imin(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value imax(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }

  /// Head-dim index of this lane's c-th element.
  Value dimIndex(int64_t c) { return iadd(lane, idx(c * lanes)); }

  /// Loads as f32 (bf16/f16 storage is widened; arithmetic is f32).
  Value load(Value mem, ValueRange at) {
    Value v = memref::LoadOp::create(b, loc, mem, at);
    return v.getType().isF32() ? v : arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  }
  /// Stores an f32 value, rounded to the buffer's element type.
  void store(Value v, Value mem, ValueRange at) {
    Type elem = cast<MemRefType>(mem.getType()).getElementType();
    if (elem != v.getType())
      v = arith::TruncFOp::create(b, loc, elem, v);
    memref::StoreOp::create(b, loc, v, mem, at);
  }

  /// This lane's elements of row `mem[b, pos, head, :]` (n = dim / lanes).
  SmallVector<Value> loadSlice(Value mem, Value bi, Value pos, Value head, int64_t n) {
    SmallVector<Value> out;
    for (int64_t c = 0; c < n; ++c)
      out.push_back(load(mem, ValueRange{bi, pos, head, dimIndex(c)}));
    return out;
  }
  void storeSlice(ArrayRef<Value> values, Value mem, Value bi, Value pos, Value head) {
    for (auto [c, v] : llvm::enumerate(values))
      store(v, mem, ValueRange{bi, pos, head, dimIndex(c)});
  }

  /// Σ over lanes (every lane gets the total).
  Value laneSum(Value partial) {
    for (int64_t offset = lanes / 2; offset > 0; offset /= 2) {
      auto other = gpu::ShuffleOp::create(b, loc, partial, int32_t(offset), int32_t(lanes),
                                          gpu::ShuffleMode::XOR);
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
  Value score(Value rawDot, const AttentionParams &p, Value *tanhOut = nullptr) {
    Value s = mul(rawDot, f32(p.scale));
    if (!p.softcap)
      return s;
    Value t = math::TanhOp::create(b, loc, div(s, f32(*p.softcap)));
    if (tanhOut)
      *tanhOut = t;
    return mul(t, f32(*p.softcap));
  }

  /// Keys visible from query i: [lo, hi).
  std::pair<Value, Value> keyRange(Value i, Value keys, const AttentionParams &p) {
    if (!p.causal)
      return {idx(0), keys};
    Value hi = imin(keys, iadd(i, idx(1)));
    Value lo = idx(0);
    if (p.window)
      lo = imax(lo, iadd(i, idx(1 - *p.window)));
    return {lo, hi};
  }

  /// Queries that see key j: [lo, hi).
  std::pair<Value, Value> queryRange(Value j, Value queries, const AttentionParams &p) {
    if (!p.causal)
      return {idx(0), queries};
    Value lo = imin(j, queries);
    Value hi = queries;
    if (p.window)
      hi = imin(queries, iadd(j, idx(*p.window)));
    return {lo, hi};
  }
};

/// gpukernel::launchRows with kWarpsPerBlock rows per block; `body` gets
/// the kernel builder, the (clamped) row and whether it is in range.
void launchRows(OpBuilder &b, Location loc, Value rows, int64_t lanes,
                function_ref<void(KernelBuilder &, Value row, Value active)> body) {
  gpukernel::launchRows(b, loc, rows, lanes, kWarpsPerBlock,
                        [&](const gpukernel::RowThread &t) {
                          KernelBuilder kb{b, loc, lanes, t.lane};
                          body(kb, t.row, t.active);
                        });
}

/// scf.if active { ... } inside a kernel.
void ifActive(OpBuilder &b, Location loc, Value active, function_ref<void()> then) {
  auto op = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  then();
}

/// Decodes `row` = ((b * heads) + h) * len + pos.
std::tuple<Value, Value, Value> decodeRow(KernelBuilder &k, Value row, Value len, int64_t heads) {
  SmallVector<Value> d = gpukernel::delinearize(k.b, k.loc, row, {Value(), k.idx(heads), len});
  return {d[0], d[1], d[2]};
}

/// The forward recurrence of one query row: running max, sum and (if
/// `withOutput`) the rescaled output accumulators.
struct RowState {
  Value m, l;
  SmallVector<Value> acc;
};

RowState forwardPass(KernelBuilder &k, ArrayRef<Value> q, Value kMem, Value vMem, Value bi,
                     Value i, Value kvh, Value keys, const AttentionParams &p, bool withOutput) {
  OpBuilder &b = k.b;
  auto [lo, hi] = k.keyRange(i, keys, p);
  SmallVector<Value> init = {k.f32(-std::numeric_limits<double>::infinity()), k.f32(0)};
  int64_t nv = withOutput ? p.dv / k.lanes : 0;
  for (int64_t c = 0; c < nv; ++c)
    init.push_back(k.f32(0));
  auto loop = scf::ForOp::create(b, k.loc, lo, hi, k.idx(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    ValueRange it = loop.getRegionIterArgs();
    Value s = k.score(k.dot(q, kMem, bi, j, kvh), p);
    Value m = k.max(it[0], s);
    Value alpha = k.exp(k.sub(it[0], m));
    Value e = k.exp(k.sub(s, m));
    SmallVector<Value> next = {m, math::FmaOp::create(b, k.loc, it[1], alpha, e)};
    if (withOutput) {
      SmallVector<Value> v = k.loadSlice(vMem, bi, j, kvh, nv);
      for (int64_t c = 0; c < nv; ++c)
        next.push_back(math::FmaOp::create(b, k.loc, e, v[c], k.mul(it[2 + c], alpha)));
    }
    scf::YieldOp::create(b, k.loc, next);
  }
  RowState st{loop.getResult(0), loop.getResult(1), {}};
  for (int64_t c = 0; c < nv; ++c)
    st.acc.push_back(loop.getResult(2 + c));
  return st;
}

/// Folds the sink logit into (m, l, acc); returns the sink's probability
/// numerator exp(sink - m) (before division by l).
Value foldSink(KernelBuilder &k, RowState &st, Value sinksMem, Value h) {
  Value sink = k.load(sinksMem, ValueRange{h});
  Value m = k.max(st.m, sink);
  Value alpha = k.exp(k.sub(st.m, m));
  Value e = k.exp(k.sub(sink, m));
  st.l = math::FmaOp::create(k.b, k.loc, st.l, alpha, e);
  for (Value &a : st.acc)
    a = k.mul(a, alpha);
  st.m = m;
  return e;
}

MemRefType anyStrided(ShapedType t) {
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t> strides(t.getRank(), dyn);
  return MemRefType::get(t.getShape(), t.getElementType(),
                         StridedLayoutAttr::get(t.getContext(), dyn, strides));
}

Value readBuffer(OpBuilder &b, Location loc, Value tensor) {
  return bufferization::ToBufferOp::create(
      b, loc, anyStrided(cast<ShapedType>(tensor.getType())), tensor, /*read_only=*/true);
}

/// A fresh buffer shaped like `like` (dynamic sizes taken from `from`).
Value allocLike(OpBuilder &b, Location loc, RankedTensorType type, Value from) {
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, from, d));
  return memref::AllocOp::create(b, loc, MemRefType::get(type.getShape(), type.getElementType()),
                                 dyn);
}

Value asTensor(OpBuilder &b, Location loc, RankedTensorType type, Value buffer) {
  return bufferization::ToTensorOp::create(b, loc, type, buffer, /*restrict=*/true,
                                           /*writable=*/true);
}

std::optional<AttentionParams> paramsOf(Operation *op, Value q, Value k, Value v, int64_t lanes,
                                        double scale, bool causal, std::optional<int64_t> window,
                                        std::optional<APFloat> softcap) {
  auto qt = cast<RankedTensorType>(q.getType()), kt = cast<RankedTensorType>(k.getType()),
       vt = cast<RankedTensorType>(v.getType());
  for (RankedTensorType t : {qt, kt, vt})
    if (!isa<Float32Type, BFloat16Type, Float16Type>(t.getElementType()))
      return std::nullopt;
  AttentionParams p{scale, causal, window, std::nullopt, qt.getDimSize(2), kt.getDimSize(2),
                    qt.getDimSize(3), vt.getDimSize(3)};
  if (softcap)
    p.softcap = softcap->convertToDouble();
  if (p.d % lanes || p.dv % lanes || p.hq % p.hkv)
    return std::nullopt;
  return p;
}

/// The forward kernel on tensors q, k, v (, sinks); `lseType` non-null also
/// produces lse [B, Hq, T] = m + ln l.
SmallVector<Value> buildForward(OpBuilder &b, Location loc, Value qT, Value kT, Value vT,
                                Value sinksT, const AttentionParams &p, int64_t lanes,
                                RankedTensorType outType, RankedTensorType lseType) {
  Value q = readBuffer(b, loc, qT), k = readBuffer(b, loc, kT), v = readBuffer(b, loc, vT);
  Value sinks = sinksT ? readBuffer(b, loc, sinksT) : Value();
  Value batch = tensor::DimOp::create(b, loc, qT, 0);
  Value queries = tensor::DimOp::create(b, loc, qT, 1);
  Value keys = tensor::DimOp::create(b, loc, kT, 1);
  Value out = allocLike(b, loc, outType, qT);
  Value lse;
  if (lseType) {
    SmallVector<Value> dyn;
    for (auto [d, from] : llvm::enumerate(SmallVector<Value>{batch, Value(), queries}))
      if (lseType.isDynamicDim(d))
        dyn.push_back(from);
    lse = memref::AllocOp::create(
        b, loc, MemRefType::get(lseType.getShape(), lseType.getElementType()), dyn);
  }
  Value rows = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, batch, arith::ConstantIndexOp::create(b, loc, p.hq)),
      queries);
  int64_t group = p.hq / p.hkv;
  launchRows(b, loc, rows, lanes, [&](KernelBuilder &kb, Value row, Value active) {
    auto [bi, h, i] = decodeRow(kb, row, queries, p.hq);
    Value kvh = arith::DivUIOp::create(kb.b, loc, h, kb.idx(group));
    SmallVector<Value> qs = kb.loadSlice(q, bi, i, h, p.d / lanes);
    RowState st = forwardPass(kb, qs, k, v, bi, i, kvh, keys, p, /*withOutput=*/true);
    if (sinks)
      foldSink(kb, st, sinks, h);
    SmallVector<Value> o;
    for (Value a : st.acc)
      o.push_back(kb.div(a, st.l));
    ifActive(kb.b, loc, active, [&] {
      kb.storeSlice(o, out, bi, i, h);
      if (lse)
        kb.store(kb.add(st.m, math::LogOp::create(kb.b, loc, st.l)), lse, ValueRange{bi, h, i});
    });
  });
  SmallVector<Value> results = {asTensor(b, loc, outType, out)};
  if (lse)
    results.push_back(asTensor(b, loc, lseType, lse));
  return results;
}

LogicalResult rewriteForward(AttentionOp op, int64_t lanes) {
  auto p = paramsOf(op, op.getQ(), op.getK(), op.getV(), lanes, op.getScale().convertToDouble(),
                    op.getCausal(), op.getSlidingWindow(), op.getSoftcap());
  if (!p)
    return failure();
  OpBuilder b(op);
  SmallVector<Value> results =
      buildForward(b, op.getLoc(), op.getQ(), op.getK(), op.getV(), op.getSinks(), *p, lanes,
                   cast<RankedTensorType>(op.getType()), nullptr);
  op->replaceAllUsesWith(results);
  op.erase();
  return success();
}

/// The packed form: q, k, v are head slices of qkv; lse is a result too.
LogicalResult rewriteFlash(FlashAttentionOp op, int64_t lanes) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto qkvType = cast<RankedTensorType>(op.getQkv().getType());
  int64_t hq = op.getNumQHeads(), hkv = op.getNumKvHeads();
  auto slice = [&](int64_t first, int64_t count) -> Value {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                         b.getIndexAttr(first), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < 4; ++d)
      sizes.push_back(d == 2 ? OpFoldResult(b.getIndexAttr(count))
                             : tensor::getMixedSize(b, loc, op.getQkv(), d));
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, op.getQkv(), offsets, sizes, strides);
  };
  if (qkvType.getDimSize(3) % lanes)
    return failure();
  Value q = slice(0, hq), k = slice(hq, hkv), v = slice(hq + hkv, hkv);
  auto p = paramsOf(op, q, k, v, lanes, op.getScale().convertToDouble(), op.getCausal(),
                    op.getSlidingWindow(), op.getSoftcap());
  if (!p)
    return failure();
  SmallVector<Value> results =
      buildForward(b, loc, q, k, v, op.getSinks(), *p, lanes,
                   cast<RankedTensorType>(op.getResult().getType()),
                   cast<RankedTensorType>(op.getLse().getType()));
  op->replaceAllUsesWith(results);
  op.erase();
  return success();
}

LogicalResult rewriteBackward(AttentionBackwardOp op, int64_t lanes) {
  auto p = paramsOf(op, op.getQ(), op.getK(), op.getV(), lanes, op.getScale().convertToDouble(),
                    op.getCausal(), op.getSlidingWindow(), op.getSoftcap());
  if (!p || !isa<Float32Type, BFloat16Type, Float16Type>(
                cast<RankedTensorType>(op.getDout().getType()).getElementType()))
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value dout = readBuffer(b, loc, op.getDout()), q = readBuffer(b, loc, op.getQ()),
        k = readBuffer(b, loc, op.getK()), v = readBuffer(b, loc, op.getV());
  Value sinks = op.getSinks() ? readBuffer(b, loc, op.getSinks()) : Value();
  Value batch = tensor::DimOp::create(b, loc, op.getQ(), 0);
  Value queries = tensor::DimOp::create(b, loc, op.getQ(), 1);
  Value keys = tensor::DimOp::create(b, loc, op.getK(), 1);
  auto dqType = cast<RankedTensorType>(op.getDq().getType());
  auto dkType = cast<RankedTensorType>(op.getDk().getType());
  auto dvType = cast<RankedTensorType>(op.getDv().getType());
  Value dq = allocLike(b, loc, dqType, op.getQ()), dk = allocLike(b, loc, dkType, op.getK()),
        dv = allocLike(b, loc, dvType, op.getV());
  auto c = [&](int64_t x) { return arith::ConstantIndexOp::create(b, loc, x).getResult(); };
  Value qRows = arith::MulIOp::create(b, loc, arith::MulIOp::create(b, loc, batch, c(p->hq)),
                                      queries);
  Value kRows = arith::MulIOp::create(b, loc, arith::MulIOp::create(b, loc, batch, c(p->hkv)),
                                      keys);
  // Per query row: max, sum, delta = dout . out, and the sink term.
  auto scratchType = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Value mBuf = memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows});
  Value lBuf = memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows});
  Value deltaBuf = memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows});
  Value sinkBuf =
      sinks ? memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows}).getResult() : Value();
  int64_t group = p->hq / p->hkv;

  // A: dq, and the row statistics.
  launchRows(b, loc, qRows, lanes, [&](KernelBuilder &kb, Value row, Value active) {
    OpBuilder &kbb = kb.b;
    auto [bi, h, i] = decodeRow(kb, row, queries, p->hq);
    Value kvh = arith::DivUIOp::create(kbb, loc, h, kb.idx(group));
    SmallVector<Value> qs = kb.loadSlice(q, bi, i, h, p->d / lanes);
    SmallVector<Value> dos = kb.loadSlice(dout, bi, i, h, p->dv / lanes);
    RowState st = forwardPass(kb, qs, k, v, bi, i, kvh, keys, *p, /*withOutput=*/true);
    Value sinkE = sinks ? foldSink(kb, st, sinks, h) : Value();
    // delta = dout . out, out = acc / l.
    Value partial = kb.f32(0);
    for (auto [a, g] : llvm::zip(st.acc, dos))
      partial = math::FmaOp::create(kbb, loc, kb.div(a, st.l), g, partial);
    Value delta = kb.laneSum(partial);
    auto [lo, hi] = kb.keyRange(i, keys, *p);
    SmallVector<Value> init(p->d / lanes, kb.f32(0));
    auto loop = scf::ForOp::create(kbb, loc, lo, hi, kb.idx(1), init);
    {
      OpBuilder::InsertionGuard g(kbb);
      kbb.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      Value t;
      Value s = kb.score(kb.dot(qs, k, bi, j, kvh), *p, &t);
      Value prob = kb.div(kb.exp(kb.sub(s, st.m)), st.l);
      Value dp = kb.dot(dos, v, bi, j, kvh);
      Value ds = kb.mul(prob, kb.sub(dp, delta));
      if (p->softcap)
        ds = kb.mul(ds, kb.sub(kb.f32(1), kb.mul(t, t)));
      SmallVector<Value> ks = kb.loadSlice(k, bi, j, kvh, p->d / lanes);
      SmallVector<Value> next;
      for (auto [acc, kv] : llvm::zip(loop.getRegionIterArgs(), ks))
        next.push_back(math::FmaOp::create(kbb, loc, ds, kv, acc));
      scf::YieldOp::create(kbb, loc, next);
    }
    SmallVector<Value> dqs;
    for (Value a : loop.getResults())
      dqs.push_back(kb.mul(a, kb.f32(p->scale)));
    // Every lane of the row holds the same statistics and stores them: the
    // same value to the same address, and no lane-0 branch (fewer
    // convergence points for ptxas, which otherwise spills on sm_80).
    ifActive(kbb, loc, active, [&] {
      kb.storeSlice(dqs, dq, bi, i, h);
      memref::StoreOp::create(kbb, loc, st.m, mBuf, row);
      memref::StoreOp::create(kbb, loc, st.l, lBuf, row);
      memref::StoreOp::create(kbb, loc, delta, deltaBuf, row);
      if (sinks)
        memref::StoreOp::create(kbb, loc, kb.sub(kb.f32(0), kb.mul(kb.div(sinkE, st.l), delta)),
                                sinkBuf, row);
    });
  });

  // B: dk and dv, one key row per lane group, over its query heads.
  launchRows(b, loc, kRows, lanes, [&](KernelBuilder &kb, Value row, Value active) {
    OpBuilder &kbb = kb.b;
    auto [bi, kvh, j] = decodeRow(kb, row, keys, p->hkv);
    SmallVector<Value> ks = kb.loadSlice(k, bi, j, kvh, p->d / lanes);
    SmallVector<Value> vs = kb.loadSlice(v, bi, j, kvh, p->dv / lanes);
    auto [lo, hi] = kb.queryRange(j, queries, *p);
    SmallVector<Value> init(p->d / lanes + p->dv / lanes, kb.f32(0));
    // One loop over (query head of the group, query) pairs: with a constant
    // group size, nested loops would be fully unrolled and spill.
    Value count = kb.imax(arith::SubIOp::create(kbb, loc, hi, lo), kb.idx(0));
    Value pairs = kb.imul(count, kb.idx(group));
    auto loop = scf::ForOp::create(kbb, loc, kb.idx(0), pairs, kb.idx(1), init);
    {
      OpBuilder::InsertionGuard g(kbb);
      kbb.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      Value h = kb.iadd(kb.imul(kvh, kb.idx(group)), arith::DivUIOp::create(kbb, loc, t, count));
      Value i = kb.iadd(lo, arith::RemUIOp::create(kbb, loc, t, count));
      Value qrow = kb.iadd(kb.imul(kb.iadd(kb.imul(bi, kb.idx(p->hq)), h), queries), i);
      Value m = memref::LoadOp::create(kbb, loc, mBuf, qrow);
      Value l = memref::LoadOp::create(kbb, loc, lBuf, qrow);
      Value delta = memref::LoadOp::create(kbb, loc, deltaBuf, qrow);
      SmallVector<Value> qs = kb.loadSlice(q, bi, i, h, p->d / lanes);
      SmallVector<Value> dos = kb.loadSlice(dout, bi, i, h, p->dv / lanes);
      Value tanhS;
      Value partial = kb.f32(0);
      for (auto [x, y] : llvm::zip(qs, ks))
        partial = math::FmaOp::create(kbb, loc, x, y, partial);
      Value s = kb.score(kb.laneSum(partial), *p, &tanhS);
      Value prob = kb.div(kb.exp(kb.sub(s, m)), l);
      Value dpPartial = kb.f32(0);
      for (auto [x, y] : llvm::zip(dos, vs))
        dpPartial = math::FmaOp::create(kbb, loc, x, y, dpPartial);
      Value ds = kb.mul(prob, kb.sub(kb.laneSum(dpPartial), delta));
      if (p->softcap)
        ds = kb.mul(ds, kb.sub(kb.f32(1), kb.mul(tanhS, tanhS)));
      ValueRange acc = loop.getRegionIterArgs();
      int64_t nk = p->d / lanes;
      SmallVector<Value> next;
      for (int64_t c = 0; c < nk; ++c)
        next.push_back(math::FmaOp::create(kbb, loc, ds, qs[c], acc[c]));
      for (int64_t c = 0; c < p->dv / lanes; ++c)
        next.push_back(math::FmaOp::create(kbb, loc, prob, dos[c], acc[nk + c]));
      scf::YieldOp::create(kbb, loc, next);
    }
    auto heads = loop; // results: dk accumulators, then dv
    int64_t nk = p->d / lanes;
    SmallVector<Value> dks, dvs;
    for (int64_t c = 0; c < nk; ++c)
      dks.push_back(kb.mul(heads.getResult(c), kb.f32(p->scale)));
    for (int64_t c = 0; c < p->dv / lanes; ++c)
      dvs.push_back(heads.getResult(nk + c));
    ifActive(kbb, loc, active, [&] {
      kb.storeSlice(dks, dk, bi, j, kvh);
      kb.storeSlice(dvs, dv, bi, j, kvh);
    });
  });

  SmallVector<Value> results = {asTensor(b, loc, dqType, dq), asTensor(b, loc, dkType, dk),
                                asTensor(b, loc, dvType, dv)};
  if (sinks) {
    // C: dsinks[h] = sum over (b, i) of the sink terms; one thread per head.
    auto dsType = cast<RankedTensorType>(op.getDsinks().getType());
    Value ds = memref::AllocOp::create(
        b, loc, MemRefType::get(dsType.getShape(), dsType.getElementType()));
    launchRows(b, loc, c(p->hq), 1, [&](KernelBuilder &kb, Value h, Value active) {
      OpBuilder &kbb = kb.b;
      Value n = kb.imul(batch, queries);
      auto loop = scf::ForOp::create(kbb, loc, kb.idx(0), n, kb.idx(1), ValueRange{kb.f32(0)});
      {
        OpBuilder::InsertionGuard g(kbb);
        kbb.setInsertionPointToStart(loop.getBody());
        Value r = loop.getInductionVar();
        Value bi = arith::DivUIOp::create(kbb, loc, r, queries);
        Value i = arith::RemUIOp::create(kbb, loc, r, queries);
        Value qrow = kb.iadd(kb.imul(kb.iadd(kb.imul(bi, kb.idx(p->hq)), h), queries), i);
        Value term = memref::LoadOp::create(kbb, loc, sinkBuf, qrow);
        scf::YieldOp::create(kbb, loc, ValueRange{kb.add(loop.getRegionIterArgs()[0], term)});
      }
      ifActive(kbb, loc, active, [&] { kb.store(loop.getResult(0), ds, ValueRange{h}); });
    });
    results.push_back(asTensor(b, loc, dsType, ds));
  }
  op->replaceAllUsesWith(results);
  op.erase();
  return success();
}

struct TfmAttentionToGpuPass
    : mlir::tfm::impl::TfmAttentionToGpuPassBase<TfmAttentionToGpuPass> {
  using Base::Base;
  void runOnOperation() override {
    // A row's lanes run loops whose trip counts depend on the row and
    // shuffle inside them: on a GPU they must be a whole warp (32), or one
    // thread (1, for running the kernels as CPU loops).
    if (lanes != 1 && lanes != 32) {
      getOperation().emitError("tfm-attention-to-gpu: lanes must be 32 (a warp) or 1");
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, FlashAttentionOp, AttentionBackwardOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto fwd = dyn_cast<AttentionOp>(op))
        (void)rewriteForward(fwd, lanes);
      else if (auto flash = dyn_cast<FlashAttentionOp>(op))
        (void)rewriteFlash(flash, lanes);
      else
        (void)rewriteBackward(cast<AttentionBackwardOp>(op), lanes);
    }
  }
};

} // namespace
