//===- TfmMoeOps.cpp - verifiers of the mixture-of-experts ops ------------===//
//
// Shapes of the MoE vocabulary (TfmMoeOps.td): token tensors [.., H] with N
// tokens in their leading dimensions, routing tensors [.., k] with the same
// leading dimensions, and the expert-grouped [R, .] tensors with R = N * k
// rows. Routing tensors are i64; every message has an expected-error test in
// test/Dialect/Tfm/moe-invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "TfmVerifyUtils.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

static constexpr int64_t kDyn = ShapedType::kDynamic;

/// An i64 tensor (routing values are i64 throughout).
static LogicalResult checkI64(Operation *op, StringRef what, Value v) {
  RankedTensorType t = rankedOf(v);
  if (!t.getElementType().isInteger(64))
    return op->emitOpError() << what << " must be i64, got " << t;
  return success();
}

/// An i64 tensor of at least rank 1 with a static last dimension: `[.., k]`.
static LogicalResult checkRouting(Operation *op, StringRef what, Value v) {
  if (failed(checkI64(op, what, v)))
    return failure();
  RankedTensorType t = rankedOf(v);
  if (t.getRank() < 1)
    return op->emitOpError() << what << " must have rank at least 1, got " << t;
  return checkStaticDims(op, what, t, {-1});
}

/// Router logits `[.., E]`: rank >= 1 with a static expert count.
static LogicalResult checkLogits(Operation *op, Value logits) {
  RankedTensorType lt = rankedOf(logits);
  if (lt.getRank() < 1)
    return op->emitOpError() << "logits must have rank at least 1, got " << lt;
  return checkStaticDims(op, "logits", lt, {-1});
}

/// `[R]` i64 with R compatible with the pairs of `routing` ([.., k]).
static LogicalResult checkRowsOf(Operation *op, StringRef what, Type type,
                                 RankedTensorType routing, int64_t extra = -1) {
  int64_t pairs = routing.hasStaticShape() ? routing.getNumElements() : kDyn;
  SmallVector<int64_t> expected{pairs};
  if (extra >= 0)
    expected.push_back(extra);
  return checkShape(op, what, type, expected);
}

/// A rank >= 2 token tensor [.., H] (static H) whose leading dimensions are
/// those of `routing`.
static LogicalResult checkTokens(Operation *op, StringRef what, Type type,
                                 RankedTensorType routing) {
  auto t = cast<RankedTensorType>(type);
  if (failed(checkStaticDims(op, what, t, {-1})))
    return failure();
  SmallVector<int64_t> expected(routing.getShape().drop_back());
  expected.push_back(t.getShape().back());
  return checkShape(op, what, t, expected);
}

//===----------------------------------------------------------------------===//
// MoeRouterOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyRouterAttrs(Operation *op, MoeRouting routing,
                                       bool normalize, double eps,
                                       double scale) {
  if (normalize && routing == MoeRouting::topk_softmax)
    return op->emitOpError()
           << "normalize has no meaning with topk_softmax (its weights "
              "already sum to 1)";
  if (!(eps >= 0) || !std::isfinite(eps) || (eps != 0 && !normalize))
    return op->emitOpError() << "normalize_eps must be finite and >= 0, and "
                                "only set with normalize, got "
                             << eps;
  if (!(scale > 0) || !std::isfinite(scale))
    return op->emitOpError()
           << "scale must be finite and positive, got " << scale;
  if (scale != 1.0 && routing == MoeRouting::topk_softmax)
    return op->emitOpError() << "scale applies to softmax_topk and "
                                "sigmoid_topk weights, not topk_softmax";
  return success();
}

