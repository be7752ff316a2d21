//===- AttentionKernels.cpp - building flash-attention kernels ------------===//

#include "AttentionKernels.h"
#include "tfm/GPU/GpuKernelUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::attention;
namespace gpukernel = mlir::tfm::gpukernel;

/// gpukernel::launchRows with kWarpsPerBlock rows per block; `body` gets
/// the kernel builder, the (clamped) row and whether it is in range.
void attention::launchRows(
    OpBuilder &b, Location loc, Value rows, int64_t lanes,
    function_ref<void(KernelBuilder &, Value row, Value active)> body) {
  gpukernel::launchRows(b, loc, rows, lanes, kWarpsPerBlock,
                        [&](const gpukernel::RowThread &t) {
                          KernelBuilder kb{b, loc, lanes, t.lane};
                          body(kb, t.row, t.active);
                        });
}

/// scf.if active { ... } inside a kernel.
void attention::ifActive(OpBuilder &b, Location loc, Value active,
                         function_ref<void()> then) {
  auto op = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  then();
}

/// Decodes `row` = ((b * heads) + h) * len + pos.
std::tuple<Value, Value, Value>
attention::decodeRow(KernelBuilder &k, Value row, Value len, int64_t heads) {
  SmallVector<Value> d =
      gpukernel::delinearize(k.b, k.loc, row, {Value(), k.idx(heads), len});
  return {d[0], d[1], d[2]};
}

RowState attention::forwardPass(KernelBuilder &k, ArrayRef<Value> q, Value kMem,
                                Value vMem, Value bi, Value kvh, Value lo,
                                Value hi, const AttentionParams &p,
                                bool withOutput) {
  OpBuilder &b = k.b;
  SmallVector<Value> init = {k.f32(-std::numeric_limits<double>::infinity()),
                             k.f32(0)};
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
    SmallVector<Value> next = {m,
                               math::FmaOp::create(b, k.loc, it[1], alpha, e)};
    if (withOutput) {
      SmallVector<Value> v = k.loadSlice(vMem, bi, j, kvh, nv);
      for (int64_t c = 0; c < nv; ++c)
        next.push_back(
            math::FmaOp::create(b, k.loc, e, v[c], k.mul(it[2 + c], alpha)));
    }
    scf::YieldOp::create(b, k.loc, next);
  }
  RowState st{loop.getResult(0), loop.getResult(1), {}};
  for (int64_t c = 0; c < nv; ++c)
    st.acc.push_back(loop.getResult(2 + c));
  return st;
}

/// The first i in [lo, hi) with docMem[bi, i] > bound (hi if none), for
/// document starts that do not decrease along i.
static Value firstStartAbove(KernelBuilder &k, Value docMem, Value bi, Value lo,
                             Value hi, Value bound) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  Type index = b.getIndexType();
  auto search =
      scf::WhileOp::create(b, loc, TypeRange{index, index}, ValueRange{lo, hi});
  {
    OpBuilder::InsertionGuard g(b);
    Block *before =
        b.createBlock(&search.getBefore(), {}, {index, index}, {loc, loc});
    Value open =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              before->getArgument(0), before->getArgument(1));
    scf::ConditionOp::create(b, loc, open, before->getArguments());
    Block *after =
        b.createBlock(&search.getAfter(), {}, {index, index}, {loc, loc});
    Value l = after->getArgument(0), h = after->getArgument(1);
    Value sum = k.iadd(l, h);
    Value mid = arith::ShRUIOp::create(b, loc, sum, k.idx(1));
    Value above =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                              k.documentStart(docMem, bi, mid), bound);
    Value nextLo =
        arith::SelectOp::create(b, loc, above, l, k.iadd(mid, k.idx(1)));
    Value nextHi = arith::SelectOp::create(b, loc, above, mid, h);
    scf::YieldOp::create(b, loc, ValueRange{nextLo, nextHi});
  }
  return search.getResult(0);
}

std::pair<Value, Value> KernelBuilder::queryRange(Value j, Value queries,
                                                  const AttentionParams &p,
                                                  Value docMem, Value bi) {
  auto [lo, hi] = queryRange(j, queries, p);
  if (!docMem) // doc_start implies causal: lo = j
    return {lo, hi};
  return {lo, firstStartAbove(*this, docMem, bi, lo, hi, j)};
}

/// Folds the sink logit into (m, l, acc); returns the sink's probability
/// numerator exp(sink - m) (before division by l).
Value attention::foldSink(KernelBuilder &k, RowState &st, Value sinksMem,
                          Value h) {
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

static MemRefType anyStrided(ShapedType t) {
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t> strides(t.getRank(), dyn);
  return MemRefType::get(t.getShape(), t.getElementType(),
                         StridedLayoutAttr::get(t.getContext(), dyn, strides));
}

Value attention::readBuffer(OpBuilder &b, Location loc, Value tensor) {
  return bufferization::ToBufferOp::create(
      b, loc, anyStrided(cast<ShapedType>(tensor.getType())), tensor,
      /*read_only=*/true);
}

/// A fresh buffer shaped like `like` (dynamic sizes taken from `from`).
Value attention::allocLike(OpBuilder &b, Location loc, RankedTensorType type,
                           Value from) {
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, from, d));
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), dyn);
}

