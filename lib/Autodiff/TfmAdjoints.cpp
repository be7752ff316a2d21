//===- TfmAdjoints.cpp - the adjoint rule of every tfm op -----------------===//
//
// One function per op, attached to every op of the generated op list as an
// external model of DifferentiableOpInterface (ops marked
// Tfm_NotDifferentiable excepted). Each follows the gradient written in
// docs/spec.md; forward values are read through ab.primal (ab.operand), so
// what the backward needs from the forward is visible to the caller.
//
//===----------------------------------------------------------------------===//

#include "tfm/Autodiff/TfmAdjoints.h"
#include "RepeatAdjoint.h"
#include "tfm/Autodiff/BlockDifferentiator.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Interfaces/DifferentiableOpInterface.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// Statistic results (rstd, mean, lse) carry no gradient in tfm models;
/// refuse rather than silently drop one.
LogicalResult noGradThrough(AdjointBuilder &ab, unsigned result,
                            StringRef what) {
  if (ab.resultGrad(result))
    return ab.op->emitError()
           << "the gradient of " << what << " is not supported";
  return success();
}

TransposeAttr transposeAttr(AdjointBuilder &ab, Transpose t) {
  return TransposeAttr::get(ab.builder.getContext(), t);
}

/// The other layout: the input gradient of y = x·wᵀ (nt) is dy·w (nn).
Transpose flip(Transpose t) {
  return t == Transpose::nt ? Transpose::nn : Transpose::nt;
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

LogicalResult adjoint(EmbeddingOp op, AdjointBuilder &ab) {
  if (!ab.needsGrad(1))
    return success();
  Value dy = ab.resultGrad(0);
  ab.addGrad(1, EmbeddingBackwardOp::create(ab.builder, ab.getLoc(),
                                            op.getTable().getType(), dy,
                                            ab.operand(0)));
  return success();
}

LogicalResult adjoint(RmsNormOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 1, "rstd")))
    return failure();
  auto bw = RmsNormBackwardOp::create(
      ab.builder, ab.getLoc(), op.getX().getType(), op.getWeight().getType(),
      ab.resultGrad(0), ab.operand(0), ab.operand(1), ab.primal(op.getRstd()),
      /*residual_grad=*/Value(), op.getUnitOffsetAttr());
  ab.addGrad(0, bw.getDx());
  ab.addGrad(1, bw.getDweight());
  return success();
}

LogicalResult adjoint(LayerNormOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 1, "mean")) ||
      failed(noGradThrough(ab, 2, "rstd")))
    return failure();
  auto bw = LayerNormBackwardOp::create(
      ab.builder, ab.getLoc(), op.getX().getType(), op.getWeight().getType(),
      op.getWeight().getType(), ab.resultGrad(0), ab.operand(0), ab.operand(1),
      ab.primal(op.getMean()), ab.primal(op.getRstd()));
  ab.addGrad(0, bw.getDx());
  ab.addGrad(1, bw.getDweight());
  if (op.getBias())
    ab.addGrad(2, bw.getDbias());
  return success();
}

LogicalResult adjoint(FusedResidualRmsNormOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 2, "rstd")))
    return failure();
  // d(residual_out) in total = its own gradient + the norm's input gradient;
  // the backward op adds the first into the second as it writes it, so the
  // sum costs no kernel and no round trip of the norm's term.
  Value total = ab.resultGrad(1);
  if (Value dy = ab.resultGrad(0)) {
    auto bw = RmsNormBackwardOp::create(
        ab.builder, ab.getLoc(), op.getX().getType(), op.getWeight().getType(),
        dy, ab.primal(op.getResidualOut()), ab.operand(2),
        ab.primal(op.getRstd()), /*residual_grad=*/total,
        op.getUnitOffsetAttr());
    total = bw.getDx();
    ab.addGrad(2, bw.getDweight());
  }
  ab.addGrad(0, total);
  ab.addGrad(1, total);
  return success();
}

