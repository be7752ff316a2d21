//===- TfmCosts.cpp - FLOPs and bytes of every tfm op ---------------------===//
//
// One function per op (external models of CostOpInterface). FLOPs count the
// arithmetic a good kernel does (a multiply-add is 2; exp, tanh, rsqrt are 1
// each); bytes count operands read and results written once, i.e. the
// traffic of a kernel that does not spill intermediates (attention never
// writes T x T). docs/spec.md "Cost model" lists the formulas.
//
//===----------------------------------------------------------------------===//

#include "tfm/Analysis/TfmCosts.h"
#include "tfm/Analysis/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// Operands read once, results written once; `flops` supplied.
OpCost streaming(Operation *op, const DimResolver &d, double flops) {
  OpCost c;
  c.flops = flops;
  for (Value v : op->getOperands())
    c.bytesRead += d.bytes(v);
  for (Value v : op->getResults())
    c.bytesWritten += d.bytes(v);
  return c;
}

/// `perElement` flops per element of result 0.
OpCost elementwise(Operation *op, const DimResolver &d, double perElement) {
  return streaming(op, d, perElement * d.elements(op->getResult(0)));
}

/// (query, key) pairs attention visits for T queries over S keys.
double visiblePairs(int64_t t, int64_t s, bool causal,
                    std::optional<int64_t> window) {
  if (!causal)
    return double(t) * double(s);
  // Query i sees min(i + 1, c) keys, c = min(s, window): a triangle up to c,
  // then c per query (closed form: any T costs the same to evaluate).
  double c = double(window ? std::min<int64_t>(s, *window) : s);
  double n = double(t);
  if (n <= c)
    return n * (n + 1) / 2;
  return c * (c + 1) / 2 + (n - c) * c;
}

/// QKᵀ (2D), softmax (~5), PV (2Dv) per visible pair and query head.
double attentionFlops(const DimResolver &d, Value q, Value k, Value v,
                      bool causal, std::optional<int64_t> window) {
  int64_t b = d.dim(q, 0), t = d.dim(q, 1), hq = d.dim(q, 2), dq = d.dim(q, 3);
  int64_t s = d.dim(k, 1), dv = d.dim(v, 3);
  return double(b) * double(hq) * visiblePairs(t, s, causal, window) *
         double(2 * dq + 2 * dv + 5);
}

double gemmFlops(const DimResolver &d, Value x, Value w, Transpose t) {
  double k = double(d.dim(w, t == Transpose::nt ? 1 : 0));
  double n = double(d.dim(w, t == Transpose::nt ? 0 : 1));
  double m = d.elements(x) / k;
  return 2 * m * n * k;
}

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