/// The selection bias and expert groups of a router with `experts` experts.
static LogicalResult verifyRouterSelection(MoeRouterOp op, int64_t experts) {
  bool deepseek = op.getRouting() != MoeRouting::topk_softmax;
  if (Value bias = op.getBias()) {
    if (!deepseek)
      return op.emitOpError("a selection bias needs softmax_topk or "
                            "sigmoid_topk routing");
    auto expected = RankedTensorType::get(
        {experts}, op.getWeights().getType().getElementType());
    if (bias.getType() != expected)
      return op.emitOpError() << "bias must be " << expected
                              << " (one selection offset per expert, in the "
                                 "weights' type), got "
                              << bias.getType();
  }
  int64_t groups = op.getNumGroups();
  if (groups == 1) {
    if (op.getTopkGroups() || op.getGroupScore())
      return op.emitOpError("topk_groups and group_score need num_groups > 1");
    return success();
  }
  if (!deepseek)
    return op.emitOpError(
        "expert groups need softmax_topk or sigmoid_topk routing");
  if (groups < 1 || groups > 64 || experts % groups != 0)
    return op.emitOpError() << "num_groups must divide the " << experts
                            << " experts and be in [1, 64], got " << groups;
  if (!op.getTopkGroups() || !op.getGroupScore())
    return op.emitOpError("num_groups > 1 needs topk_groups and group_score");
  int64_t kept = *op.getTopkGroups(), size = experts / groups;
  if (kept < 1 || kept > groups)
    return op.emitOpError()
           << "topk_groups must be in [1, num_groups = " << groups << "], got "
           << kept;
  if (*op.getGroupScore() == MoeGroupScore::top2_sum && size < 2)
    return op.emitOpError() << "top2_sum group scores need at least 2 "
                               "experts per group, got "
                            << size;
  if (int64_t(op.getTopK()) > kept * size)
    return op.emitOpError()
           << "top_k = " << op.getTopK() << " exceeds the " << kept * size
           << " experts of the topk_groups kept groups";
  return success();
}

LogicalResult MoeRouterOp::verify() {
  if (failed(checkLogits(*this, getLogits())))
    return failure();
  RankedTensorType lt = rankedOf(getLogits());
  int64_t experts = lt.getShape().back(), k = getTopK();
  if (k < 1 || k > experts)
    return emitOpError() << "top_k must be in [1, " << experts
                         << "] (the number of experts), got " << k;
  SmallVector<int64_t> expected(lt.getShape().drop_back());
  expected.push_back(k);
  if (failed(checkStat(*this, "weights", getWeights().getType(),
                       lt.getElementType(), expected)) ||
      failed(checkShape(*this, "indices", getIndices().getType(), expected)) ||
      failed(checkRouting(*this, "indices", getIndices())))
    return failure();
  if (failed(verifyRouterAttrs(*this, getRouting(), getNormalize(),
                               getNormalizeEps().convertToDouble(),
                               getScale().convertToDouble())))
    return failure();
  return verifyRouterSelection(*this, experts);
}

LogicalResult MoeRouterBackwardOp::verify() {
  if (failed(checkLogits(*this, getLogits())))
    return failure();
  RankedTensorType lt = rankedOf(getLogits());
  if (failed(checkRouting(*this, "indices", getIndices())))
    return failure();
  RankedTensorType it = rankedOf(getIndices());
  SmallVector<int64_t> expected(lt.getShape().drop_back());
  expected.push_back(it.getShape().back());
  if (failed(checkShape(*this, "indices", it, expected)) ||
      failed(checkStat(*this, "dweights", getDweights().getType(),
                       lt.getElementType(), expected)))
    return failure();
  if (getDlogits().getType() != lt)
    return emitOpError() << "dlogits must have the logits type " << lt
                         << ", got " << getDlogits().getType();
  return verifyRouterAttrs(*this, getRouting(), getNormalize(),
                           getNormalizeEps().convertToDouble(),
                           getScale().convertToDouble());
}

//===----------------------------------------------------------------------===//
// MoeRoutePlanOp
//===----------------------------------------------------------------------===//