LogicalResult adjoint(MatmulOp op, AdjointBuilder &ab) {
  Value dy = ab.resultGrad(0);
  Location loc = ab.getLoc();
  Transpose t = op.getTranspose();
  // nt: y = x·wᵀ, dx = dy·w (w read as [N, K], i.e. nn); nn: dx = dy·wᵀ (nt).
  // Each side only where its operand needs it: a frozen weight's GEMM (and
  // keeping x for it) is never built.
  if (ab.needsGrad(0))
    ab.addGrad(0, MatmulOp::create(ab.builder, loc, op.getX().getType(), dy,
                                   ab.operand(1), Value(),
                                   transposeAttr(ab, flip(t))));
  if (ab.needsGrad(1))
    ab.addGrad(
        1, MatmulGradWeightOp::create(ab.builder, loc, op.getW().getType(), dy,
                                      ab.operand(0), transposeAttr(ab, t)));
  if (op.getBias() && ab.needsGrad(2))
    ab.addGrad(
        2, SumLeadingOp::create(ab.builder, loc, op.getBias().getType(), dy));
  return success();
}

Value ropeBackward(AdjointBuilder &ab, Value dy, Value positions,
                   FloatAttr theta, IntegerAttr rotaryDim,
                   RopeScalingAttr scaling, UnitAttr interleaved = {}) {
  return RopeBackwardOp::create(ab.builder, ab.getLoc(), dy.getType(), dy,
                                positions, theta, rotaryDim, scaling,
                                interleaved);
}

LogicalResult adjoint(RopeOp op, AdjointBuilder &ab) {
  ab.addGrad(0, ropeBackward(ab, ab.resultGrad(0), ab.operand(1),
                             op.getThetaAttr(), op.getRotaryDimAttr(),
                             op.getScalingAttr(), op.getInterleavedAttr()));
  return success();
}

/// RMSNorm gradient over the last dimension, or over the last two
/// (flattened) for whole-projection q/k norms.
std::pair<Value, Value> normBackward(AdjointBuilder &ab, Value dy, Value x,
                                     Value w, Value rstd, UnitAttr unitOffset,
                                     bool flatten) {
  Location loc = ab.getLoc();
  if (!flatten) {
    auto bw = RmsNormBackwardOp::create(ab.builder, loc, x.getType(),
                                        w.getType(), dy, x, w, rstd,
                                        /*residual_grad=*/Value(), unitOffset);
    return {bw.getDx(), bw.getDweight()};
  }
  auto t = cast<RankedTensorType>(x.getType());
  auto flat = RankedTensorType::get(
      {t.getDimSize(0), t.getDimSize(1), t.getDimSize(2) * t.getDimSize(3)},
      t.getElementType());
  Value xf = ReshapeOp::create(ab.builder, loc, flat, x);
  Value dyf = ReshapeOp::create(ab.builder, loc, flat, dy);
  auto bw =
      RmsNormBackwardOp::create(ab.builder, loc, flat, w.getType(), dyf, xf, w,
                                rstd, /*residual_grad=*/Value(), unitOffset);
  return {ReshapeOp::create(ab.builder, loc, t, bw.getDx()), bw.getDweight()};
}

LogicalResult adjoint(QkNormOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 2, "q_rstd")) ||
      failed(noGradThrough(ab, 3, "k_rstd")))
    return failure();
  bool flatten = op.getMode() == QkNormMode::whole;
  for (unsigned i : {0u, 1u}) {
    Value dy = ab.resultGrad(i);
    if (!dy)
      continue;
    auto [dx, dw] = normBackward(ab, dy, ab.operand(i), ab.operand(2 + i),
                                 ab.primal(op->getResult(2 + i)),
                                 op.getUnitOffsetAttr(), flatten);
    ab.addGrad(i, dx);
    ab.addGrad(2 + i, dw);
  }
  return success();
}

LogicalResult adjoint(QkvQkNormRopeOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 1, "q_rstd")) ||
      failed(noGradThrough(ab, 2, "k_rstd")))
    return failure();
  auto bw = QkvQkNormRopeBackwardOp::create(
      ab.builder, ab.getLoc(), op.getQkv().getType(), op.getQWeight().getType(),
      op.getKWeight().getType(), ab.resultGrad(0), ab.operand(0), ab.operand(1),
      ab.operand(2), ab.operand(3), ab.primal(op.getQRstd()),
      ab.primal(op.getKRstd()), op.getNumQHeadsAttr(), op.getNumKvHeadsAttr(),
      op.getEpsAttr(), op.getUnitOffsetAttr(), op.getThetaAttr(),
      op.getRotaryDimAttr(), op.getScalingAttr());
  ab.addGrad(0, bw.getDqkv());
  ab.addGrad(1, bw.getDqWeight());
  ab.addGrad(2, bw.getDkWeight());
  return success();
}

