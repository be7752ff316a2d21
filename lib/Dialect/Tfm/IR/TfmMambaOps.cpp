//===- TfmMambaOps.cpp - verifiers of the Mamba2 ops ----------------------===//
//
// Shapes of the state-space vocabulary (TfmMambaOps.td): token tensors
// [B, T, ..] with static model dimensions, per-head parameters [H], and the
// scan's f32 outputs. Every message has an expected-error test in
// test/Dialect/Tfm/mamba-invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "TfmVerifyUtils.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

static constexpr int64_t kDyn = ShapedType::kDynamic;

//===----------------------------------------------------------------------===//
// MambaConv1dOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyConv1d(Operation *op, Value x, Value weight,
                                  Value bias) {
  RankedTensorType xt = rankedOf(x);
  if (failed(checkShape(op, "input", xt, {kDyn, kDyn, kDyn})) ||
      failed(checkStaticDims(op, "input", xt, {2})) ||
      failed(checkStaticDims(op, "weight", weight.getType(), {0, 1})))
    return failure();
  int64_t channels = xt.getShape()[2];
  if (failed(checkShape(op, "weight", weight.getType(), {channels, kDyn})))
    return failure();
  if (bias && failed(checkShape(op, "bias", bias.getType(), {channels})))
    return failure();
  return success();
}

LogicalResult MambaConv1dOp::verify() {
  if (failed(verifyConv1d(*this, getX(), getWeight(), getBias())) ||
      failed(checkDocStart(*this, getDocStart(), getX().getType())))
    return failure();
  return checkSameType(*this, "result", getType(), getX().getType());
}

LogicalResult MambaConv1dBackwardOp::verify() {
  if (failed(verifyConv1d(*this, getX(), getWeight(), getBias())) ||
      failed(checkDocStart(*this, getDocStart(), getX().getType())) ||
      failed(checkSameType(*this, "dy", getDy().getType(), getX().getType())) ||
      failed(checkSameType(*this, "dx", getDx().getType(), getX().getType())) ||
      failed(checkSameType(*this, "dweight", getDweight().getType(),
                           getWeight().getType())))
    return failure();
  int64_t channels = rankedOf(getX()).getShape()[2];
  Type biasElem = getBias() ? rankedOf(getBias()).getElementType()
                            : rankedOf(getWeight()).getElementType();
  if (failed(checkShape(*this, "dbias", getDbias().getType(), {channels})))
    return failure();
  return checkElementType(*this, "dbias", getDbias().getType(), biasElem);
}

//===----------------------------------------------------------------------===//
// MambaSsdScanOp
//===----------------------------------------------------------------------===//

namespace {
/// The operands a scan and its gradient share.
struct ScanOperands {
  Value x, dt, aLog, b, c, d, dtBias;
  int64_t chunkSize;
  double dtMin, dtMax;
};
} // namespace

template <typename ScanOp> static ScanOperands operandsOf(ScanOp op) {
  return {op.getX(),
          op.getDt(),
          op.getALog(),
          op.getB(),
          op.getC(),
          op.getD(),
          op.getDtBias(),
          static_cast<int64_t>(op.getChunkSize()),
          op.getDtMin().convertToDouble(),
          op.getDtMax().convertToDouble()};
}

/// Checks the scan's operands; returns the shape of `states`.
static FailureOr<SmallVector<int64_t>> verifyScan(Operation *op,
                                                  const ScanOperands &s) {
  RankedTensorType xt = rankedOf(s.x);
  if (failed(checkShape(op, "x", xt, {kDyn, kDyn, kDyn, kDyn})) ||
      failed(checkStaticDims(op, "x", xt, {2, 3})))
    return failure();
  int64_t batch = xt.getShape()[0], seq = xt.getShape()[1];
  int64_t heads = xt.getShape()[2], headDim = xt.getShape()[3];
  if (failed(checkShape(op, "dt", s.dt.getType(), {batch, seq, heads})) ||
      failed(checkShape(op, "a_log", s.aLog.getType(), {heads})) ||
      failed(checkShape(op, "d", s.d.getType(), {heads})) ||
      failed(checkShape(op, "dt_bias", s.dtBias.getType(), {heads})))
    return failure();
  RankedTensorType bt = rankedOf(s.b);
  if (failed(checkShape(op, "b", bt, {batch, seq, kDyn, kDyn})) ||
      failed(checkStaticDims(op, "b", bt, {2, 3})))
    return failure();
  int64_t groups = bt.getShape()[2], state = bt.getShape()[3];
  if (failed(checkShape(op, "c", s.c.getType(), {batch, seq, groups, state})))
    return failure();
  if (heads % groups != 0)
    return op->emitOpError() << "the groups of b and c (" << groups
                             << ") must divide the heads (" << heads << ")";
  if (s.chunkSize <= 0)
    return op->emitOpError()
           << "chunk_size must be positive, got " << s.chunkSize;
  if (!(s.dtMin >= 0) || !(s.dtMax >= s.dtMin))
    return op->emitOpError() << "dt limits must satisfy 0 <= dt_min <= dt_max, "
                                "got ["
                             << s.dtMin << ", " << s.dtMax << "]";
  // One state per chunk: with a static sequence, ceil(T / chunk_size).
  int64_t chunks =
      ShapedType::isDynamic(seq) ? kDyn : llvm::divideCeil(seq, s.chunkSize);
  return SmallVector<int64_t>{batch, chunks, heads, headDim, state};
}