OpCost cost(EmbeddingOp op, const DimResolver &d) {
  // Only the gathered rows are read, not the table.
  OpCost c;
  c.bytesRead = d.bytes(op.getIds()) + d.bytes(op.getResult());
  c.bytesWritten = d.bytes(op.getResult());
  return c;
}
OpCost cost(RmsNormOp op, const DimResolver &d) {
  return elementwise(op, d, 4);
}
OpCost cost(LayerNormOp op, const DimResolver &d) {
  return elementwise(op, d, 8);
}
OpCost cost(FusedResidualRmsNormOp op, const DimResolver &d) {
  return elementwise(op, d, 5);
}
OpCost cost(MatmulOp op, const DimResolver &d) {
  double f = gemmFlops(d, op.getX(), op.getW(), op.getTranspose());
  if (op.getBias())
    f += d.elements(op.getResult());
  return streaming(op, d, f);
}
double ropeFlops(const DimResolver &d, Value x, int64_t rotaryDim) {
  return 3 * d.elements(x) * double(rotaryDim) / double(d.dim(x, 3));
}
OpCost cost(RopeOp op, const DimResolver &d) {
  return streaming(op, d, ropeFlops(d, op.getX(), op.getRotaryDim()));
}
OpCost cost(QkNormOp op, const DimResolver &d) {
  return streaming(op, d, 4 * (d.elements(op.getQ()) + d.elements(op.getK())));
}
/// `norm` FLOPs per q/k element and 3 per rotated one, on packed heads.
template <typename OpTy>
OpCost packedQkRope(OpTy op, const DimResolver &d, double norm) {
  PackedQkvHeads heads = op.getPackedHeads();
  double qk = d.elements(op.getQkv()) * double(heads.value().start) /
              double(heads.total());
  return streaming(op, d,
                   norm * qk + 3 * qk * double(op.getRotaryDim()) /
                                   d.dim(op.getQkv(), 3));
}
OpCost cost(QkvQkNormRopeOp op, const DimResolver &d) {
  return packedQkRope(op, d, 4);
}
OpCost cost(QkvRopeOp op, const DimResolver &d) {
  return packedQkRope(op, d, 0);
}
/// One compare and select per token.
OpCost cost(DocumentStartsOp op, const DimResolver &d) {
  return streaming(op, d, d.elements(op.getPositions()));
}
// With `doc_start`, the attention costs below are those of one document per
// row: the upper bound (packed documents see fewer keys, a number only the
// data knows).
OpCost cost(AttentionOp op, const DimResolver &d) {
  return streaming(op, d,
                   attentionFlops(d, op.getQ(), op.getK(), op.getV(),
                                  op.getCausal(), op.getSlidingWindow()));
}
OpCost cost(FlashAttentionOp op, const DimResolver &d) {
  // q, k, v are head ranges of qkv: rebuild their shapes for the formula.
  Value qkv = op.getQkv();
  int64_t b = d.dim(qkv, 0), t = d.dim(qkv, 1), dh = d.dim(qkv, 3);
  double pairs = visiblePairs(t, t, op.getCausal(), op.getSlidingWindow());
  return streaming(op, d,
                   double(b) * double(op.getNumQHeads()) * pairs *
                       double(4 * dh + 5));
}
OpCost cost(SwigluOp op, const DimResolver &d) { return elementwise(op, d, 5); }
OpCost cost(GegluOp op, const DimResolver &d) { return elementwise(op, d, 9); }
OpCost cost(SiluOp op, const DimResolver &d) { return elementwise(op, d, 4); }
OpCost cost(GeluTanhOp op, const DimResolver &d) {
  return elementwise(op, d, 8);
}
OpCost cost(Relu2Op op, const DimResolver &d) { return elementwise(op, d, 2); }
OpCost cost(SigmoidOp op, const DimResolver &d) {
  return elementwise(op, d, 4);
}
OpCost cost(AddOp op, const DimResolver &d) { return elementwise(op, d, 1); }
OpCost cost(MulOp op, const DimResolver &d) { return elementwise(op, d, 1); }
OpCost cost(ScaleOp op, const DimResolver &d) { return elementwise(op, d, 1); }
OpCost cost(SoftcapOp op, const DimResolver &d) {
  return elementwise(op, d, 3);
}
OpCost cost(ReshapeOp, const DimResolver &) { return {}; } // a view
OpCost cost(SplitOp op, const DimResolver &d) { return streaming(op, d, 0); }
OpCost cost(ConcatOp op, const DimResolver &d) { return streaming(op, d, 0); }
OpCost cost(ExpandOp op, const DimResolver &d) { return streaming(op, d, 0); }
/// One add per element of dy.
OpCost cost(ExpandBackwardOp op, const DimResolver &d) {
  return streaming(op, d, d.elements(op.getDy()));
}
OpCost cost(CrossEntropyOp op, const DimResolver &d) {
  return streaming(op, d, 4 * d.elements(op.getLogits()));
}
/// The chunked LM head: `gemms` GEMMs of [tokens, H] x [H, V], `perLogit`
/// FLOPs per logit (+`softcapExtra` under the softcap, +1 for the scale).
/// Logits stay in registers / cache chunk by chunk: not in the bytes.
template <typename OpTy>
OpCost lmHeadCost(OpTy op, const DimResolver &d, double gemms, double perLogit,
                  double softcapExtra) {
  double tokens = d.elements(op.getLabels());
  double v = double(d.dim(op.getWeight(), 0)),
         h = double(d.dim(op.getWeight(), 1));
  double logit = perLogit + (op.getSoftcap() ? softcapExtra : 0) +
                 (op.getLogitScale() ? 1 : 0);
  return streaming(op, d, 2 * gemms * tokens * v * h + logit * tokens * v);
}
OpCost cost(FusedLmHeadLossOp op, const DimResolver &d) {
  return lmHeadCost(op, d, 1, 4, 3);
}
/// Recomputed logits, then dhidden and dweight; dlogits ~5 per logit (+5
/// under the softcap). A dweight nobody reads (a frozen head) is not
/// computed (the lowering skips its GEMM) nor written.
OpCost cost(FusedLmHeadLossBackwardOp op, const DimResolver &d) {
  if (!op.getDweight().use_empty())
    return lmHeadCost(op, d, 3, 5, 5);
  OpCost c = lmHeadCost(op, d, 2, 5, 5);
  c.bytesWritten -= d.bytes(op.getDweight());
  return c;
}
//===----------------------------------------------------------------------===//
// Mixture of experts: work is proportional to the routed pairs (top-k of E)
//===----------------------------------------------------------------------===//

