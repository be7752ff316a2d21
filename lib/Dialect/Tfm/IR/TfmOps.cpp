//===- TfmOps.cpp - tfm op verifiers and folders --------------------------===//
//
// Verifiers reject every inconsistent shape, element type or attribute with
// a message naming the operand and the expected shape; each message has an
// expected-error test in test/Dialect/Tfm/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "TfmVerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

static constexpr int64_t kDyn = ShapedType::kDynamic;

/// Shape without its last dimension.
static SmallVector<int64_t> dropLast(ArrayRef<int64_t> shape) {
  return SmallVector<int64_t>(shape.drop_back());
}

/// Checks a norm weight: rank 1, size `n`, same element type as the input.
static LogicalResult checkNormWeight(Operation *op, StringRef what,
                                     Value weight, int64_t n, Type elem) {
  if (failed(checkShape(op, what, weight.getType(), {n})))
    return failure();
  return checkElementType(op, what, weight.getType(), elem);
}

/// Checks that `x` has at least `rank` dimensions.
static LogicalResult checkMinRank(Operation *op, StringRef what, Value x,
                                  int64_t rank) {
  if (rankedOf(x).getRank() >= rank)
    return success();
  return op->emitOpError() << what << " must have rank at least " << rank
                           << ", got " << x.getType();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = rankedOf(getTable());
  if (table.getRank() != 2)
    return emitOpError() << "table must be [vocab, hidden], got " << table;
  if (failed(checkStaticDims(*this, "table", table, {0, 1})))
    return failure();
  SmallVector<int64_t> expected(rankedOf(getIds()).getShape());
  expected.push_back(table.getDimSize(1));
  if (failed(checkShape(*this, "result", getType(), expected)))
    return failure();
  return checkElementType(*this, "result", getType(), table.getElementType());
}

//===----------------------------------------------------------------------===//
// Normalisation ops
//===----------------------------------------------------------------------===//

/// Shared by rmsnorm-like ops: y like x, weight [N], rstd = x without N.
static LogicalResult verifyRmsNormLike(Operation *op, Value x, Value weight,
                                       Value y, Value rstd, double eps) {
  if (failed(checkMinRank(op, "input", x, 2)) ||
      failed(checkStaticDims(op, "input", x.getType(), {-1})))
    return failure();
  RankedTensorType xt = rankedOf(x);
  if (y.getType() != xt)
    return op->emitOpError() << "result y must have the input type " << xt
                             << ", got " << y.getType();
  if (failed(checkNormWeight(op, "weight", weight, xt.getShape().back(),
                             xt.getElementType())))
    return failure();
  if (failed(checkStat(op, "rstd", rstd.getType(), xt.getElementType(),
                       dropLast(xt.getShape()))))
    return failure();
  return checkPositive(op, "eps", eps);
}

LogicalResult RmsNormOp::verify() {
  return verifyRmsNormLike(*this, getX(), getWeight(), getY(), getRstd(),
                           getEps().convertToDouble());
}

LogicalResult FusedResidualRmsNormOp::verify() {
  if (getResidual().getType() != getX().getType())
    return emitOpError() << "residual must have the input type "
                         << getX().getType() << ", got "
                         << getResidual().getType();
  if (getResidualOut().getType() != getX().getType())
    return emitOpError() << "residual_out must have the input type "
                         << getX().getType() << ", got "
                         << getResidualOut().getType();
  return verifyRmsNormLike(*this, getX(), getWeight(), getY(), getRstd(),
                           getEps().convertToDouble());
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyRmsNormLike(*this, getX(), getWeight(), getY(), getRstd(),
                               getEps().convertToDouble())))
    return failure();
  RankedTensorType xt = rankedOf(getX());
  if (getBias() &&
      failed(checkNormWeight(*this, "bias", getBias(), xt.getShape().back(),
                             xt.getElementType())))
    return failure();
  return checkStat(*this, "mean", getMean().getType(), xt.getElementType(),
                   dropLast(xt.getShape()));
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  if (failed(checkMinRank(*this, "input", getX(), 2)))
    return failure();
  RankedTensorType xt = rankedOf(getX()), wt = rankedOf(getW());
  if (wt.getRank() != 2)
    return emitOpError() << "weight must be a matrix, got " << wt;
  if (failed(checkStaticDims(*this, "weight", wt, {0, 1})) ||
      failed(checkStaticDims(*this, "input", xt, {-1})))
    return failure();
  bool nt = getTranspose() == Transpose::nt;
  int64_t k = wt.getDimSize(nt ? 1 : 0), n = wt.getDimSize(nt ? 0 : 1);
  if (!dimsCompatible(xt.getShape().back(), k))
    return emitOpError() << "contraction size mismatch: input " << xt << " has "
                         << xt.getShape().back() << " columns but weight " << wt
                         << " (" << stringifyTranspose(getTranspose())
                         << ") has " << k;
  if (failed(checkElementType(*this, "weight", wt, xt.getElementType())))
    return failure();
  if (getBias() &&
      failed(checkNormWeight(*this, "bias", getBias(), n, xt.getElementType())))
    return failure();
  SmallVector<int64_t> expected = dropLast(xt.getShape());
  expected.push_back(n);
  if (failed(checkShape(*this, "result", getType(), expected)))
    return failure();
  return checkElementType(*this, "result", getType(), xt.getElementType());
}

//===----------------------------------------------------------------------===//
// Rotary embeddings
//===----------------------------------------------------------------------===//

/// Shared RoPE attribute checks for a head dimension `headDim`.
static LogicalResult verifyRopeAttrs(Operation *op, int64_t headDim,
                                     double theta, int64_t rotaryDim,
                                     RopeScalingAttr scaling) {
  if (failed(checkPositive(op, "theta", theta)))
    return failure();
  if (rotaryDim <= 0 || rotaryDim % 2 != 0)
    return op->emitOpError()
           << "rotary_dim must be positive and even, got " << rotaryDim;
  if (!ShapedType::isDynamic(headDim) && rotaryDim > headDim)
    return op->emitOpError() << "rotary_dim " << rotaryDim
                             << " exceeds the head dimension " << headDim;
  if (scaling && scaling.getKind() == RopeKind::longrope &&
      static_cast<int64_t>(scaling.getShortFactor().size()) != rotaryDim / 2)
    return op->emitOpError()
           << "longrope factors must have rotary_dim / 2 = " << rotaryDim / 2
           << " entries, got " << scaling.getShortFactor().size();
  return success();
}