LogicalResult MoeRoutePlanOp::verify() {
  if (failed(checkRouting(*this, "indices", getIndices())))
    return failure();
  RankedTensorType it = rankedOf(getIndices());
  int64_t experts = getNumExperts();
  if (experts < 1)
    return emitOpError() << "num_experts must be positive, got " << experts;
  if (failed(checkShape(*this, "offsets", getOffsets().getType(),
                        {experts + 1})) ||
      failed(checkI64(*this, "offsets", getOffsets())))
    return failure();
  if (getPositions().getType() != it)
    return emitOpError() << "positions must have the indices type " << it
                         << ", got " << getPositions().getType();
  if (failed(checkRowsOf(*this, "sources", getSources().getType(), it)))
    return failure();
  return checkI64(*this, "sources", getSources());
}

//===----------------------------------------------------------------------===//
// Dispatch and combine
//===----------------------------------------------------------------------===//

LogicalResult MoeDispatchOp::verify() {
  if (failed(checkRouting(*this, "positions", getPositions())) ||
      failed(checkI64(*this, "sources", getSources())))
    return failure();
  RankedTensorType pt = rankedOf(getPositions());
  RankedTensorType xt = rankedOf(getX());
  if (xt.getRank() != pt.getRank())
    return emitOpError() << "input " << xt
                         << " must have the rank of positions " << pt;
  if (failed(checkTokens(*this, "input", xt, pt)) ||
      failed(checkRowsOf(*this, "sources", getSources().getType(), pt)) ||
      failed(checkRowsOf(*this, "result", getType(), pt, xt.getShape().back())))
    return failure();
  return checkElementType(*this, "result", getType(), xt.getElementType());
}

/// Expert-grouped `rows` [R, H] with the plan's `positions` [.., k] and
/// `sources` [R].
static LogicalResult verifyPlannedRows(Operation *op, Value rows,
                                       Value positions, Value sources) {
  if (failed(checkRouting(op, "positions", positions)) ||
      failed(checkI64(op, "sources", sources)))
    return failure();
  RankedTensorType pt = rankedOf(positions), rt = rankedOf(rows);
  if (rt.getRank() != 2)
    return op->emitOpError() << "rows must be [R, H], got " << rt;
  if (failed(checkStaticDims(op, "rows", rt, {1})) ||
      failed(checkRowsOf(op, "rows", rt, pt, rt.getDimSize(1))))
    return failure();
  return checkRowsOf(op, "sources", sources.getType(), pt);
}

LogicalResult MoeCombineOp::verify() {
  if (failed(verifyPlannedRows(*this, getRows(), getPositions(), getSources())))
    return failure();
  RankedTensorType pt = rankedOf(getPositions()), rt = rankedOf(getRows());
  if (getWeights() && failed(checkStat(*this, "weights", getWeights().getType(),
                                       rt.getElementType(), pt.getShape())))
    return failure();
  SmallVector<int64_t> expected(pt.getShape().drop_back());
  expected.push_back(rt.getDimSize(1));
  if (failed(checkShape(*this, "result", getType(), expected)))
    return failure();
  return checkElementType(*this, "result", getType(), rt.getElementType());
}

