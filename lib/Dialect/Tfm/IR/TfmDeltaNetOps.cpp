//===- TfmDeltaNetOps.cpp - verifiers of the gated DeltaNet ops -----------===//
//
// Shapes of the linear-attention vocabulary (TfmDeltaNetOps.td): q and k
// per key head, v and the gates per value head, per-head parameters [H].
// Every message has an expected-error test in
// test/Dialect/Tfm/deltanet-invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "TfmVerifyUtils.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

static constexpr int64_t kDyn = ShapedType::kDynamic;

namespace {
/// The operands the rule and its gradient share.
struct RuleOperands {
  Value q, k, v, a, b, aLog, dtBias;
  int64_t chunkSize;
};
} // namespace

template <typename RuleOp> static RuleOperands operandsOf(RuleOp op) {
  return {op.getQ(),      op.getK(),
          op.getV(),      op.getA(),
          op.getB(),      op.getALog(),
          op.getDtBias(), static_cast<int64_t>(op.getChunkSize())};
}

/// Checks the rule's operands; returns the shape of `states`.
static FailureOr<SmallVector<int64_t>> verifyRule(Operation *op,
                                                  const RuleOperands &r) {
  RankedTensorType qt = rankedOf(r.q), vt = rankedOf(r.v);
  if (failed(checkShape(op, "q", qt, {kDyn, kDyn, kDyn, kDyn})) ||
      failed(checkStaticDims(op, "q", qt, {2, 3})) ||
      failed(checkShape(op, "k", r.k.getType(), qt.getShape())))
    return failure();
  int64_t batch = qt.getShape()[0], seq = qt.getShape()[1];
  int64_t keyHeads = qt.getShape()[2], keyDim = qt.getShape()[3];
  if (failed(checkShape(op, "v", vt, {batch, seq, kDyn, kDyn})) ||
      failed(checkStaticDims(op, "v", vt, {2, 3})))
    return failure();
  int64_t heads = vt.getShape()[2], valueDim = vt.getShape()[3];
  if (heads % keyHeads != 0)
    return op->emitOpError()
           << "the key heads (" << keyHeads << ") must divide the value heads ("
           << heads << ")";
  if (failed(checkShape(op, "a", r.a.getType(), {batch, seq, heads})) ||
      failed(checkShape(op, "b", r.b.getType(), {batch, seq, heads})) ||
      failed(checkShape(op, "a_log", r.aLog.getType(), {heads})) ||
      failed(checkShape(op, "dt_bias", r.dtBias.getType(), {heads})))
    return failure();
  if (r.chunkSize <= 0)
    return op->emitOpError()
           << "chunk_size must be positive, got " << r.chunkSize;
  // One state per chunk: with a static sequence, ceil(T / chunk_size).
  int64_t chunks =
      ShapedType::isDynamic(seq) ? kDyn : llvm::divideCeil(seq, r.chunkSize);
  return SmallVector<int64_t>{batch, chunks, heads, keyDim, valueDim};
}

LogicalResult GatedDeltaRuleOp::verify() {
  FailureOr<SmallVector<int64_t>> states = verifyRule(*this, operandsOf(*this));
  if (failed(states) ||
      failed(checkDocStart(*this, getDocStart(), getV().getType())) ||
      failed(checkSameType(*this, "y", getY().getType(), getV().getType())))
    return failure();
  return checkStat(*this, "states", getStates().getType(),
                   rankedOf(getV()).getElementType(), *states);
}

LogicalResult GatedDeltaRuleBackwardOp::verify() {
  FailureOr<SmallVector<int64_t>> states = verifyRule(*this, operandsOf(*this));
  if (failed(states) ||
      failed(checkDocStart(*this, getDocStart(), getV().getType())) ||
      failed(checkSameType(*this, "dy", getDy().getType(), getV().getType())) ||
      failed(checkStat(*this, "states", getStates().getType(),
                       rankedOf(getV()).getElementType(), *states)))
    return failure();
  std::pair<Value, Value> grads[] = {
      {getDq(), getQ()},          {getDk(), getK()}, {getDv(), getV()},
      {getDa(), getA()},          {getDb(), getB()}, {getDaLog(), getALog()},
      {getDdtBias(), getDtBias()}};
  static const char *names[] = {"dq", "dk",     "dv",      "da",
                                "db", "da_log", "ddt_bias"};
  for (auto [i, g] : llvm::enumerate(grads))
    if (failed(checkSameType(*this, names[i], g.first.getType(),
                             g.second.getType())))
      return failure();
  return success();
}