/// Positions are [B, T] matching the first two dimensions of `x`.
static LogicalResult verifyPositions(Operation *op, Value positions,
                                     RankedTensorType x) {
  return checkShape(op, "positions", positions.getType(),
                    {x.getDimSize(0), x.getDimSize(1)});
}

LogicalResult RopeOp::verify() {
  RankedTensorType xt = rankedOf(getX());
  if (xt.getRank() != 4)
    return emitOpError() << "input must be [batch, seq, heads, head_dim], got "
                         << xt;
  if (getType() != xt)
    return emitOpError() << "result must have the input type " << xt;
  if (failed(checkStaticDims(*this, "input", xt, {2, 3})) ||
      failed(verifyPositions(*this, getPositions(), xt)))
    return failure();
  return verifyRopeAttrs(*this, xt.getDimSize(3), getTheta().convertToDouble(),
                         getRotaryDim(), getScalingAttr());
}

//===----------------------------------------------------------------------===//
// Q/K normalisation
//===----------------------------------------------------------------------===//

LogicalResult QkNormOp::verify() {
  RankedTensorType qt = rankedOf(getQ()), kt = rankedOf(getK());
  if (qt.getRank() != 4 || kt.getRank() != 4)
    return emitOpError("q and k must be [batch, seq, heads, head_dim]");
  if (failed(checkStaticDims(*this, "q", qt, {2, 3})) ||
      failed(checkStaticDims(*this, "k", kt, {2, 3})))
    return failure();
  if (qt.getElementType() != kt.getElementType() ||
      !dimsCompatible(qt.getDimSize(3), kt.getDimSize(3)))
    return emitOpError() << "q " << qt << " and k " << kt
                         << " must share element type and head_dim";
  if (getQOut().getType() != qt || getKOut().getType() != kt)
    return emitOpError("results must have the types of q and k");
  bool perHead = getMode() == QkNormMode::per_head;
  auto weightSize = [&](RankedTensorType t) {
    return perHead ? t.getDimSize(3) : t.getDimSize(2) * t.getDimSize(3);
  };
  auto statShape = [&](RankedTensorType t) {
    SmallVector<int64_t> s{t.getDimSize(0), t.getDimSize(1)};
    if (perHead)
      s.push_back(t.getDimSize(2));
    return s;
  };
  if (failed(checkNormWeight(*this, "q_weight", getQWeight(), weightSize(qt),
                             qt.getElementType())) ||
      failed(checkNormWeight(*this, "k_weight", getKWeight(), weightSize(kt),
                             kt.getElementType())) ||
      failed(checkStat(*this, "q_rstd", getQRstd().getType(),
                       qt.getElementType(), statShape(qt))) ||
      failed(checkStat(*this, "k_rstd", getKRstd().getType(),
                       kt.getElementType(), statShape(kt))))
    return failure();
  return checkPositive(*this, "eps", getEps().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Head counts, window and softcap shared by attention ops.
static LogicalResult verifyAttentionAttrs(Operation *op, int64_t hq,
                                          int64_t hkv, double scale,
                                          std::optional<int64_t> window,
                                          std::optional<double> softcap) {
  if (hq <= 0 || hkv <= 0)
    return op->emitOpError() << "head counts must be positive, got " << hq
                             << " query and " << hkv << " key/value heads";
  if (hq % hkv != 0)
    return op->emitOpError()
           << "query heads (" << hq
           << ") must be a multiple of key/value heads (" << hkv << ")";
  if (failed(checkPositive(op, "scale", scale)))
    return failure();
  if (window && *window <= 0)
    return op->emitOpError()
           << "sliding_window must be positive, got " << *window;
  if (softcap && failed(checkPositive(op, "softcap", *softcap)))
    return failure();
  return success();
}

static LogicalResult verifySinks(Operation *op, Value sinks, int64_t hq,
                                 Type elem) {
  if (!sinks)
    return success();
  return checkNormWeight(op, "sinks", sinks, hq, elem);
}

/// `doc_start` (if given) is [batch, seq] of the queries, and keys are the
/// same tokens (its entries index keys).
static LogicalResult verifyDocStart(Operation *op, Value docStart, bool causal,
                                    int64_t batch, int64_t queries,
                                    int64_t keys) {
  if (!docStart)
    return success();
  // A query's document is [doc_start, the query] under the causal mask;
  // without it, the document's end would be needed too.
  if (!causal)
    return op->emitOpError("doc_start requires causal attention");
  if (!ShapedType::isDynamic(queries) && !ShapedType::isDynamic(keys) &&
      queries != keys)
    return op->emitOpError() << "doc_start needs the keys to be the queries' "
                                "tokens, got "
                             << queries << " queries and " << keys << " keys";
  return checkShape(op, "doc_start", docStart.getType(), {batch, queries});
}

/// q/k/v shapes, head counts and attributes shared by tfm.attention and its
/// backward.
static LogicalResult verifyAttentionOperands(Operation *op, Value q, Value k,
                                             Value v, Value sinks,
                                             Value docStart, double scale,
                                             bool causal,
                                             std::optional<int64_t> window,
                                             std::optional<APFloat> softcap) {
  RankedTensorType qt = rankedOf(q), kt = rankedOf(k), vt = rankedOf(v);
  if (qt.getRank() != 4 || kt.getRank() != 4 || vt.getRank() != 4)
    return op->emitOpError("q, k and v must be [batch, seq, heads, head_dim]");
  Type elem = qt.getElementType();
  if (kt.getElementType() != elem || vt.getElementType() != elem)
    return op->emitOpError("q, k and v must share an element type");
  int64_t b = qt.getDimSize(0), s = kt.getDimSize(1);
  int64_t hq = qt.getDimSize(2), hkv = kt.getDimSize(2);
  if (failed(checkShape(op, "k", kt, {b, kDyn, hkv, qt.getDimSize(3)})) ||
      failed(checkShape(op, "v", vt, {b, s, hkv, kDyn})))
    return failure();
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
    return op->emitOpError("head counts must be static");
  if (failed(checkStaticDims(op, "q", qt, {3})) ||
      failed(checkStaticDims(op, "v", vt, {3})))
    return failure();
  if (failed(verifyAttentionAttrs(
          op, hq, hkv, scale, window,
          softcap ? std::optional<double>(softcap->convertToDouble())
                  : std::nullopt)))
    return failure();
  if (window && !causal)
    return op->emitOpError("sliding_window requires causal attention");
  if (failed(verifyDocStart(op, docStart, causal, b, qt.getDimSize(1), s)))
    return failure();
  return verifySinks(op, sinks, hq, elem);
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyAttentionOperands(*this, getQ(), getK(), getV(), getSinks(),
                                     getDocStart(),
                                     getScale().convertToDouble(), getCausal(),
                                     getSlidingWindow(), getSoftcap())))
    return failure();
  RankedTensorType qt = rankedOf(getQ()), vt = rankedOf(getV());
  if (failed(checkShape(*this, "result", getType(),
                        {qt.getDimSize(0), qt.getDimSize(1), qt.getDimSize(2),
                         vt.getDimSize(3)})))
    return failure();
  return checkElementType(*this, "result", getType(), qt.getElementType());
}

