//===- AttentionBackward.cpp - tfm.attention_backward kernels -------------===//
//
// Three launches: A per query row (dq and the row statistics m, l, delta in
// O(B*Hq*T) scratch), B per key row (dk, dv over the query heads of its
// group; no atomics), C per head (dsinks). TfmAttentionToGpu.cpp describes
// the algorithm.
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

struct ConvertAttentionBackward : KernelPattern<AttentionBackwardOp> {
  using KernelPattern::KernelPattern;
  SmallVector<Value> build(AttentionBackwardOp op, OpAdaptor adaptor,
                           const AttentionParams &p,
                           ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    Location loc = op.getLoc();
    Value doutT = adaptor.getDout(), qT = adaptor.getQ(), kT = adaptor.getK(),
          vT = adaptor.getV(), sinksT = adaptor.getSinks();
    Value dout = readBuffer(b, loc, doutT), q = readBuffer(b, loc, qT),
          k = readBuffer(b, loc, kT), v = readBuffer(b, loc, vT);
    Value sinks = sinksT ? readBuffer(b, loc, sinksT) : Value();
    Value docStart = adaptor.getDocStart()
                         ? readBuffer(b, loc, adaptor.getDocStart())
                         : Value();
    Value batch = tensor::DimOp::create(b, loc, qT, 0);
    Value queries = tensor::DimOp::create(b, loc, qT, 1);
    Value keys = tensor::DimOp::create(b, loc, kT, 1);
    auto dqType = cast<RankedTensorType>(op.getDq().getType());
    auto dkType = cast<RankedTensorType>(op.getDk().getType());
    auto dvType = cast<RankedTensorType>(op.getDv().getType());
    Value dq = allocLike(b, loc, dqType, qT),
          dk = allocLike(b, loc, dkType, kT),
          dv = allocLike(b, loc, dvType, vT);
    auto c = [&](int64_t x) {
      return arith::ConstantIndexOp::create(b, loc, x).getResult();
    };
    Value qRows = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, batch, c(p.hq)), queries);
    Value kRows = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, batch, c(p.hkv)), keys);
    // Per query row: max, sum, delta = dout . out, and the sink term.
    auto scratchType = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
    Value mBuf =
        memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows});
    Value lBuf =
        memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows});
    Value deltaBuf =
        memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows});
    Value sinkBuf =
        sinks ? memref::AllocOp::create(b, loc, scratchType, ValueRange{qRows})
                    .getResult()
              : Value();
    int64_t group = p.hq / p.hkv;

    // A: dq, and the row statistics.
    launchRows(
        b, loc, qRows, lanes, [&](KernelBuilder &kb, Value row, Value active) {
          OpBuilder &kbb = kb.b;
          Value bi, h, i; // captured below: not a structured binding
          std::tie(bi, h, i) = decodeRow(kb, row, queries, p.hq);
          Value kvh = arith::DivUIOp::create(kbb, loc, h, kb.idx(group));
          SmallVector<Value> qs = kb.loadSlice(q, bi, i, h, p.d / lanes);
          auto [lo, hi] = kb.keyRange(i, keys, p, docStart, bi);
          RowState st = forwardPass(kb, qs, k, v, bi, kvh, lo, hi, p,
                                    /*withOutput=*/true);
          // dout's slice after the first loop, not live across it.
          SmallVector<Value> dos = kb.loadSlice(dout, bi, i, h, p.dv / lanes);
          Value sinkE = sinks ? foldSink(kb, st, sinks, h) : Value();
          // delta = dout . out, out = acc / l.
          Value partial = kb.f32(0);
          for (auto [a, g] : llvm::zip(st.acc, dos))
            partial =
                math::FmaOp::create(kbb, loc, kb.div(a, st.l), g, partial);
          Value delta = kb.laneSum(partial);
          SmallVector<Value> init(p.d / lanes, kb.f32(0));
          auto loop = scf::ForOp::create(kbb, loc, lo, hi, kb.idx(1), init);
          {
            OpBuilder::InsertionGuard g(kbb);
            kbb.setInsertionPointToStart(loop.getBody());
            Value j = loop.getInductionVar();
            Value t;
            Value s = kb.score(kb.dot(qs, k, bi, j, kvh), p, &t);
            Value prob = kb.div(kb.exp(kb.sub(s, st.m)), st.l);
            Value dp = kb.dot(dos, v, bi, j, kvh);
            Value ds = kb.mul(prob, kb.sub(dp, delta));
            if (p.softcap) {
              Value one = kb.f32(1);
              ds = kb.mul(ds, kb.sub(one, kb.mul(t, t)));
            }
            SmallVector<Value> ks = kb.loadSlice(k, bi, j, kvh, p.d / lanes);
            SmallVector<Value> next;
            for (auto [acc, kv] : llvm::zip(loop.getRegionIterArgs(), ks))
              next.push_back(math::FmaOp::create(kbb, loc, ds, kv, acc));
            scf::YieldOp::create(kbb, loc, next);
          }
          SmallVector<Value> dqs;
          for (Value a : loop.getResults())
            dqs.push_back(kb.mul(a, kb.f32(p.scale)));
          // Every lane of the row holds the same statistics and stores them:
          // the same value to the same address, and no lane-0 branch (fewer
          // convergence points for ptxas, which otherwise spills on sm_80).
          ifActive(kbb, loc, active, [&] {
            kb.storeSlice(dqs, dq, bi, i, h);
            memref::StoreOp::create(kbb, loc, st.m, mBuf, row);
            memref::StoreOp::create(kbb, loc, st.l, lBuf, row);
            memref::StoreOp::create(kbb, loc, delta, deltaBuf, row);
            if (sinks) {
              Value zero = kb.f32(0);
              Value psink = kb.div(sinkE, st.l);
              Value dsink = kb.sub(zero, kb.mul(psink, delta));
              memref::StoreOp::create(kbb, loc, dsink, sinkBuf, row);
            }
          });
        });

    // B: dk and dv, one key row per lane group, over its query heads.
    launchRows(
        b, loc, kRows, lanes, [&](KernelBuilder &kb, Value row, Value active) {
          OpBuilder &kbb = kb.b;
          Value bi, kvh, j; // captured below: not a structured binding
          std::tie(bi, kvh, j) = decodeRow(kb, row, keys, p.hkv);
          SmallVector<Value> ks = kb.loadSlice(k, bi, j, kvh, p.d / lanes);
          SmallVector<Value> vs = kb.loadSlice(v, bi, j, kvh, p.dv / lanes);
          auto [lo, hi] = kb.queryRange(j, queries, p, docStart, bi);
          SmallVector<Value> init(p.d / lanes + p.dv / lanes, kb.f32(0));
          // One loop over (query head of the group, query) pairs: with a
          // constant group size, nested loops would be fully unrolled and
          // spill.
          Value span = arith::SubIOp::create(kbb, loc, hi, lo);
          Value count = kb.imax(span, kb.idx(0));
          Value pairs = kb.imul(count, kb.idx(group));
          Value zero = kb.idx(0);
          Value one = kb.idx(1);
          auto loop = scf::ForOp::create(kbb, loc, zero, pairs, one, init);
          {
            OpBuilder::InsertionGuard g(kbb);
            kbb.setInsertionPointToStart(loop.getBody());
            Value t = loop.getInductionVar();
            Value groupStart = kb.imul(kvh, kb.idx(group));
            Value h =
                kb.iadd(groupStart, arith::DivUIOp::create(kbb, loc, t, count));
            Value i = kb.iadd(lo, arith::RemUIOp::create(kbb, loc, t, count));
            Value head = kb.iadd(kb.imul(bi, kb.idx(p.hq)), h);
            Value qrow = kb.iadd(kb.imul(head, queries), i);
            Value m = memref::LoadOp::create(kbb, loc, mBuf, qrow);
            Value l = memref::LoadOp::create(kbb, loc, lBuf, qrow);
            Value delta = memref::LoadOp::create(kbb, loc, deltaBuf, qrow);
            SmallVector<Value> qs = kb.loadSlice(q, bi, i, h, p.d / lanes);
            SmallVector<Value> dos = kb.loadSlice(dout, bi, i, h, p.dv / lanes);
            Value tanhS;
            Value partial = kb.f32(0);
            for (auto [x, y] : llvm::zip(qs, ks))
              partial = math::FmaOp::create(kbb, loc, x, y, partial);
            Value s = kb.score(kb.laneSum(partial), p, &tanhS);
            Value prob = kb.div(kb.exp(kb.sub(s, m)), l);
            Value dpPartial = kb.f32(0);
            for (auto [x, y] : llvm::zip(dos, vs))
              dpPartial = math::FmaOp::create(kbb, loc, x, y, dpPartial);
            Value ds = kb.mul(prob, kb.sub(kb.laneSum(dpPartial), delta));
            if (p.softcap) {
              Value one = kb.f32(1);
              ds = kb.mul(ds, kb.sub(one, kb.mul(tanhS, tanhS)));
            }
            ValueRange acc = loop.getRegionIterArgs();
            int64_t nk = p.d / lanes;
            SmallVector<Value> next;
            for (int64_t c = 0; c < nk; ++c)
              next.push_back(math::FmaOp::create(kbb, loc, ds, qs[c], acc[c]));
            for (int64_t c = 0; c < p.dv / lanes; ++c)
              next.push_back(
                  math::FmaOp::create(kbb, loc, prob, dos[c], acc[nk + c]));
            scf::YieldOp::create(kbb, loc, next);
          }
          auto heads = loop; // results: dk accumulators, then dv
          int64_t nk = p.d / lanes;
          SmallVector<Value> dks, dvs;
          for (int64_t c = 0; c < nk; ++c)
            dks.push_back(kb.mul(heads.getResult(c), kb.f32(p.scale)));
          for (int64_t c = 0; c < p.dv / lanes; ++c)
            dvs.push_back(heads.getResult(nk + c));
          ifActive(kbb, loc, active, [&] {
            kb.storeSlice(dks, dk, bi, j, kvh);
            kb.storeSlice(dvs, dv, bi, j, kvh);
          });
        });

    SmallVector<Value> results = {asTensor(b, loc, dqType, dq),
                                  asTensor(b, loc, dkType, dk),
                                  asTensor(b, loc, dvType, dv)};
    if (sinks) {
      // C: dsinks[h] = sum over (b, i) of the sink terms; one thread per head.
      auto dsType = cast<RankedTensorType>(op.getDsinks().getType());
      Value ds = memref::AllocOp::create(
          b, loc, MemRefType::get(dsType.getShape(), dsType.getElementType()));
      launchRows(
          b, loc, c(p.hq), 1, [&](KernelBuilder &kb, Value h, Value active) {
            OpBuilder &kbb = kb.b;
            Value n = kb.imul(batch, queries);
            Value zero = kb.idx(0);
            Value one = kb.idx(1);
            Value init = kb.f32(0);
            auto loop =
                scf::ForOp::create(kbb, loc, zero, n, one, ValueRange{init});
            {
              OpBuilder::InsertionGuard g(kbb);
              kbb.setInsertionPointToStart(loop.getBody());
              Value r = loop.getInductionVar();
              Value bi = arith::DivUIOp::create(kbb, loc, r, queries);
              Value i = arith::RemUIOp::create(kbb, loc, r, queries);
              Value qrow = kb.iadd(
                  kb.imul(kb.iadd(kb.imul(bi, kb.idx(p.hq)), h), queries), i);
              Value term = memref::LoadOp::create(kbb, loc, sinkBuf, qrow);
              scf::YieldOp::create(
                  kbb, loc,
                  ValueRange{kb.add(loop.getRegionIterArgs()[0], term)});
            }
            ifActive(kbb, loc, active,
                     [&] { kb.store(loop.getResult(0), ds, ValueRange{h}); });
          });
      results.push_back(asTensor(b, loc, dsType, ds));
    }
    return results;
  }
};