/// The inverse rotation of the packed heads is the gradient: no split.
LogicalResult adjoint(QkvRopeOp op, AdjointBuilder &ab) {
  ab.addGrad(0,
             QkvRopeOp::create(
                 ab.builder, ab.getLoc(), op.getType(), ab.resultGrad(0),
                 ab.operand(1), op.getNumQHeadsAttr(), op.getNumKvHeadsAttr(),
                 op.getThetaAttr(), op.getRotaryDimAttr(), op.getScalingAttr(),
                 op.getInverse() ? UnitAttr() : ab.builder.getUnitAttr()));
  return success();
}

/// The primal of an optional operand, or null when it is absent.
Value primalOrNull(AdjointBuilder &ab, Value operand) {
  return operand ? ab.primal(operand) : Value();
}

LogicalResult adjoint(AttentionOp op, AdjointBuilder &ab) {
  Value sinks = primalOrNull(ab, op.getSinks());
  auto bw = AttentionBackwardOp::create(
      ab.builder, ab.getLoc(), op.getQ().getType(), op.getK().getType(),
      op.getV().getType(), sinks ? sinks.getType() : Type(), ab.resultGrad(0),
      ab.operand(0), ab.operand(1), ab.operand(2), sinks,
      primalOrNull(ab, op.getDocStart()), op.getScaleAttr(), op.getCausalAttr(),
      op.getSlidingWindowAttr(), op.getSoftcapAttr());
  ab.addGrad(0, bw.getDq());
  ab.addGrad(1, bw.getDk());
  ab.addGrad(2, bw.getDv());
  if (sinks)
    ab.addGrad(3, bw.getDsinks());
  return success();
}

LogicalResult adjoint(FlashAttentionOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 1, "lse")))
    return failure();
  Value sinks = primalOrNull(ab, op.getSinks());
  auto bw = FlashAttentionBackwardOp::create(
      ab.builder, ab.getLoc(), op.getQkv().getType(),
      sinks ? sinks.getType() : Type(), ab.resultGrad(0), ab.operand(0), sinks,
      primalOrNull(ab, op.getDocStart()), op.getNumQHeadsAttr(),
      op.getNumKvHeadsAttr(), op.getScaleAttr(), op.getCausalAttr(),
      op.getSlidingWindowAttr(), op.getSoftcapAttr());
  ab.addGrad(0, bw.getDqkv());
  if (sinks)
    ab.addGrad(1, bw.getDsinks());
  return success();
}

template <typename BackwardOp, typename OpTy>
LogicalResult gluAdjoint(OpTy op, AdjointBuilder &ab) {
  ab.addGrad(0, BackwardOp::create(ab.builder, ab.getLoc(), op.getX().getType(),
                                   ab.resultGrad(0), ab.operand(0),
                                   op.getGateFirstAttr()));
  return success();
}
LogicalResult adjoint(SwigluOp op, AdjointBuilder &ab) {
  return gluAdjoint<SwigluBackwardOp>(op, ab);
}
LogicalResult adjoint(GegluOp op, AdjointBuilder &ab) {
  return gluAdjoint<GegluBackwardOp>(op, ab);
}

template <typename BackwardOp>
LogicalResult unaryAdjoint(Operation *op, AdjointBuilder &ab) {
  ab.addGrad(0, BackwardOp::create(ab.builder, ab.getLoc(), ab.resultGrad(0),
                                   ab.operand(0)));
  return success();
}
LogicalResult adjoint(SiluOp op, AdjointBuilder &ab) {
  return unaryAdjoint<SiluBackwardOp>(op, ab);
}
LogicalResult adjoint(GeluTanhOp op, AdjointBuilder &ab) {
  return unaryAdjoint<GeluTanhBackwardOp>(op, ab);
}
LogicalResult adjoint(Relu2Op op, AdjointBuilder &ab) {
  return unaryAdjoint<Relu2BackwardOp>(op, ab);
}
LogicalResult adjoint(SigmoidOp op, AdjointBuilder &ab) {
  return unaryAdjoint<SigmoidBackwardOp>(op, ab);
}