LogicalResult MoeCombineBackwardOp::verify() {
  if (failed(verifyPlannedRows(*this, getRows(), getPositions(), getSources())))
    return failure();
  RankedTensorType pt = rankedOf(getPositions()), rt = rankedOf(getRows());
  if (failed(checkTokens(*this, "dy", getDy().getType(), pt)) ||
      failed(checkStat(*this, "weights", getWeights().getType(),
                       rt.getElementType(), pt.getShape())))
    return failure();
  if (getDrows().getType() != rt)
    return emitOpError() << "drows must have the rows type " << rt << ", got "
                         << getDrows().getType();
  if (getDweights().getType() != getWeights().getType())
    return emitOpError() << "dweights must have the weights type "
                         << getWeights().getType() << ", got "
                         << getDweights().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Grouped matmuls
//===----------------------------------------------------------------------===//

/// x [R, K], w [E, N, K] (nt) or [E, K, N] (nn), offsets [E + 1] i64;
/// returns N through `n`.
static LogicalResult verifyGrouped(Operation *op, Value x, Value w,
                                   Value offsets, Transpose transpose,
                                   int64_t &n) {
  RankedTensorType xt = rankedOf(x), wt = rankedOf(w);
  if (xt.getRank() != 2)
    return op->emitOpError() << "input must be [R, K], got " << xt;
  if (wt.getRank() != 3)
    return op->emitOpError() << "weight must be [experts, out, in] (nt) or "
                                "[experts, in, out] (nn), got "
                             << wt;
  if (failed(checkStaticDims(op, "input", xt, {1})) ||
      failed(checkStaticDims(op, "weight", wt, {0, 1, 2})))
    return failure();
  bool nt = transpose == Transpose::nt;
  int64_t k = wt.getDimSize(nt ? 2 : 1);
  n = wt.getDimSize(nt ? 1 : 2);
  if (xt.getDimSize(1) != k)
    return op->emitOpError()
           << "contraction size mismatch: input " << xt << " has "
           << xt.getDimSize(1) << " columns but weight " << wt << " ("
           << stringifyTranspose(transpose) << ") has " << k;
  if (failed(checkElementType(op, "weight", wt, xt.getElementType())) ||
      failed(checkI64(op, "offsets", offsets)) ||
      failed(
          checkShape(op, "offsets", offsets.getType(), {wt.getDimSize(0) + 1})))
    return failure();
  return success();
}

LogicalResult MoeGroupedMatmulOp::verify() {
  int64_t n;
  if (failed(verifyGrouped(*this, getX(), getW(), getOffsets(), getTranspose(),
                           n)))
    return failure();
  RankedTensorType xt = rankedOf(getX());
  if (getBias()) {
    int64_t experts = rankedOf(getW()).getDimSize(0);
    if (failed(checkShape(*this, "bias", getBias().getType(), {experts, n})) ||
        failed(checkElementType(*this, "bias", getBias().getType(),
                                xt.getElementType())))
      return failure();
  }
  if (failed(checkShape(*this, "result", getType(), {xt.getDimSize(0), n})))
    return failure();
  return checkElementType(*this, "result", getType(), xt.getElementType());
}

LogicalResult MoeGroupedMatmulGradWeightOp::verify() {
  RankedTensorType wt = rankedOf(getDweight());
  int64_t n;
  if (failed(verifyGrouped(*this, getX(), getDweight(), getOffsets(),
                           getTranspose(), n)))
    return failure();
  RankedTensorType xt = rankedOf(getX());
  if (failed(checkShape(*this, "dy", getDy().getType(), {xt.getDimSize(0), n})))
    return failure();
  return checkElementType(*this, "dy", getDy().getType(), wt.getElementType());
}

//===----------------------------------------------------------------------===//
// Load-balancing loss
//===----------------------------------------------------------------------===//

/// logits [.., E], indices [.., k] with the same leading dimensions; stats
/// [2, E] of the statistic type.
static LogicalResult verifyLoadStats(Operation *op, Value logits,
                                     Type statsType) {
  if (failed(checkLogits(op, logits)))
    return failure();
  RankedTensorType lt = rankedOf(logits);
  return checkStat(op, "stats", statsType, lt.getElementType(),
                   {2, lt.getShape().back()});
}

LogicalResult MoeLoadStatsOp::verify() {
  if (failed(checkRouting(*this, "indices", getIndices())))
    return failure();
  RankedTensorType lt = rankedOf(getLogits()), it = rankedOf(getIndices());
  SmallVector<int64_t> expected(lt.getShape().drop_back());
  expected.push_back(it.getShape().back());
  if (lt.getRank() >= 1 && failed(checkShape(*this, "indices", it, expected)))
    return failure();
  return verifyLoadStats(*this, getLogits(), getStats().getType());
}

LogicalResult MoeLoadStatsBackwardOp::verify() {
  if (failed(verifyLoadStats(*this, getLogits(), getDstats().getType())))
    return failure();
  if (getDlogits().getType() != getLogits().getType())
    return emitOpError() << "dlogits must have the logits type "
                         << getLogits().getType() << ", got "
                         << getDlogits().getType();
  return success();
}

/// stats [L, 2, E] (static), top_k >= 1.
static LogicalResult verifyAuxStats(Operation *op, Value stats, int64_t topK) {
  RankedTensorType st = rankedOf(stats);
  if (st.getRank() != 3 || !st.hasStaticShape() || st.getDimSize(1) != 2)
    return op->emitOpError()
           << "stats must be a static [layers, 2, experts] tensor, got " << st;
  if (topK < 1 || topK > st.getDimSize(2))
    return op->emitOpError() << "top_k must be in [1, " << st.getDimSize(2)
                             << "] (the number of experts), got " << topK;
  return success();
}

LogicalResult MoeAuxLossOp::verify() {
  if (failed(verifyAuxStats(*this, getStats(), getTopK())))
    return failure();
  if (failed(checkShape(*this, "loss", getLoss().getType(), {})))
    return failure();
  return checkElementType(*this, "loss", getLoss().getType(),
                          rankedOf(getStats()).getElementType());
}

LogicalResult MoeAuxLossBackwardOp::verify() {
  if (failed(verifyAuxStats(*this, getStats(), getTopK())))
    return failure();
  if (failed(checkShape(*this, "dloss", getDloss().getType(), {})))
    return failure();
  if (getDstats().getType() != getStats().getType())
    return emitOpError() << "dstats must have the stats type "
                         << getStats().getType() << ", got "
                         << getDstats().getType();
  return success();
}

LogicalResult MoeGroupedBiasGradOp::verify() {
  RankedTensorType dy = rankedOf(getDy()), db = rankedOf(getDbias());
  if (dy.getRank() != 2)
    return emitOpError() << "dy must be [R, N], got " << dy;
  if (db.getRank() != 2 || !db.hasStaticShape())
    return emitOpError() << "dbias must be a static [experts, N], got " << db;
  if (failed(checkShape(*this, "dbias", db, {kDyn, dy.getDimSize(1)})) ||
      failed(checkI64(*this, "offsets", getOffsets())) ||
      failed(checkShape(*this, "offsets", getOffsets().getType(),
                        {db.getDimSize(0) + 1})))
    return failure();
  return checkElementType(*this, "dbias", db, dy.getElementType());
}

//===----------------------------------------------------------------------===//
// Clamped SwiGLU
//===----------------------------------------------------------------------===//

/// x [.., 2I] (static, even), y [.., I] like x otherwise; limit > 0.
static LogicalResult verifyClampedSwiglu(Operation *op, Value x, Type yType,
                                         double limit) {
  RankedTensorType xt = rankedOf(x);
  if (xt.getRank() < 1)
    return op->emitOpError() << "input must have rank at least 1, got " << xt;
  if (failed(checkStaticDims(op, "input", xt, {-1})))
    return failure();
  if (xt.getShape().back() % 2 != 0)
    return op->emitOpError()
           << "input must have an even last dimension (interleaved gate and "
              "up), got "
           << xt;
  SmallVector<int64_t> expected(xt.getShape().drop_back());
  expected.push_back(xt.getShape().back() / 2);
  if (failed(checkShape(op, "result", yType, expected)) ||
      failed(checkElementType(op, "result", yType, xt.getElementType())))
    return failure();
  return checkPositive(op, "limit", limit);
}

LogicalResult ClampedSwigluOp::verify() {
  return verifyClampedSwiglu(*this, getX(), getType(),
                             getLimit().convertToDouble());
}

LogicalResult ClampedSwigluBackwardOp::verify() {
  if (failed(verifyClampedSwiglu(*this, getX(), getDy().getType(),
                                 getLimit().convertToDouble())))
    return failure();
  if (getDx().getType() != getX().getType())
    return emitOpError() << "dx must have the input type " << getX().getType()
                         << ", got " << getDx().getType();
  return success();
}