LogicalResult MambaSsdScanOp::verify() {
  FailureOr<SmallVector<int64_t>> states = verifyScan(*this, operandsOf(*this));
  if (failed(states) ||
      failed(checkDocStart(*this, getDocStart(), getX().getType())))
    return failure();
  Type elem = rankedOf(getX()).getElementType();
  if (failed(checkStat(*this, "y", getY().getType(), elem,
                       rankedOf(getX()).getShape())))
    return failure();
  return checkStat(*this, "states", getStates().getType(), elem, *states);
}

LogicalResult MambaSsdScanBackwardOp::verify() {
  FailureOr<SmallVector<int64_t>> states = verifyScan(*this, operandsOf(*this));
  if (failed(states) ||
      failed(checkDocStart(*this, getDocStart(), getX().getType())))
    return failure();
  Type elem = rankedOf(getX()).getElementType();
  if (failed(checkStat(*this, "dy", getDy().getType(), elem,
                       rankedOf(getX()).getShape())) ||
      failed(checkStat(*this, "states", getStates().getType(), elem, *states)))
    return failure();
  std::pair<Value, Value> grads[] = {
      {getDx(), getX()},          {getDdt(), getDt()}, {getDaLog(), getALog()},
      {getDb(), getB()},          {getDc(), getC()},   {getDd(), getD()},
      {getDdtBias(), getDtBias()}};
  static const char *names[] = {"dx", "ddt", "da_log",  "db",
                                "dc", "dd",  "ddt_bias"};
  for (auto [i, g] : llvm::enumerate(grads))
    if (failed(checkSameType(*this, names[i], g.first.getType(),
                             g.second.getType())))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// GatedRmsNormOp
//===----------------------------------------------------------------------===//

/// Checks x, z, weight and groups; returns the shape of rstd.
static FailureOr<SmallVector<int64_t>>
verifyGatedNorm(Operation *op, Value x, Value z, Value weight, int64_t groups) {
  RankedTensorType xt = rankedOf(x);
  if (xt.getRank() < 2)
    return op->emitOpError() << "x must have rank at least 2, got " << xt;
  if (failed(checkStaticDims(op, "x", xt, {-1})) ||
      failed(checkShape(op, "z", z.getType(), xt.getShape())))
    return failure();
  int64_t features = xt.getShape().back();
  if (groups <= 0 || features % groups != 0)
    return op->emitOpError()
           << "groups (" << groups
           << ") must be positive and divide the features (" << features << ")";
  // One weight per feature, or one per group position shared by the groups
  // (Qwen3-Next's norm over each value head).
  RankedTensorType wt = rankedOf(weight);
  if (wt.getRank() != 1 ||
      (wt.getDimSize(0) != features && wt.getDimSize(0) != features / groups))
    return op->emitOpError()
           << "weight must have shape [" << features << "] or ["
           << features / groups << "] (shared by the groups), got " << wt;
  SmallVector<int64_t> rstd(xt.getShape().drop_back());
  rstd.push_back(groups);
  return rstd;
}

LogicalResult GatedRmsNormOp::verify() {
  FailureOr<SmallVector<int64_t>> rstd =
      verifyGatedNorm(*this, getX(), getZ(), getWeight(), getGroups());
  if (failed(rstd) ||
      failed(checkShape(*this, "result", getResult().getType(),
                        rankedOf(getX()).getShape())) ||
      failed(checkStat(*this, "rstd", getRstd().getType(),
                       rankedOf(getX()).getElementType(), *rstd)))
    return failure();
  return checkPositive(*this, "eps", getEps().convertToDouble());
}

LogicalResult GatedRmsNormBackwardOp::verify() {
  FailureOr<SmallVector<int64_t>> rstd =
      verifyGatedNorm(*this, getX(), getZ(), getWeight(),
                      rankedOf(getRstd()).getShape().back());
  if (failed(rstd) ||
      failed(checkShape(*this, "dy", getDy().getType(),
                        rankedOf(getX()).getShape())) ||
      failed(checkStat(*this, "rstd", getRstd().getType(),
                       rankedOf(getX()).getElementType(), *rstd)) ||
      failed(checkSameType(*this, "dx", getDx().getType(), getX().getType())) ||
      failed(checkSameType(*this, "dz", getDz().getType(), getZ().getType())))
    return failure();
  return checkSameType(*this, "dweight", getDweight().getType(),
                       getWeight().getType());
}

//===----------------------------------------------------------------------===//
// SiluGateOp
//===----------------------------------------------------------------------===//

LogicalResult SiluGateOp::verify() {
  ArrayRef<int64_t> shape = rankedOf(getX()).getShape();
  if (failed(checkShape(*this, "z", getZ().getType(), shape)))
    return failure();
  return checkShape(*this, "result", getType(), shape);
}

LogicalResult SiluGateBackwardOp::verify() {
  ArrayRef<int64_t> shape = rankedOf(getX()).getShape();
  if (failed(checkShape(*this, "z", getZ().getType(), shape)) ||
      failed(checkShape(*this, "dy", getDy().getType(), shape)) ||
      failed(checkSameType(*this, "dx", getDx().getType(), getX().getType())))
    return failure();
  return checkSameType(*this, "dz", getDz().getType(), getZ().getType());
}