/// The packed form: the kernels of tfm.attention_backward on the head
/// slices of qkv (a new op this conversion converts in turn), their dq, dk,
/// dv inserted into one dqkv.
struct DecomposeFlashAttentionBackward
    : OpConversionPattern<FlashAttentionBackwardOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FlashAttentionBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value qkv = adaptor.getQkv();
    auto type = cast<RankedTensorType>(qkv.getType());
    PackedQkvHeads heads = op.getPackedHeads();
    SmallVector<PackedQkvHeads::Range> ranges{heads.query(), heads.key(),
                                              heads.value()};
    auto offsets = [&](PackedQkvHeads::Range r) {
      return SmallVector<OpFoldResult>{
          rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
          rewriter.getIndexAttr(r.start), rewriter.getIndexAttr(0)};
    };
    auto sizes = [&](PackedQkvHeads::Range r) {
      SmallVector<OpFoldResult> s;
      for (int64_t d = 0; d < 4; ++d)
        s.push_back(d == 2 ? OpFoldResult(rewriter.getIndexAttr(r.count))
                           : tensor::getMixedSize(rewriter, loc, qkv, d));
      return s;
    };
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    SmallVector<Value> parts;
    SmallVector<Type> types;
    for (PackedQkvHeads::Range r : ranges) {
      auto partType = RankedTensorType::get(
          {type.getDimSize(0), type.getDimSize(1), r.count, type.getDimSize(3)},
          type.getElementType());
      parts.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, partType, qkv, offsets(r), sizes(r), strides));
      types.push_back(partType);
    }
    if (Value sinks = adaptor.getSinks())
      types.push_back(sinks.getType());
    auto bw = AttentionBackwardOp::create(
        rewriter, loc, types, adaptor.getDout(), parts[0], parts[1], parts[2],
        adaptor.getSinks(), adaptor.getDocStart(), op.getScaleAttr(),
        op.getCausalAttr(), op.getSlidingWindowAttr(), op.getSoftcapAttr());
    Value out = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, qkv),
        type.getElementType());
    for (auto [i, r] : llvm::enumerate(ranges))
      out = tensor::InsertSliceOp::create(rewriter, loc, bw.getResult(i), out,
                                          offsets(r), sizes(r), strides);
    SmallVector<Value> results{out};
    if (adaptor.getSinks())
      results.push_back(bw.getResult(3));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::tfm::populateAttentionBackwardToGpuPatternsAndLegality(
    RewritePatternSet &patterns, ConversionTarget &target, int64_t lanes) {
  addKernelPattern<AttentionBackwardOp, ConvertAttentionBackward>(
      patterns, target, lanes);
  target.addDynamicallyLegalOp<FlashAttentionBackwardOp>(
      [lanes](FlashAttentionBackwardOp op) {
        return !getKernelParams(op, lanes);
      });
  patterns.add<DecomposeFlashAttentionBackward>(patterns.getContext());
}