/// Scores (exp or sigmoid, ~4 per logit) and k selection passes over E;
/// with expert groups, topk_groups more passes over E choose the groups.
OpCost cost(MoeRouterOp op, const DimResolver &d) {
  double logits = d.elements(op.getLogits());
  int64_t groupPasses = op.getNumGroups() > 1 ? *op.getTopkGroups() : 0;
  return streaming(op, d, logits * double(4 + op.getTopK() + groupPasses));
}
/// A counting pass and a placement pass over the pairs.
OpCost cost(MoeRoutePlanOp op, const DimResolver &d) {
  return streaming(op, d, 2 * d.elements(op.getIndices()));
}
OpCost cost(MoeDispatchOp op, const DimResolver &d) {
  // Reads each token row once per slot (the gathered rows), writes [R, H].
  OpCost c;
  c.bytesRead = d.bytes(op.getSources()) + d.bytes(op.getResult());
  c.bytesWritten = d.bytes(op.getResult());
  return c;
}
OpCost cost(MoeCombineOp op, const DimResolver &d) {
  return streaming(op, d, 2 * d.elements(op.getRows()));
}
/// 2·R·N·K: every routed row once, whatever the split between experts; the
/// expert weights are read once each.
OpCost cost(MoeGroupedMatmulOp op, const DimResolver &d) {
  OpCost c = streaming(op, d, 0);
  auto w = cast<RankedTensorType>(op.getW().getType());
  c.flops = 2 * d.elements(op.getX()) *
            double(w.getDimSize(op.getTranspose() == Transpose::nt ? 1 : 2));
  return c;
}

OpCost cost(ZerosLikeOp op, const DimResolver &d) {
  return {0, 0, d.bytes(op.getResult())};
}
OpCost cost(YieldOp, const DimResolver &) { return {}; }

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

OpCost cost(EmbeddingBackwardOp op, const DimResolver &d) {
  return streaming(op, d, d.elements(op.getDy()));
}
OpCost cost(RmsNormBackwardOp op, const DimResolver &d) {
  // One more add per element with the residual stream's gradient.
  double perElement = op.getResidualGrad() ? 9 : 8;
  return streaming(op, d, perElement * d.elements(op.getX()));
}
OpCost cost(LayerNormBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 12 * d.elements(op.getX()));
}
OpCost cost(MatmulGradWeightOp op, const DimResolver &d) {
  double n = double(
      d.dim(op.getDy(), cast<ShapedType>(op.getDy().getType()).getRank() - 1));
  double k = double(
      d.dim(op.getX(), cast<ShapedType>(op.getX().getType()).getRank() - 1));
  double m = d.elements(op.getX()) / k;
  return streaming(op, d, 2 * m * n * k);
}
OpCost cost(SumLeadingOp op, const DimResolver &d) {
  return streaming(op, d, d.elements(op.getX()));
}
OpCost cost(ClampedSwigluOp op, const DimResolver &d) {
  return elementwise(op, d, 8);
}
OpCost cost(ClampedSwigluBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 12 * d.elements(op.getDy()));
}
OpCost cost(MoeGroupedBiasGradOp op, const DimResolver &d) {
  return streaming(op, d, d.elements(op.getDy()));
}
OpCost cost(MoeLoadStatsOp op, const DimResolver &d) {
  return streaming(op, d, 4 * d.elements(op.getLogits()));
}
OpCost cost(MoeAuxLossOp op, const DimResolver &d) {
  return streaming(op, d, d.elements(op.getStats()));
}
OpCost cost(MoeLoadStatsBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 6 * d.elements(op.getLogits()));
}
OpCost cost(MoeAuxLossBackwardOp op, const DimResolver &d) {
  return streaming(op, d, d.elements(op.getStats()));
}
OpCost cost(MoeRouterBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 8 * d.elements(op.getLogits()));
}
OpCost cost(MoeCombineBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 3 * d.elements(op.getRows()));
}
OpCost cost(MoeGroupedMatmulGradWeightOp op, const DimResolver &d) {
  OpCost c = streaming(op, d, 0);
  c.flops = 2 * d.elements(op.getDy()) * double(d.dim(op.getX(), 1));
  return c;
}
OpCost cost(RopeBackwardOp op, const DimResolver &d) {
  return streaming(op, d, ropeFlops(d, op.getDy(), op.getRotaryDim()));
}
//===----------------------------------------------------------------------===//
// Mamba2
//===----------------------------------------------------------------------===//