/// Packed QKV: [B, T, Hq + 2*Hkv, D].
static LogicalResult verifyPackedQkv(Operation *op, RankedTensorType qkv,
                                     int64_t hq, int64_t hkv) {
  if (qkv.getRank() != 4)
    return op->emitOpError()
           << "qkv must be [batch, seq, q_heads + 2 * kv_heads, head_dim], got "
           << qkv;
  if (failed(checkStaticDims(op, "qkv", qkv, {2, 3})))
    return failure();
  int64_t total = PackedQkvHeads{hq, hkv}.total();
  if (hq > 0 && hkv > 0 && qkv.getDimSize(2) != total)
    return op->emitOpError() << "qkv has " << qkv.getDimSize(2)
                             << " heads, expected num_q_heads + 2 * "
                                "num_kv_heads = "
                             << total;
  return success();
}

/// The attributes and packed operand tfm.flash_attention and its backward
/// share.
template <typename OpTy> static LogicalResult verifyFlashAttention(OpTy op) {
  int64_t hq = op.getNumQHeads(), hkv = op.getNumKvHeads();
  std::optional<double> softcap;
  if (op.getSoftcap())
    softcap = op.getSoftcap()->convertToDouble();
  if (failed(verifyAttentionAttrs(op, hq, hkv, op.getScale().convertToDouble(),
                                  op.getSlidingWindow(), softcap)))
    return failure();
  RankedTensorType qkv = rankedOf(op.getQkv());
  if (failed(verifyPackedQkv(op, qkv, hq, hkv)))
    return failure();
  return verifyDocStart(op, op.getDocStart(), op.getCausal(), qkv.getDimSize(0),
                        qkv.getDimSize(1), qkv.getDimSize(1));
}

LogicalResult DocumentStartsOp::verify() {
  if (rankedOf(getPositions()).getRank() != 2)
    return emitOpError() << "positions must be [batch, seq], got "
                         << getPositions().getType();
  return success();
}

LogicalResult FlashAttentionOp::verify() {
  RankedTensorType qkv = rankedOf(getQkv());
  int64_t hq = getNumQHeads();
  if (failed(verifyFlashAttention(*this)))
    return failure();
  if (getSlidingWindow() && !getCausal())
    return emitOpError("sliding_window requires causal attention");
  Type elem = qkv.getElementType();
  int64_t b = qkv.getDimSize(0), t = qkv.getDimSize(1);
  if (failed(verifySinks(*this, getSinks(), hq, elem)) ||
      failed(checkShape(*this, "result", getResult().getType(),
                        {b, t, hq, qkv.getDimSize(3)})) ||
      failed(checkElementType(*this, "result", getResult().getType(), elem)))
    return failure();
  return checkStat(*this, "lse", getLse().getType(), elem, {b, hq, t});
}

/// The operands and attributes tfm.qkv_qk_norm_rope and its backward
/// share: packed heads, per-head norm weights, positions, the f32 rstd of
/// each q and k head, eps and the RoPE attributes.
template <typename OpTy> static LogicalResult verifyQkvNormRope(OpTy op) {
  RankedTensorType qkv = rankedOf(op.getQkv());
  int64_t hq = op.getNumQHeads(), hkv = op.getNumKvHeads();
  if (failed(
          verifyAttentionAttrs(op, hq, hkv, 1.0, std::nullopt, std::nullopt)) ||
      failed(verifyPackedQkv(op, qkv, hq, hkv)))
    return failure();
  Type elem = qkv.getElementType();
  int64_t b = qkv.getDimSize(0), t = qkv.getDimSize(1), d = qkv.getDimSize(3);
  if (failed(checkNormWeight(op, "q_weight", op.getQWeight(), d, elem)) ||
      failed(checkNormWeight(op, "k_weight", op.getKWeight(), d, elem)) ||
      failed(verifyPositions(op, op.getPositions(), qkv)) ||
      failed(
          checkStat(op, "q_rstd", op.getQRstd().getType(), elem, {b, t, hq})) ||
      failed(checkStat(op, "k_rstd", op.getKRstd().getType(), elem,
                       {b, t, hkv})) ||
      failed(checkPositive(op, "eps", op.getEps().convertToDouble())))
    return failure();
  return verifyRopeAttrs(op, d, op.getTheta().convertToDouble(),
                         op.getRotaryDim(), op.getScalingAttr());
}

LogicalResult QkvQkNormRopeOp::verify() {
  if (getResult().getType() != getQkv().getType())
    return emitOpError() << "result must have the qkv type "
                         << getQkv().getType();
  return verifyQkvNormRope(*this);
}

LogicalResult QkvRopeOp::verify() {
  RankedTensorType qkv = rankedOf(getQkv());
  int64_t hq = getNumQHeads(), hkv = getNumKvHeads();
  if (failed(verifyAttentionAttrs(*this, hq, hkv, 1.0, std::nullopt,
                                  std::nullopt)) ||
      failed(verifyPackedQkv(*this, qkv, hq, hkv)))
    return failure();
  if (getResult().getType() != qkv)
    return emitOpError() << "result must have the qkv type " << qkv;
  if (failed(verifyPositions(*this, getPositions(), qkv)))
    return failure();
  return verifyRopeAttrs(*this, qkv.getDimSize(3), getTheta().convertToDouble(),
                         getRotaryDim(), getScalingAttr());
}