LogicalResult adjoint(SoftcapOp op, AdjointBuilder &ab) {
  ab.addGrad(0, SoftcapBackwardOp::create(ab.builder, ab.getLoc(),
                                          ab.resultGrad(0), ab.operand(0),
                                          op.getCapAttr()));
  return success();
}

LogicalResult adjoint(AddOp op, AdjointBuilder &ab) {
  ab.addGrad(0, ab.resultGrad(0));
  ab.addGrad(1, ab.resultGrad(0));
  return success();
}

LogicalResult adjoint(MulOp op, AdjointBuilder &ab) {
  Value dy = ab.resultGrad(0);
  ab.addGrad(0, MulOp::create(ab.builder, ab.getLoc(), dy, ab.operand(1)));
  ab.addGrad(1, MulOp::create(ab.builder, ab.getLoc(), dy, ab.operand(0)));
  return success();
}

LogicalResult adjoint(ScaleOp op, AdjointBuilder &ab) {
  ab.addGrad(0, ScaleOp::create(ab.builder, ab.getLoc(), ab.resultGrad(0),
                                op.getFactorAttr(), op.getRoundFactorAttr()));
  return success();
}

LogicalResult adjoint(ReshapeOp op, AdjointBuilder &ab) {
  ab.addGrad(0, ReshapeOp::create(ab.builder, ab.getLoc(), op.getX().getType(),
                                  ab.resultGrad(0)));
  return success();
}

LogicalResult adjoint(SplitOp op, AdjointBuilder &ab) {
  SmallVector<Value> parts;
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    parts.push_back(ab.resultGradOrZeros(i));
  ab.addGrad(0, ConcatOp::create(ab.builder, ab.getLoc(), op.getX().getType(),
                                 parts, op.getDimAttr()));
  return success();
}

LogicalResult adjoint(ExpandOp op, AdjointBuilder &ab) {
  ab.addGrad(0, ExpandBackwardOp::create(ab.builder, ab.getLoc(),
                                         op.getX().getType(), ab.resultGrad(0),
                                         op.getDimAttr()));
  return success();
}

LogicalResult adjoint(ConcatOp op, AdjointBuilder &ab) {
  auto split =
      SplitOp::create(ab.builder, ab.getLoc(), op.getInputs().getTypes(),
                      ab.resultGrad(0), op.getDimAttr());
  for (unsigned i = 0; i < op.getInputs().size(); ++i)
    ab.addGrad(i, split.getResult(i));
  return success();
}

LogicalResult adjoint(CrossEntropyOp op, AdjointBuilder &ab) {
  ab.addGrad(0, CrossEntropyBackwardOp::create(
                    ab.builder, ab.getLoc(), op.getLogits().getType(),
                    ab.resultGrad(0), ab.operand(0), ab.operand(1),
                    op.getIgnoreIndexAttr()));
  return success();
}

LogicalResult adjoint(FusedLmHeadLossOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 1, "lse")))
    return failure();
  Value h = ab.operand(0), w = ab.operand(1);
  auto bw = FusedLmHeadLossBackwardOp::create(
      ab.builder, ab.getLoc(), h.getType(), w.getType(), ab.resultGrad(0), h, w,
      ab.operand(2), ab.primal(op.getLse()), op.getIgnoreIndexAttr(),
      op.getSoftcapAttr(), op.getLogitScaleAttr());
  ab.addGrad(0, bw.getDhidden());
  ab.addGrad(1, bw.getDweight());
  return success();
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

/// Through the weights only: the indices are piecewise constant, and the
/// selection bias only moves them (it gets no gradient).
LogicalResult adjoint(MoeRouterOp op, AdjointBuilder &ab) {
  Value dw = ab.resultGrad(0);
  if (!dw)
    return success();
  ab.addGrad(0, MoeRouterBackwardOp::create(
                    ab.builder, ab.getLoc(), op.getLogits().getType(), dw,
                    ab.operand(0), ab.primal(op.getIndices()),
                    op.getRoutingAttr(), op.getNormalizeAttr(),
                    op.getNormalizeEpsAttr(), op.getScaleAttr()));
  return success();
}