/// The SSD scan's work per chunk of L positions, head and (P, N): the
/// chunk x chunk c·bᵀ (2N per pair and group) and its product with x (2P per
/// pair and head), the state update and read-out (4·P·N per position).
double ssdScanFlops(const DimResolver &d, Value x, Value bm,
                    int64_t chunkSize) {
  int64_t b = d.dim(x, 0), t = d.dim(x, 1), h = d.dim(x, 2), p = d.dim(x, 3);
  int64_t g = d.dim(bm, 2), n = d.dim(bm, 3);
  int64_t l = std::min<int64_t>(chunkSize, t);
  double pairs = double(t) * double(l + 1) / 2; // causal pairs per chunk
  return double(b) * (pairs * double(2 * n * g + 2 * p * h + 3 * h) +
                      double(t) * double(h) * double(4 * p * n + 8));
}

OpCost cost(MambaConv1dOp op, const DimResolver &d) {
  int64_t k = d.dim(op.getWeight(), 1);
  return elementwise(op, d, double(2 * k + 5));
}
OpCost cost(MambaConv1dBackwardOp op, const DimResolver &d) {
  int64_t k = d.dim(op.getWeight(), 1);
  return streaming(op, d, double(6 * k + 8) * d.elements(op.getX()));
}
OpCost cost(MambaSsdScanOp op, const DimResolver &d) {
  return streaming(op, d,
                   ssdScanFlops(d, op.getX(), op.getB(), op.getChunkSize()));
}
OpCost cost(MambaSsdScanBackwardOp op, const DimResolver &d) {
  // Recomputes the chunk products, then about twice the forward's work.
  return streaming(
      op, d, 3 * ssdScanFlops(d, op.getX(), op.getB(), op.getChunkSize()));
}
//===----------------------------------------------------------------------===//
// Gated DeltaNet
//===----------------------------------------------------------------------===//

/// The chunked delta rule per head and chunk of L positions: k·kᵀ and q·kᵀ
/// (2·Dk per pair), the UT transform (~L³/3 as a substitution would do it), its
/// products with v and k (2·(Dv + Dk) per pair), the decayed q·kᵀ with the
/// new values (2·Dv per pair), and three [Dk, Dv] state products per
/// position (6·Dk·Dv).
double deltaRuleFlops(const DimResolver &d, Value q, Value v,
                      int64_t chunkSize) {
  int64_t b = d.dim(v, 0), t = d.dim(v, 1), h = d.dim(v, 2), dv = d.dim(v, 3);
  int64_t dk = d.dim(q, 3);
  int64_t l = std::min<int64_t>(chunkSize, t);
  double pairs = double(t) * double(l + 1) / 2;
  return double(b) * double(h) *
         (pairs * double(4 * dk + 4 * dv + 8) + double(t) * double(l * l) / 3 +
          double(t) * double(6 * dk * dv + 12));
}

OpCost cost(GatedDeltaRuleOp op, const DimResolver &d) {
  return streaming(op, d,
                   deltaRuleFlops(d, op.getQ(), op.getV(), op.getChunkSize()));
}
OpCost cost(GatedDeltaRuleBackwardOp op, const DimResolver &d) {
  // Recomputes the chunk's transform and products, then about twice the
  // forward's work.
  return streaming(
      op, d, 3 * deltaRuleFlops(d, op.getQ(), op.getV(), op.getChunkSize()));
}

OpCost cost(GatedRmsNormOp op, const DimResolver &d) {
  return elementwise(op, d, 9);
}
OpCost cost(GatedRmsNormBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 18 * d.elements(op.getX()));
}

OpCost cost(SiluGateOp op, const DimResolver &d) {
  return elementwise(op, d, 5);
}
OpCost cost(SiluGateBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 10 * d.elements(op.getX()));
}