Value attention::asTensor(OpBuilder &b, Location loc, RankedTensorType type,
                          Value buffer) {
  return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// Kernel parameters from the q, k, v types, or none if unsupported.
static std::optional<AttentionParams>
paramsOf(Type q, Type k, Type v, int64_t lanes, double scale, bool causal,
         std::optional<int64_t> window, std::optional<APFloat> softcap) {
  auto qt = cast<RankedTensorType>(q), kt = cast<RankedTensorType>(k),
       vt = cast<RankedTensorType>(v);
  for (RankedTensorType t : {qt, kt, vt})
    if (!isa<Float32Type, BFloat16Type, Float16Type>(t.getElementType()))
      return std::nullopt;
  AttentionParams p{scale,
                    causal,
                    window,
                    std::nullopt,
                    qt.getDimSize(2),
                    kt.getDimSize(2),
                    qt.getDimSize(3),
                    vt.getDimSize(3)};
  if (softcap)
    p.softcap = softcap->convertToDouble();
  if (p.d % lanes || p.dv % lanes || p.hq % p.hkv)
    return std::nullopt;
  return p;
}

std::optional<AttentionParams> attention::getKernelParams(AttentionOp op,
                                                          int64_t lanes) {
  return paramsOf(op.getQ().getType(), op.getK().getType(), op.getV().getType(),
                  lanes, op.getScale().convertToDouble(), op.getCausal(),
                  op.getSlidingWindow(), op.getSoftcap());
}

/// q, k and v are head slices of the packed operand of a flash op.
template <typename OpTy>
static std::optional<AttentionParams> packedParams(OpTy op, int64_t lanes) {
  auto qkv = cast<RankedTensorType>(op.getQkv().getType());
  if (qkv.getDimSize(3) % lanes)
    return std::nullopt;
  PackedQkvHeads heads = op.getPackedHeads();
  auto sliceType = [&](PackedQkvHeads::Range range) {
    return RankedTensorType::get(
        {qkv.getDimSize(0), qkv.getDimSize(1), range.count, qkv.getDimSize(3)},
        qkv.getElementType());
  };
  return paramsOf(sliceType(heads.query()), sliceType(heads.key()),
                  sliceType(heads.value()), lanes,
                  op.getScale().convertToDouble(), op.getCausal(),
                  op.getSlidingWindow(), op.getSoftcap());
}

std::optional<AttentionParams> attention::getKernelParams(FlashAttentionOp op,
                                                          int64_t lanes) {
  return packedParams(op, lanes);
}

/// The backward kernels take f32, bf16 and f16.
static bool hasKernelType(Value dout) {
  return isa<Float32Type, BFloat16Type, Float16Type>(
      cast<RankedTensorType>(dout.getType()).getElementType());
}

std::optional<AttentionParams>
attention::getKernelParams(FlashAttentionBackwardOp op, int64_t lanes) {
  if (!hasKernelType(op.getDout()))
    return std::nullopt;
  return packedParams(op, lanes);
}

std::optional<AttentionParams>
attention::getKernelParams(AttentionBackwardOp op, int64_t lanes) {
  if (!hasKernelType(op.getDout()))
    return std::nullopt;
  return paramsOf(op.getQ().getType(), op.getK().getType(), op.getV().getType(),
                  lanes, op.getScale().convertToDouble(), op.getCausal(),
                  op.getSlidingWindow(), op.getSoftcap());
}

/// The forward kernel on tensors q, k, v (, sinks); `lseType` non-null also
/// produces lse [B, Hq, T] = m + ln l.
SmallVector<Value>
attention::buildForward(OpBuilder &b, Location loc, Value qT, Value kT,
                        Value vT, Value sinksT, Value docStartT,
                        const AttentionParams &p, int64_t lanes,
                        RankedTensorType outType, RankedTensorType lseType) {
  Value q = readBuffer(b, loc, qT), k = readBuffer(b, loc, kT),
        v = readBuffer(b, loc, vT);
  Value sinks = sinksT ? readBuffer(b, loc, sinksT) : Value();
  Value docStart = docStartT ? readBuffer(b, loc, docStartT) : Value();
  Value batch = tensor::DimOp::create(b, loc, qT, 0);
  Value queries = tensor::DimOp::create(b, loc, qT, 1);
  Value keys = tensor::DimOp::create(b, loc, kT, 1);
  Value out = allocLike(b, loc, outType, qT);
  Value lse;
  if (lseType) {
    SmallVector<Value> dyn;
    for (auto [d, from] :
         llvm::enumerate(SmallVector<Value>{batch, Value(), queries}))
      if (lseType.isDynamicDim(d))
        dyn.push_back(from);
    lse = memref::AllocOp::create(
        b, loc, MemRefType::get(lseType.getShape(), lseType.getElementType()),
        dyn);
  }
  Value rows = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, batch,
                            arith::ConstantIndexOp::create(b, loc, p.hq)),
      queries);
  int64_t group = p.hq / p.hkv;
  launchRows(b, loc, rows, lanes,
             [&](KernelBuilder &kb, Value row, Value active) {
               Value bi, h, i; // captured below: not a structured binding
               std::tie(bi, h, i) = decodeRow(kb, row, queries, p.hq);
               Value kvh = arith::DivUIOp::create(kb.b, loc, h, kb.idx(group));
               SmallVector<Value> qs = kb.loadSlice(q, bi, i, h, p.d / lanes);
               auto [lo, hi] = kb.keyRange(i, keys, p, docStart, bi);
               RowState st = forwardPass(kb, qs, k, v, bi, kvh, lo, hi, p,
                                         /*withOutput=*/true);
               if (sinks)
                 foldSink(kb, st, sinks, h);
               SmallVector<Value> o;
               for (Value a : st.acc)
                 o.push_back(kb.div(a, st.l));
               ifActive(kb.b, loc, active, [&] {
                 kb.storeSlice(o, out, bi, i, h);
                 if (lse)
                   kb.store(kb.add(st.m, math::LogOp::create(kb.b, loc, st.l)),
                            lse, ValueRange{bi, h, i});
               });
             });
  SmallVector<Value> results = {asTensor(b, loc, outType, out)};
  if (lse)
    results.push_back(asTensor(b, loc, lseType, lse));
  return results;
}