/// dx[n] = sum over slots of drows[positions[n, j]]: an unweighted combine.
LogicalResult adjoint(MoeDispatchOp op, AdjointBuilder &ab) {
  ab.addGrad(0, MoeCombineOp::create(ab.builder, ab.getLoc(),
                                     op.getX().getType(), ab.resultGrad(0),
                                     ab.operand(1), ab.operand(2), Value()));
  return success();
}

LogicalResult adjoint(MoeCombineOp op, AdjointBuilder &ab) {
  Value dy = ab.resultGrad(0);
  if (!op.getWeights()) {
    ab.addGrad(0, MoeDispatchOp::create(ab.builder, ab.getLoc(),
                                        op.getRows().getType(), dy,
                                        ab.operand(1), ab.operand(2)));
    return success();
  }
  auto bw = MoeCombineBackwardOp::create(
      ab.builder, ab.getLoc(), op.getRows().getType(),
      op.getWeights().getType(), dy, ab.operand(0), ab.operand(1),
      ab.operand(2), ab.operand(3));
  ab.addGrad(0, bw.getDrows());
  ab.addGrad(3, bw.getDweights());
  return success();
}

LogicalResult adjoint(MoeGroupedMatmulOp op, AdjointBuilder &ab) {
  Value dy = ab.resultGrad(0);
  Location loc = ab.getLoc();
  Transpose t = op.getTranspose();
  if (ab.needsGrad(0))
    ab.addGrad(0, MoeGroupedMatmulOp::create(
                      ab.builder, loc, op.getX().getType(), dy, ab.operand(1),
                      ab.operand(2), Value(), transposeAttr(ab, flip(t))));
  if (ab.needsGrad(1))
    ab.addGrad(1, MoeGroupedMatmulGradWeightOp::create(
                      ab.builder, loc, op.getW().getType(), dy, ab.operand(0),
                      ab.operand(2), transposeAttr(ab, t)));
  if (op.getBias() && ab.needsGrad(3))
    ab.addGrad(3, MoeGroupedBiasGradOp::create(ab.builder, loc,
                                               op.getBias().getType(), dy,
                                               ab.operand(2)));
  return success();
}

LogicalResult adjoint(ClampedSwigluOp op, AdjointBuilder &ab) {
  ab.addGrad(0,
             ClampedSwigluBackwardOp::create(
                 ab.builder, ab.getLoc(), op.getX().getType(), ab.resultGrad(0),
                 ab.operand(0), op.getLimitAttr(), op.getAlphaAttr()));
  return success();
}

LogicalResult adjoint(MoeLoadStatsOp op, AdjointBuilder &ab) {
  ab.addGrad(0, MoeLoadStatsBackwardOp::create(
                    ab.builder, ab.getLoc(), op.getLogits().getType(),
                    ab.resultGrad(0), ab.operand(0)));
  return success();
}