OpCost cost(AttentionBackwardOp op, const DimResolver &d) {
  // Recompute s (2D), dp (2Dv), dq and dk (2D each), dv (2Dv), softmax ~10.
  Value q = op.getQ(), v = op.getV();
  int64_t b = d.dim(q, 0), t = d.dim(q, 1), hq = d.dim(q, 2), dq = d.dim(q, 3);
  int64_t dv = d.dim(v, 3);
  double pairs = visiblePairs(t, d.dim(op.getK(), 1), op.getCausal(),
                              op.getSlidingWindow());
  return streaming(
      op, d, double(b) * double(hq) * pairs * double(6 * dq + 4 * dv + 10));
}
OpCost cost(QkvQkNormRopeBackwardOp op, const DimResolver &d) {
  return packedQkRope(op, d, 8);
}
OpCost cost(FlashAttentionBackwardOp op, const DimResolver &d) {
  // As attention_backward, on the packed heads.
  Value qkv = op.getQkv();
  int64_t b = d.dim(qkv, 0), t = d.dim(qkv, 1), dh = d.dim(qkv, 3);
  double pairs = visiblePairs(t, t, op.getCausal(), op.getSlidingWindow());
  return streaming(op, d,
                   double(b) * double(op.getNumQHeads()) * pairs *
                       double(10 * dh + 10));
}
OpCost cost(CrossEntropyBackwardOp op, const DimResolver &d) {
  return streaming(op, d, 5 * d.elements(op.getLogits()));
}
OpCost cost(SiluBackwardOp op, const DimResolver &d) {
  return elementwise(op, d, 7);
}
OpCost cost(GeluTanhBackwardOp op, const DimResolver &d) {
  return elementwise(op, d, 16);
}
OpCost cost(Relu2BackwardOp op, const DimResolver &d) {
  return elementwise(op, d, 3);
}
OpCost cost(SigmoidBackwardOp op, const DimResolver &d) {
  return elementwise(op, d, 6);
}
OpCost cost(SoftcapBackwardOp op, const DimResolver &d) {
  return elementwise(op, d, 5);
}
OpCost cost(SwigluBackwardOp op, const DimResolver &d) {
  return elementwise(op, d, 6);
}
OpCost cost(GegluBackwardOp op, const DimResolver &d) {
  return elementwise(op, d, 12);
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

/// Per parameter element: decay 1, lerp 3, second moment 4, sqrt, divide
/// and epsilon 3, the step 3, the gradient scale 1.
OpCost cost(AdamwUpdateOp op, const DimResolver &d) {
  return streaming(op, d, 15 * d.elements(op.getParam()));
}
/// Scale, decay 2, momentum 3 (+2 with nesterov), the step 2.
OpCost cost(SgdUpdateOp op, const DimResolver &d) {
  return streaming(op, d,
                   (op.getNesterov() ? 10 : 8) * d.elements(op.getParam()));
}
/// A multiply-add per element.
OpCost cost(GlobalGradNormOp op, const DimResolver &d) {
  double n = 0;
  for (Value g : op.getGrads())
    n += d.elements(g);
  return streaming(op, d, 2 * n);
}

/// A scan: each body once per layer that runs it.
OpCost cost(RepeatOp op, const DimResolver &d) {
  OpCost total;
  SmallVector<int64_t> layersOfKind = op.getLayerCountsByKind();
  for (auto [region, n] : llvm::zip(op.getKinds(), layersOfKind)) {
    OpCost body;
    for (Operation &inner : region.front())
      if (auto c = dyn_cast<CostOpInterface>(inner))
        body += c.getCost(d);
    total += body.scaled(double(n));
  }
  return total;
}

template <typename OpTy>
struct CostModel : CostOpInterface::ExternalModel<CostModel<OpTy>, OpTy> {
  OpCost getCost(Operation *op, const DimResolver &dims) const {
    return cost(cast<OpTy>(op), dims);
  }
};

/// One model per op of the generated list: an op without a `cost` overload
/// above does not compile.
template <typename... OpTys> void attachToAllOps(MLIRContext *ctx) {
  (OpTys::template attachInterface<CostModel<OpTys>>(*ctx), ...);
}

} // namespace

int64_t mlir::tfm::moeTopKOf(Operation *scope) {
  int64_t topK = 1;
  scope->walk([&](MoeRouterOp router) { topK = router.getTopK(); });
  return topK;
}

void mlir::tfm::registerTfmCostModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfmDialect *) {
    attachToAllOps<
#define GET_OP_LIST
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"
        >(ctx);
  });
}