//===----------------------------------------------------------------------===//
// Gated linear units
//===----------------------------------------------------------------------===//

/// [..., 2I] -> [..., I].
static LogicalResult verifyGlu(Operation *op, Value x, Value result) {
  if (failed(checkMinRank(op, "input", x, 1)))
    return failure();
  RankedTensorType xt = rankedOf(x);
  int64_t packed = xt.getShape().back();
  if (ShapedType::isDynamic(packed) || packed % 2 != 0)
    return op->emitOpError() << "packed up|gate dimension must be static and "
                                "even, got "
                             << xt;
  SmallVector<int64_t> expected = dropLast(xt.getShape());
  expected.push_back(packed / 2);
  if (failed(checkShape(op, "result", result.getType(), expected)))
    return failure();
  return checkElementType(op, "result", result.getType(), xt.getElementType());
}

LogicalResult SwigluOp::verify() {
  return verifyGlu(*this, getX(), getResult());
}
LogicalResult GegluOp::verify() {
  return verifyGlu(*this, getX(), getResult());
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().convertToDouble() == 1.0)
    return getX();
  return {};
}

LogicalResult SoftcapOp::verify() {
  return checkPositive(*this, "cap", getCap().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

/// Number of leading dynamic dimensions.
static int64_t leadingDynamic(ArrayRef<int64_t> shape) {
  int64_t n = 0;
  while (n < static_cast<int64_t>(shape.size()) &&
         ShapedType::isDynamic(shape[n]))
    ++n;
  return n;
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = rankedOf(getX()), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("reshape must keep the element type");
  int64_t nIn = leadingDynamic(in.getShape());
  int64_t nOut = leadingDynamic(out.getShape());
  ArrayRef<int64_t> restIn = in.getShape().drop_front(nIn);
  ArrayRef<int64_t> restOut = out.getShape().drop_front(nOut);
  if (nIn != nOut || !llvm::none_of(restIn, ShapedType::isDynamic) ||
      !llvm::none_of(restOut, ShapedType::isDynamic))
    return emitOpError() << "only static trailing dimensions can be "
                            "regrouped; the leading dynamic dimensions must "
                            "match: "
                         << in << " vs " << out;
  int64_t pIn = 1, pOut = 1;
  for (int64_t d : restIn)
    pIn *= d;
  for (int64_t d : restOut)
    pOut *= d;
  if (pIn != pOut)
    return emitOpError() << "element count mismatch: " << in << " has " << pIn
                         << " per leading index, " << out << " has " << pOut;
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getX().getType() == getType())
    return getX();
  // reshape(reshape(x)) regroups x directly.
  if (auto inner = getX().getDefiningOp<ReshapeOp>()) {
    if (inner.getX().getType() == getType())
      return inner.getX();
    getXMutable().assign(inner.getX());
    return getResult();
  }
  return {};
}

/// Checks `dim` for a static concat/split axis of rank `rank`.
static LogicalResult checkAxis(Operation *op, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError()
           << "dim " << dim << " out of range for rank " << rank;
  return success();
}

/// The pieces match the whole except along `dim`, where their sizes add up.
static LogicalResult verifyPieces(Operation *op, RankedTensorType whole,
                                  TypeRange pieces, int64_t dim,
                                  StringRef pieceName) {
  if (failed(checkAxis(op, dim, whole.getRank())))
    return failure();
  if (pieces.empty())
    return op->emitOpError() << "needs at least one " << pieceName;
  if (ShapedType::isDynamic(whole.getDimSize(dim)))
    return op->emitOpError() << "dimension " << dim << " must be static";
  int64_t sum = 0;
  for (Type t : pieces) {
    auto piece = cast<RankedTensorType>(t);
    if (piece.getElementType() != whole.getElementType() ||
        piece.getRank() != whole.getRank())
      return op->emitOpError()
             << pieceName << " " << piece
             << " must match the rank and element type of " << whole;
    for (int64_t i = 0; i < whole.getRank(); ++i)
      if (i != dim && !dimsCompatible(piece.getDimSize(i), whole.getDimSize(i)))
        return op->emitOpError()
               << pieceName << " " << piece << " differs from " << whole
               << " outside dimension " << dim;
    if (ShapedType::isDynamic(piece.getDimSize(dim)))
      return op->emitOpError() << "dimension " << dim << " must be static";
    sum += piece.getDimSize(dim);
  }
  if (sum != whole.getDimSize(dim))
    return op->emitOpError()
           << pieceName << " sizes along dimension " << dim << " add up to "
           << sum << ", expected " << whole.getDimSize(dim);
  return success();
}

LogicalResult SplitOp::verify() {
  return verifyPieces(*this, rankedOf(getX()), getResultTypes(), getDim(),
                      "result");
}

LogicalResult ConcatOp::verify() {
  return verifyPieces(*this, getType(), getInputs().getTypes(), getDim(),
                      "input");
}

/// `wide` is `narrow` with the size-1 static dimension `dim` repeated.
static LogicalResult verifyExpanded(Operation *op, RankedTensorType narrow,
                                    RankedTensorType wide, int64_t dim) {
  if (narrow.getRank() != wide.getRank() || narrow.getRank() < 2 ||
      narrow.getElementType() != wide.getElementType())
    return op->emitOpError() << "expects the same rank (at least 2) and "
                                "element type, got "
                             << narrow << " and " << wide;
  if (dim < 0 || dim >= narrow.getRank() || narrow.getDimSize(dim) != 1 ||
      wide.isDynamicDim(dim))
    return op->emitOpError()
           << "dim " << dim << " must be a static dimension of size 1 in "
           << narrow << " and static in " << wide;
  for (int64_t d = 0; d < narrow.getRank(); ++d)
    if (d != dim && narrow.getDimSize(d) != wide.getDimSize(d))
      return op->emitOpError()
             << narrow << " and " << wide << " differ outside dim " << dim;
  return success();
}

LogicalResult ExpandOp::verify() {
  return verifyExpanded(*this, rankedOf(getX()), rankedOf(getResult()),
                        getDim());
}

LogicalResult ExpandBackwardOp::verify() {
  return verifyExpanded(*this, rankedOf(getDx()), rankedOf(getDy()), getDim());
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// logits/hidden [B, T, X] against labels [B, T].
static LogicalResult verifyTokensAndLabels(Operation *op, RankedTensorType x,
                                           Value labels) {
  if (x.getRank() != 3)
    return op->emitOpError() << "expected [batch, seq, features], got " << x;
  if (failed(checkStaticDims(op, "features", x, {2})))
    return failure();
  return checkShape(op, "labels", labels.getType(),
                    {x.getDimSize(0), x.getDimSize(1)});
}

LogicalResult CrossEntropyOp::verify() {
  RankedTensorType logits = rankedOf(getLogits());
  if (failed(verifyTokensAndLabels(*this, logits, getLabels())))
    return failure();
  return checkStat(*this, "loss", getLoss().getType(), logits.getElementType(),
                   {});
}

/// hidden [B, T, H] with labels [B, T], and a weight [vocab, H] of its type.
static LogicalResult verifyLmHead(Operation *op, RankedTensorType hidden,
                                  RankedTensorType w, Value labels) {
  if (failed(verifyTokensAndLabels(op, hidden, labels)))
    return failure();
  if (w.getRank() != 2 || !w.hasStaticShape() ||
      w.getDimSize(1) != hidden.getDimSize(2))
    return op->emitOpError() << "weight must be [vocab, "
                             << hidden.getDimSize(2) << "], got " << w;
  return checkElementType(op, "weight", w, hidden.getElementType());
}

static LogicalResult verifyLmHeadAttrs(Operation *op,
                                       std::optional<APFloat> softcap,
                                       std::optional<APFloat> scale) {
  if (softcap &&
      failed(checkPositive(op, "softcap", softcap->convertToDouble())))
    return failure();
  if (scale && (!std::isfinite(scale->convertToDouble()) ||
                scale->convertToDouble() == 0.0))
    return op->emitOpError("logit_scale must be finite and nonzero");
  return success();
}

LogicalResult FusedLmHeadLossOp::verify() {
  RankedTensorType hidden = rankedOf(getHidden()), w = rankedOf(getWeight());
  if (failed(verifyLmHead(*this, hidden, w, getLabels())))
    return failure();
  if (failed(verifyLmHeadAttrs(*this, getSoftcap(), getLogitScale())))
    return failure();
  Type elem = hidden.getElementType();
  if (failed(checkStat(*this, "loss", getLoss().getType(), elem, {})))
    return failure();
  return checkStat(*this, "lse", getLse().getType(), elem,
                   {hidden.getDimSize(0), hidden.getDimSize(1)});
}

//===----------------------------------------------------------------------===//
// RepeatOp
//===----------------------------------------------------------------------===//

/// The kind set of stacked value `i` as written (null: absent).
static DenseI64ArrayAttr kindSetOf(std::optional<ArrayAttr> sets, unsigned i) {
  return sets ? cast<DenseI64ArrayAttr>((*sets)[i]) : DenseI64ArrayAttr();
}

/// `set`, or null when it lists every one of `kinds` kinds.
static DenseI64ArrayAttr normalizedKindSet(DenseI64ArrayAttr set,
                                           unsigned kinds) {
  return set && set.size() == int64_t(kinds) ? DenseI64ArrayAttr() : set;
}

/// Checks that `sets` (weight_kinds or stacked_kinds) has one sorted,
/// in-range kind list per stacked value, and that each value's leading
/// dimension is the number of layers of its kinds.
static LogicalResult verifyKindSets(RepeatOp op, StringRef attrName,
                                    StringRef what, ValueRange values,
                                    std::optional<ArrayAttr> sets) {
  unsigned kinds = op.getKinds().size();
  if (sets && sets->size() != values.size())
    return op.emitOpError()
           << attrName << " has " << sets->size() << " entries for "
           << values.size() << " " << what << "s";
  for (auto [i, v] : llvm::enumerate(values)) {
    DenseI64ArrayAttr set = kindSetOf(sets, i);
    if (set) {
      if (set.empty())
        return op.emitOpError()
               << attrName << " entry " << i << " covers no layer kind";
      for (auto [j, k] : llvm::enumerate(set.asArrayRef()))
        if (k < 0 || k >= kinds || (j > 0 && k <= set[j - 1]))
          return op.emitOpError() << attrName << " entry " << i
                                  << " must list distinct layer kinds in [0, "
                                  << kinds << ") in increasing order";
    }
    int64_t expected = op.getNumLayersOfKinds(set);
    if (expected == 0)
      return op.emitOpError()
             << what << " #" << i << " covers layer kinds that no layer runs";
    RankedTensorType t = rankedOf(v);
    if (t.getRank() >= 1 && t.getDimSize(0) == expected)
      continue;
    InFlightDiagnostic diag = op.emitOpError()
                              << what << " #" << i
                              << " must have a leading dimension of ";
    if (set) {
      diag << expected << ", the number of layers of kinds [";
      llvm::interleaveComma(set.asArrayRef(), diag);
      diag << "]";
    } else {
      diag << "num_layers = " << expected;
    }
    return diag << ", got " << t;
  }
  return success();
}

LogicalResult RepeatOp::verify() {
  int64_t layers = getNumLayers();
  if (layers <= 0)
    return emitOpError() << "num_layers must be positive, got " << layers;
  size_t numCarried = getInits().size();
  if (getNumResults() < numCarried ||
      TypeRange(getCarriedResults().getTypes()) != getInits().getTypes())
    return emitOpError("result types must match the carried (init) types");
  unsigned kinds = getKinds().size();
  if (kinds == 0)
    return emitOpError("needs at least one layer body region");
  if (auto schedule = getSchedule()) {
    if (static_cast<int64_t>(schedule->size()) != layers)
      return emitOpError() << "schedule has " << schedule->size()
                           << " entries, expected num_layers = " << layers;
    for (auto [i, k] : llvm::enumerate(*schedule))
      if (k < 0 || k >= kinds)
        return emitOpError() << "schedule entry " << i << " is " << k
                             << ", but there are " << kinds << " layer kinds";
  } else if (kinds != 1) {
    return emitOpError("several layer kinds need a schedule");
  }
  if (auto names = getKindNames(); names && names->size() != kinds)
    return emitOpError() << "kind_names has " << names->size()
                         << " entries for " << kinds << " layer kinds";
  if (failed(verifyKindSets(*this, "weight_kinds", "stacked weight",
                            getWeights(), getWeightKinds())))
    return failure();
  return verifyKindSets(*this, "stacked_kinds", "stacked output",
                        getStackedResults(), getStackedKinds());
}

static RankedTensorType sliceType(Value stacked) {
  RankedTensorType t = rankedOf(stacked);
  return RankedTensorType::get(t.getShape().drop_front(), t.getElementType());
}

LogicalResult RepeatOp::verifyRegions() {
  // A layer body is one layer: a scan inside it has no meaning for the
  // importer, autodiff (whose saved slots are per layer) or recompute
  // planning, so it is refused here rather than half-supported there.
  for (Region &region : getKinds()) {
    WalkResult nested = region.walk([](RepeatOp inner) {
      inner.emitOpError("is nested in another tfm.repeat's layer body; "
                        "layer scans do not nest");
      return WalkResult::interrupt();
    });
    if (nested.wasInterrupted())
      return failure();
  }
  for (auto [k, region] : llvm::enumerate(getKinds())) {
    SmallVector<Type> expected(getInits().getTypes());
    for (unsigned j : getWeightsOfKind(k))
      expected.push_back(sliceType(getWeights()[j]));
    Block &body = region.front();
    if (TypeRange(body.getArgumentTypes()) != TypeRange(expected)) {
      InFlightDiagnostic diag = emitOpError()
                                << "layer kind " << k
                                << " block arguments must be the carried "
                                   "types then the per-layer weight types (";
      llvm::interleaveComma(expected, diag);
      return diag << ")";
    }
    auto yield = dyn_cast<YieldOp>(body.getTerminator());
    if (!yield)
      return emitOpError() << "layer kind " << k << " must end with tfm.yield";
    SmallVector<Type> yieldTypes(getInits().getTypes());
    for (unsigned i : getStackedOfKind(k))
      yieldTypes.push_back(sliceType(getStackedResults()[i]));
    if (TypeRange(yield.getValues().getTypes()) != TypeRange(yieldTypes))
      return yield.emitOpError()
             << "yields types that differ from the carried types and the "
                "per-layer stacked output types of its kind";
  }
  return success();
}

unsigned RepeatOp::getKindOfLayer(int64_t layer) {
  if (auto schedule = getSchedule())
    return (*schedule)[layer];
  return 0;
}

SmallVector<int64_t> RepeatOp::getLayerCountsByKind() {
  SmallVector<int64_t> counts(getKinds().size(), 0);
  if (auto schedule = getSchedule()) {
    for (int64_t kind : *schedule)
      ++counts[kind];
  } else if (!counts.empty()) {
    counts[0] = getNumLayers();
  }
  return counts;
}

static bool setCovers(DenseI64ArrayAttr set, unsigned kind) {
  return !set || llvm::is_contained(set.asArrayRef(), int64_t(kind));
}

DenseI64ArrayAttr RepeatOp::getWeightKindSet(unsigned weight) {
  return normalizedKindSet(kindSetOf(getWeightKinds(), weight),
                           getKinds().size());
}

DenseI64ArrayAttr RepeatOp::getStackedKindSet(unsigned stacked) {
  return normalizedKindSet(kindSetOf(getStackedKinds(), stacked),
                           getKinds().size());
}

bool RepeatOp::weightCoversKind(unsigned weight, unsigned kind) {
  return setCovers(kindSetOf(getWeightKinds(), weight), kind);
}

bool RepeatOp::stackedCoversKind(unsigned stacked, unsigned kind) {
  return setCovers(kindSetOf(getStackedKinds(), stacked), kind);
}

SmallVector<unsigned> RepeatOp::getWeightsOfKind(unsigned kind) {
  SmallVector<unsigned> result;
  for (unsigned j = 0, e = getWeights().size(); j < e; ++j)
    if (weightCoversKind(j, kind))
      result.push_back(j);
  return result;
}

SmallVector<unsigned> RepeatOp::getStackedOfKind(unsigned kind) {
  SmallVector<unsigned> result;
  for (unsigned i = 0, e = getStackedResults().size(); i < e; ++i)
    if (stackedCoversKind(i, kind))
      result.push_back(i);
  return result;
}

Value RepeatOp::getYieldedOfKind(unsigned stacked, unsigned kind) {
  SmallVector<unsigned> written = getStackedOfKind(kind);
  auto pos = llvm::find(written, stacked);
  if (pos == written.end())
    return Value();
  Operation *yield = getKinds()[kind].front().getTerminator();
  return yield->getOperand(getInits().size() + (pos - written.begin()));
}

Value RepeatOp::getStackedInputOf(BlockArgument arg) {
  Region *region = arg.getOwner()->getParent();
  unsigned numCarried = getInits().size();
  if (region->getParentOp() != getOperation() ||
      arg.getArgNumber() < numCarried)
    return Value();
  SmallVector<unsigned> read = getWeightsOfKind(region->getRegionNumber());
  unsigned pos = arg.getArgNumber() - numCarried;
  return pos < read.size() ? getWeights()[read[pos]] : Value();
}

int64_t RepeatOp::getNumLayersOfKinds(DenseI64ArrayAttr kinds) {
  // From the per-kind counts, never a walk over the layers: the verifier
  // and the cost report see `num_layers` up to 2^62.
  int64_t count = 0;
  for (auto [kind, layers] : llvm::enumerate(getLayerCountsByKind()))
    if (setCovers(kinds, kind))
      count += layers;
  return count;
}

std::pair<int64_t, int64_t>
RepeatOp::getLayerRangeOfKinds(DenseI64ArrayAttr kinds) {
  auto schedule = getSchedule();
  if (!schedule)
    return setCovers(kinds, 0)
               ? std::pair<int64_t, int64_t>(0, getNumLayers() - 1)
               : std::pair<int64_t, int64_t>(-1, -1);
  int64_t first = -1, last = -1;
  for (auto [layer, kind] : llvm::enumerate(*schedule)) {
    if (!setCovers(kinds, kind))
      continue;
    if (first < 0)
      first = layer;
    last = layer;
  }
  return {first, last};
}

SmallVector<int64_t> RepeatOp::getLayersOfKinds(DenseI64ArrayAttr kinds) {
  SmallVector<int64_t> layers;
  for (int64_t l = 0, e = getNumLayers(); l < e; ++l)
    if (setCovers(kinds, getKindOfLayer(l)))
      layers.push_back(l);
  return layers;
}

SmallVector<int64_t> RepeatOp::getLayersOfWeight(unsigned weight) {
  return getLayersOfKinds(kindSetOf(getWeightKinds(), weight));
}

SmallVector<int64_t> RepeatOp::getLayersOfStacked(unsigned stacked) {
  return getLayersOfKinds(kindSetOf(getStackedKinds(), stacked));
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

/// `value` must have exactly `type` (gradients have their primal's type).
static LogicalResult checkSameType(Operation *op, StringRef what, Value value,
                                   Type type) {
  if (value.getType() == type)
    return success();
  return op->emitOpError() << what << " must have type " << type << ", got "
                           << value.getType();
}

LogicalResult EmbeddingBackwardOp::verify() {
  RankedTensorType dy = rankedOf(getDy()), table = getType();
  if (table.getRank() != 2 || !table.hasStaticShape())
    return emitOpError() << "dtable must be [vocab, hidden], got " << table;
  SmallVector<int64_t> expected(rankedOf(getIds()).getShape());
  expected.push_back(table.getDimSize(1));
  if (failed(checkShape(*this, "dy", dy, expected)))
    return failure();
  return checkElementType(*this, "dtable", table, dy.getElementType());
}

/// Shared by norm backwards: dy, dx like x; dweight like weight; each
/// statistic (rstd, mean) shaped like x without its last dimension.
static LogicalResult verifyNormBackward(Operation *op, Value dy, Value x,
                                        Value weight, ValueRange stats,
                                        ValueRange weightGrads, Value dx) {
  if (failed(checkSameType(op, "dy", dy, x.getType())) ||
      failed(checkSameType(op, "dx", dx, x.getType())))
    return failure();
  for (Value g : weightGrads)
    if (failed(checkSameType(op, g == weightGrads.front() ? "dweight" : "dbias",
                             g, weight.getType())))
      return failure();
  if (failed(checkMinRank(op, "input", x, 2)) ||
      failed(checkStaticDims(op, "input", x.getType(), {-1})))
    return failure();
  RankedTensorType xt = rankedOf(x);
  if (failed(checkNormWeight(op, "weight", weight, xt.getShape().back(),
                             xt.getElementType())))
    return failure();
  for (Value stat : stats)
    if (failed(checkStat(op, stat == stats.back() ? "rstd" : "mean",
                         stat.getType(), xt.getElementType(),
                         dropLast(xt.getShape()))))
      return failure();
  return success();
}

LogicalResult RmsNormBackwardOp::verify() {
  if (Value dres = getResidualGrad())
    if (failed(checkSameType(*this, "residual_grad", dres, getX().getType())))
      return failure();
  return verifyNormBackward(*this, getDy(), getX(), getWeight(),
                            ValueRange{getRstd()}, ValueRange{getDweight()},
                            getDx());
}

LogicalResult LayerNormBackwardOp::verify() {
  return verifyNormBackward(*this, getDy(), getX(), getWeight(),
                            ValueRange{getMean(), getRstd()},
                            ValueRange{getDweight(), getDbias()}, getDx());
}

LogicalResult MatmulGradWeightOp::verify() {
  RankedTensorType dy = rankedOf(getDy()), x = rankedOf(getX());
  if (dy.getRank() < 2 || dy.getRank() != x.getRank())
    return emitOpError() << "dy " << dy << " and x " << x
                         << " must have the same rank (at least 2)";
  if (failed(checkStaticDims(*this, "dy", dy, {-1})) ||
      failed(checkStaticDims(*this, "x", x, {-1})))
    return failure();
  if (failed(checkShape(*this, "x", x, [&] {
        SmallVector<int64_t> s = dropLast(dy.getShape());
        s.push_back(kDyn);
        return s;
      }())))
    return failure();
  int64_t n = dy.getShape().back(), k = x.getShape().back();
  bool nt = getTranspose() == Transpose::nt;
  SmallVector<int64_t> expected =
      nt ? SmallVector<int64_t>{n, k} : SmallVector<int64_t>{k, n};
  if (failed(checkShape(*this, "dweight", getType(), expected)) ||
      failed(checkElementType(*this, "x", x, dy.getElementType())))
    return failure();
  return checkElementType(*this, "dweight", getType(), dy.getElementType());
}

LogicalResult SumLeadingOp::verify() {
  if (failed(checkMinRank(*this, "input", getX(), 1)) ||
      failed(checkStaticDims(*this, "input", getX().getType(), {-1})))
    return failure();
  RankedTensorType xt = rankedOf(getX());
  if (failed(checkShape(*this, "result", getType(), {xt.getShape().back()})))
    return failure();
  return checkElementType(*this, "result", getType(), xt.getElementType());
}

LogicalResult RopeBackwardOp::verify() {
  RankedTensorType dy = rankedOf(getDy());
  if (dy.getRank() != 4)
    return emitOpError() << "dy must be [batch, seq, heads, head_dim], got "
                         << dy;
  if (failed(checkSameType(*this, "dx", getDx(), dy)) ||
      failed(checkStaticDims(*this, "dy", dy, {2, 3})) ||
      failed(verifyPositions(*this, getPositions(), dy)))
    return failure();
  return verifyRopeAttrs(*this, dy.getDimSize(3), getTheta().convertToDouble(),
                         getRotaryDim(), getScalingAttr());
}

LogicalResult AttentionBackwardOp::verify() {
  if (failed(verifyAttentionOperands(*this, getQ(), getK(), getV(), getSinks(),
                                     getDocStart(),
                                     getScale().convertToDouble(), getCausal(),
                                     getSlidingWindow(), getSoftcap())))
    return failure();
  RankedTensorType qt = rankedOf(getQ()), vt = rankedOf(getV());
  if (failed(checkShape(*this, "dout", getDout().getType(),
                        {qt.getDimSize(0), qt.getDimSize(1), qt.getDimSize(2),
                         vt.getDimSize(3)})) ||
      failed(checkSameType(*this, "dq", getDq(), getQ().getType())) ||
      failed(checkSameType(*this, "dk", getDk(), getK().getType())) ||
      failed(checkSameType(*this, "dv", getDv(), getV().getType())))
    return failure();
  if (bool(getSinks()) != bool(getDsinks()))
    return emitOpError("dsinks is returned exactly when sinks are given");
  if (getSinks())
    return checkSameType(*this, "dsinks", getDsinks(), getSinks().getType());
  return success();
}

LogicalResult CrossEntropyBackwardOp::verify() {
  RankedTensorType logits = rankedOf(getLogits());
  if (failed(verifyTokensAndLabels(*this, logits, getLabels())) ||
      failed(checkStat(*this, "dloss", getDloss().getType(),
                       logits.getElementType(), {})))
    return failure();
  return checkSameType(*this, "dlogits", getDlogits(), logits);
}

LogicalResult QkvQkNormRopeBackwardOp::verify() {
  if (failed(verifyQkvNormRope(*this)) ||
      failed(checkSameType(*this, "dy", getDy(), getQkv().getType())) ||
      failed(checkSameType(*this, "dqkv", getDqkv(), getQkv().getType())) ||
      failed(checkSameType(*this, "dq_weight", getDqWeight(),
                           getQWeight().getType())))
    return failure();
  return checkSameType(*this, "dk_weight", getDkWeight(),
                       getKWeight().getType());
}

LogicalResult FlashAttentionBackwardOp::verify() {
  RankedTensorType qkv = rankedOf(getQkv());
  int64_t hq = getNumQHeads();
  if (failed(verifyFlashAttention(*this)))
    return failure();
  Type elem = qkv.getElementType();
  if (failed(verifySinks(*this, getSinks(), hq, elem)) ||
      failed(checkShape(
          *this, "dout", getDout().getType(),
          {qkv.getDimSize(0), qkv.getDimSize(1), hq, qkv.getDimSize(3)})) ||
      failed(checkElementType(*this, "dout", getDout().getType(), elem)) ||
      failed(checkSameType(*this, "dqkv", getDqkv(), qkv)))
    return failure();
  if (bool(getSinks()) != bool(getDsinks()))
    return emitOpError("dsinks is returned exactly when sinks are given");
  if (getSinks())
    return checkSameType(*this, "dsinks", getDsinks(), getSinks().getType());
  return success();
}

LogicalResult FusedLmHeadLossBackwardOp::verify() {
  RankedTensorType hidden = rankedOf(getHidden()), w = rankedOf(getWeight());
  if (failed(verifyLmHead(*this, hidden, w, getLabels())) ||
      failed(verifyLmHeadAttrs(*this, getSoftcap(), getLogitScale())))
    return failure();
  Type elem = hidden.getElementType();
  if (failed(checkStat(*this, "dloss", getDloss().getType(), elem, {})) ||
      failed(checkStat(*this, "lse", getLse().getType(), elem,
                       {hidden.getDimSize(0), hidden.getDimSize(1)})) ||
      failed(checkSameType(*this, "dhidden", getDhidden(), hidden)))
    return failure();
  return checkSameType(*this, "dweight", getDweight(), w);
}

LogicalResult SoftcapBackwardOp::verify() {
  return checkPositive(*this, "cap", getCap().convertToDouble());
}

/// dy [..., I] and x [..., 2I] -> dx like x.
static LogicalResult verifyGluBackward(Operation *op, Value dy, Value x,
                                       Value dx) {
  if (failed(verifyGlu(op, x, dy)))
    return failure();
  return checkSameType(op, "dx", dx, x.getType());
}

LogicalResult SwigluBackwardOp::verify() {
  return verifyGluBackward(*this, getDy(), getX(), getDx());
}
LogicalResult GegluBackwardOp::verify() {
  return verifyGluBackward(*this, getDy(), getX(), getDx());
}

LogicalResult mlir::OpTrait::tfm::verifyNoEmptyDims(Operation *op) {
  auto check = [&](Type type, llvm::StringRef what,
                   unsigned i) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(type);
    if (t && llvm::is_contained(t.getShape(), 0))
      return op->emitOpError() << what << " #" << i << " has type " << t
                               << " with a zero-size dimension; tfm ops take "
                                  "non-empty tensors";
    return success();
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Index operands (IndexOperandsOpInterface)
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmIndexOperands.cpp.inc"

void EmbeddingOp::getIndexOperands(SmallVectorImpl<IndexOperand> &out) {
  out.push_back({getIdsMutable().getOperandNumber(), getTable(), 0, {}});
}

void EmbeddingBackwardOp::getIndexOperands(SmallVectorImpl<IndexOperand> &out) {
  out.push_back({getIdsMutable().getOperandNumber(), getDtable(), 0, {}});
}

/// Labels index the last dimension of `logits` or are ignore_index.
template <typename OpTy>
static void labelsIndexVocabulary(OpTy op, Value vocabOf, unsigned vocabDim,
                                  SmallVectorImpl<IndexOperand> &out) {
  out.push_back({op.getLabelsMutable().getOperandNumber(), vocabOf, vocabDim,
                 op.getIgnoreIndex()});
}

void CrossEntropyOp::getIndexOperands(SmallVectorImpl<IndexOperand> &out) {
  labelsIndexVocabulary(*this, getLogits(), rankedOf(getLogits()).getRank() - 1,
                        out);
}

void CrossEntropyBackwardOp::getIndexOperands(
    SmallVectorImpl<IndexOperand> &out) {
  labelsIndexVocabulary(*this, getLogits(), rankedOf(getLogits()).getRank() - 1,
                        out);
}

void FusedLmHeadLossOp::getIndexOperands(SmallVectorImpl<IndexOperand> &out) {
  labelsIndexVocabulary(*this, getWeight(), 0, out);
}

void FusedLmHeadLossBackwardOp::getIndexOperands(
    SmallVectorImpl<IndexOperand> &out) {
  labelsIndexVocabulary(*this, getWeight(), 0, out);
}

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"