LogicalResult adjoint(MoeAuxLossOp op, AdjointBuilder &ab) {
  ab.addGrad(0, MoeAuxLossBackwardOp::create(
                    ab.builder, ab.getLoc(), op.getStats().getType(),
                    ab.resultGrad(0), ab.operand(0), op.getTopKAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Mamba2
//===----------------------------------------------------------------------===//

LogicalResult adjoint(MambaConv1dOp op, AdjointBuilder &ab) {
  Value bias = op.getBias() ? ab.operand(2) : Value();
  Type dbiasType =
      op.getBias()
          ? op.getBias().getType()
          : RankedTensorType::get({op.getX().getType().getShape()[2]},
                                  op.getWeight().getType().getElementType());
  auto bw = MambaConv1dBackwardOp::create(
      ab.builder, ab.getLoc(), op.getX().getType(), op.getWeight().getType(),
      dbiasType, ab.resultGrad(0), ab.operand(0), ab.operand(1), bias,
      primalOrNull(ab, op.getDocStart()));
  ab.addGrad(0, bw.getDx());
  ab.addGrad(1, bw.getDweight());
  if (op.getBias())
    ab.addGrad(2, bw.getDbias());
  return success();
}

/// The chunked scans (Mamba2's, the gated delta rule): the chunk states
/// (result 1) are saved for the backward, never differentiated; the backward
/// op takes dy, the seven operands and the states and gives a gradient per
/// operand. `attrs` are the op's attributes, passed on.
template <typename BackwardOp, typename ScanOp, typename... Attrs>
LogicalResult chunkedScanAdjoint(ScanOp op, AdjointBuilder &ab, StringRef what,
                                 Attrs... attrs) {
  if (failed(noGradThrough(ab, 1, what)))
    return failure();
  Value dy = ab.resultGrad(0);
  if (!dy)
    return success();
  SmallVector<Type> types;
  for (unsigned i = 0; i < 7; ++i)
    types.push_back(op->getOperand(i).getType());
  auto bw = BackwardOp::create(
      ab.builder, ab.getLoc(), types, dy, ab.operand(0), ab.operand(1),
      ab.operand(2), ab.operand(3), ab.operand(4), ab.operand(5), ab.operand(6),
      ab.primal(op.getStates()), primalOrNull(ab, op.getDocStart()), attrs...);
  for (unsigned i = 0; i < 7; ++i)
    ab.addGrad(i, bw->getResult(i));
  return success();
}

LogicalResult adjoint(MambaSsdScanOp op, AdjointBuilder &ab) {
  return chunkedScanAdjoint<MambaSsdScanBackwardOp>(
      op, ab, "the scan's chunk states", op.getChunkSizeAttr(),
      op.getDtMinAttr(), op.getDtMaxAttr());
}

LogicalResult adjoint(GatedRmsNormOp op, AdjointBuilder &ab) {
  if (failed(noGradThrough(ab, 1, "rstd")))
    return failure();
  auto bw = GatedRmsNormBackwardOp::create(
      ab.builder, ab.getLoc(), op.getX().getType(), op.getZ().getType(),
      op.getWeight().getType(), ab.resultGrad(0), ab.operand(0), ab.operand(1),
      ab.operand(2), ab.primal(op.getRstd()), op.getNormBeforeGateAttr());
  ab.addGrad(0, bw.getDx());
  ab.addGrad(1, bw.getDz());
  ab.addGrad(2, bw.getDweight());
  return success();
}

LogicalResult adjoint(SiluGateOp op, AdjointBuilder &ab) {
  auto bw = SiluGateBackwardOp::create(
      ab.builder, ab.getLoc(), op.getX().getType(), op.getZ().getType(),
      ab.resultGrad(0), ab.operand(0), ab.operand(1));
  ab.addGrad(0, bw.getDx());
  ab.addGrad(1, bw.getDz());
  return success();
}

LogicalResult adjoint(GatedDeltaRuleOp op, AdjointBuilder &ab) {
  return chunkedScanAdjoint<GatedDeltaRuleBackwardOp>(
      op, ab, "the delta rule's chunk states", op.getChunkSizeAttr());
}

/// zeros_like's result does not depend on its operand's values.
LogicalResult adjoint(ZerosLikeOp, AdjointBuilder &) { return success(); }

/// The repeat's rule differentiates its layer bodies (RepeatAdjoint.cpp).
LogicalResult adjoint(RepeatOp op, AdjointBuilder &ab) {
  return buildRepeatAdjoint(op, ab);
}

template <typename OpTy>
struct AdjointModel
    : DifferentiableOpInterface::ExternalModel<AdjointModel<OpTy>, OpTy> {
  LogicalResult buildAdjoint(Operation *op, AdjointBuilder &ab) const {
    return adjoint(cast<OpTy>(op), ab);
  }
};

template <typename OpTy> void attachIfDifferentiable(MLIRContext *ctx) {
  if constexpr (!OpTy::template hasTrait<OpTrait::tfm::NotDifferentiable>())
    OpTy::template attachInterface<AdjointModel<OpTy>>(*ctx);
}

/// Attaches a model to every op of the generated list that is not marked
/// Tfm_NotDifferentiable: an op without an `adjoint` overload above does
/// not compile.
template <typename... OpTys> void attachToAllOps(MLIRContext *ctx) {
  (attachIfDifferentiable<OpTys>(ctx), ...);
}

} // namespace

void mlir::tfm::registerTfmAdjoints(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfmDialect *) {
    attachToAllOps<
#define GET_OP_LIST
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"
        >(ctx);
  });
}
