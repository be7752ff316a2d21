//===- VectorizeInnerLoops.cpp - vector loops for linalg.generic ----------===//
//
// The CPU path lowers linalg.generic to scalar loops and leaves
// vectorisation to LLVM. LLVM vectorises plain element-wise loops, but not
// float reductions (it may not reorder them without `reassoc`, and with it
// the order would depend on the vector width it picks per loop, so a
// recomputed forward op could round differently from the saved one), and
// not loops that call libm's `expf`. Both are most of the training step's
// non-GEMM time: softmax and log-sum-exp rows, RMSNorm statistics, SiLU.
// This pass vectorises the innermost dimension itself, with a reduction
// order fixed by the IR (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tfm/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMVECTORIZEINNERLOOPSPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Types of the body's values whose vector code LLVM lowers well.
bool isVectorizableScalar(Type t) {
  return t.isF32() || t.isIndex() || t.isInteger(1) || t.isInteger(32) ||
         t.isInteger(64);
}

/// Element types of memrefs read and written as vectors (not i1: a vector
/// of i1 is bit-packed in memory, a memref of i1 is not).
bool isVectorizableElement(Type t) {
  return t.isF32() || t.isInteger(32) || t.isInteger(64);
}

/// The combining kind of a reduction's combiner, if it is one this pass
/// knows the identity of.
std::optional<vector::CombiningKind> combiningKindOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<vector::CombiningKind>>(op)
      .Case([](arith::AddFOp) { return vector::CombiningKind::ADD; })
      .Case([](arith::MulFOp) { return vector::CombiningKind::MUL; })
      .Case([](arith::MaximumFOp) { return vector::CombiningKind::MAXIMUMF; })
      .Case([](arith::MinimumFOp) { return vector::CombiningKind::MINIMUMF; })
      .Case([](arith::MaxNumFOp) { return vector::CombiningKind::MAXNUMF; })
      .Case([](arith::MinNumFOp) { return vector::CombiningKind::MINNUMF; })
      .Default([](Operation *) { return std::nullopt; });
}

/// x ⊕ identity == x for every x (-0.0 for sums: 0.0 would turn a -0.0
/// result into +0.0; NaN for maxnumf/minnumf: maxnum(NaN, -inf) is -inf).
double identityOf(vector::CombiningKind kind) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  switch (kind) {
  case vector::CombiningKind::ADD:
    return -0.0;
  case vector::CombiningKind::MUL:
    return 1.0;
  case vector::CombiningKind::MAXIMUMF:
    return -inf;
  case vector::CombiningKind::MINIMUMF:
    return inf;
  default: // maxnumf, minnumf: NaN is what they ignore (not ∓inf)
    return std::numeric_limits<double>::quiet_NaN();
  }
}

/// What the rewrite needs to know about one eligible op.
struct Plan {
  unsigned inner;           // the innermost loop
  bool reduction;           // whether it is a reduction loop
  int64_t staticSize;       // its static size, or ShapedType::kDynamic
  SmallVector<bool> varies; // per operand: depends on `inner`
  SmallVector<vector::CombiningKind> kinds; // per init, when `reduction`
};

/// The allocation or argument a memref view is of.
Value rootOf(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

std::optional<Plan> planFor(linalg::GenericOp op, int64_t lanes) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op->getNumRegions() != 1 || !op.getRegion().hasOneBlock())
    return std::nullopt;
  Plan plan;
  plan.inner = op.getNumLoops() - 1;
  plan.reduction =
      op.getIteratorTypesArray()[plan.inner] == utils::IteratorType::reduction;
  plan.staticSize = op.getStaticLoopRanges()[plan.inner];
  if (!ShapedType::isDynamic(plan.staticSize) && plan.staticSize < lanes)
    return std::nullopt; // not one full vector
  unsigned numInputs = op.getNumDpsInputs();
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !isVectorizableElement(type.getElementType()))
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return std::nullopt;
    bool varies = map.isFunctionOfDim(plan.inner);
    bool isInit = operand.getOperandNumber() >= numInputs;
    if (isInit && varies == plan.reduction)
      return std::nullopt; // an init indexed by a reduction dim, or the reverse
    if (varies) {
      SmallVector<int64_t> strides;
      int64_t offset;
      if (map.getResults().back() !=
              getAffineDimExpr(plan.inner, op.getContext()) ||
          failed(type.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        return std::nullopt; // not contiguous along the innermost loop
    }
    plan.varies.push_back(varies);
  }
  // An input of the buffer the op writes is read once per vector (or once
  // per row), not once per iteration: only the same view at the same
  // place (in-place element-wise) is safe.
  for (OpOperand *input : op.getDpsInputOperands())
    for (OpOperand &init : op.getDpsInitsMutable())
      if (rootOf(input->get()) == rootOf(init.get()) &&
          (input->get() != init.get() || op.getMatchingIndexingMap(input) !=
                                             op.getMatchingIndexingMap(&init)))
        return std::nullopt;
  // Values that differ between iterations of the innermost loop: the block
  // arguments of operands that depend on it, its index, and what is
  // computed from them. Everything else is computed once per vector.
  Block &body = op.getRegion().front();
  llvm::SmallPtrSet<Value, 16> varying;
  for (OpOperand &operand : op->getOpOperands())
    if (plan.varies[operand.getOperandNumber()] ||
        (plan.reduction && operand.getOperandNumber() >= numInputs))
      varying.insert(op.getMatchingBlockArgument(&operand));
  SmallVector<Value> initRoots;
  for (OpOperand &init : op.getDpsInitsMutable())
    initRoots.push_back(rootOf(init.get()));
  for (Operation &inner : body.without_terminator()) {
    bool anyVarying = llvm::any_of(
        inner.getOperands(), [&](Value v) { return varying.contains(v); });
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      if (index.getDim() == plan.inner)
        varying.insert(index.getResult());
      continue;
    }
    if (isa<arith::ConstantOp>(inner))
      continue;
    if (isa<memref::DimOp>(inner)) {
      if (anyVarying) // a dimension chosen by the innermost index
        return std::nullopt;
      continue;
    }
    // A load at the same place for every iteration (a label, a scale)
    // stays scalar; not from what the op writes (a store in an earlier
    // iteration could change it).
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      if (anyVarying || llvm::is_contained(initRoots, rootOf(load.getMemRef())))
        return std::nullopt;
      continue;
    }
    if (inner.getNumRegions() || inner.getNumResults() != 1 ||
        !OpTrait::hasElementwiseMappableTraits(&inner))
      return std::nullopt;
    for (Type t : inner.getOperandTypes())
      if (!isVectorizableScalar(t))
        return std::nullopt;
    if (!isVectorizableScalar(inner.getResult(0).getType()))
      return std::nullopt;
    if (anyVarying)
      varying.insert(inner.getResult(0));
  }
  if (!plan.reduction)
    return plan;
  Operation *yield = body.getTerminator();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument out = op.getMatchingBlockArgument(&init);
    Value yielded = yield->getOperand(init.getOperandNumber() - numInputs);
    Operation *combiner = yielded.getDefiningOp();
    if (!combiner || combiner->getBlock() != &body || !yielded.hasOneUse() ||
        !out.hasOneUse() || *out.getUsers().begin() != combiner)
      return std::nullopt;
    std::optional<vector::CombiningKind> kind = combiningKindOf(combiner);
    if (!kind || !out.getType().isF32())
      return std::nullopt;
    plan.kinds.push_back(*kind);
  }
  return plan;
}

/// When the innermost loop does not qualify: a parallel loop that every
/// operand depending on it reads as its last, unit-stride dimension, and
/// every output depends on (a GQA head-group sum over [B, Hkv, G, T, D]
/// reduces G inside D). Moving it innermost keeps each output's reduction
/// order, so results are bit-identical.
std::optional<unsigned> contiguousLoop(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (int64_t c = int64_t(op.getNumLoops()) - 2; c >= 0; --c) {
    if (iterators[c] != utils::IteratorType::parallel)
      continue;
    bool ok = true;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type || !map.isProjectedPermutation()) {
        ok = false;
        break;
      }
      if (!map.isFunctionOfDim(c)) {
        ok = operand.getOperandNumber() < op.getNumDpsInputs();
      } else {
        SmallVector<int64_t> strides;
        int64_t offset;
        ok = map.getResults().back() == getAffineDimExpr(c, op.getContext()) &&
             succeeded(type.getStridesAndOffset(strides, offset)) &&
             strides.back() == 1;
      }
      if (!ok)
        break;
    }
    if (ok)
      return unsigned(c);
  }
  return std::nullopt;
}

/// Rewrites one op along `plan`.
class InnerLoopVectorizer {
public:
  InnerLoopVectorizer(linalg::GenericOp op, const Plan &plan, int64_t lanes)
      : op(op), plan(plan), lanes(lanes), body(op.getRegion().front()) {}

  void rewrite(RewriterBase &rewriter) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<Range> ranges = cast<linalg::LinalgOp>(op.getOperation())
                                    .createLoopRanges(rewriter, loc);
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned d = 0; d < plan.inner; ++d) {
      lbs.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].offset));
      ubs.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].size));
      steps.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].stride));
    }
    Value size =
        getValueOrCreateConstantIndexOp(rewriter, loc, ranges[plan.inner].size);
    if (lbs.empty()) {
      emitInner(rewriter, loc, {}, size);
    } else {
      scf::buildLoopNest(rewriter, loc, lbs, ubs, steps,
                         [&](OpBuilder &b, Location l, ValueRange ivs) {
                           emitInner(b, l, ivs, size);
                         });
    }
    rewriter.eraseOp(op);
  }

private:
  /// The indices of `operand` at outer ivs `outer` and innermost iv `k`.
  SmallVector<Value> indicesOf(OpOperand &operand, ValueRange outer, Value k) {
    SmallVector<Value> indices;
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      indices.push_back(d == plan.inner ? k : outer[d]);
    }
    return indices;
  }

  VectorType vectorOf(Type scalar) { return VectorType::get({lanes}, scalar); }

  /// Maps the body's ops into `map` at `b`, as vectors (`k` the first of
  /// `lanes` iterations) or scalars. Values that do not depend on the
  /// innermost loop stay scalar; vector ops broadcast them.
  void emitBody(OpBuilder &b, Location loc, IRMapping &map, ValueRange outer,
                Value k, bool asVector) {
    Value lanesIndex;
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        Value v = index.getDim() == plan.inner ? k : outer[index.getDim()];
        if (asVector && index.getDim() == plan.inner) {
          if (!lanesIndex) {
            // k + [0, 1, ..., lanes - 1] (a constant, not vector.step,
            // which convert-to-llvm does not lower).
            VectorType type = vectorOf(b.getIndexType());
            Value step = arith::ConstantOp::create(
                b, loc,
                DenseElementsAttr::get(
                    type, llvm::to_vector(llvm::map_range(
                              llvm::seq<int64_t>(0, lanes), [&](int64_t i) {
                                return Attribute(b.getIndexAttr(i));
                              }))));
            lanesIndex = arith::AddIOp::create(
                b, loc, step, vector::BroadcastOp::create(b, loc, type, k));
          }
          v = lanesIndex;
        }
        map.map(index.getResult(), v);
        continue;
      }
      auto isVector = [&](Value v) {
        return isa<VectorType>(map.lookupOrDefault(v).getType());
      };
      if (!asVector || llvm::none_of(inner.getOperands(), isVector)) {
        b.clone(inner, map);
        continue;
      }
      OperationState state(inner.getLoc(), inner.getName());
      for (Value operand : inner.getOperands()) {
        Value v = map.lookupOrDefault(operand);
        if (!isa<VectorType>(v.getType()))
          v = vector::BroadcastOp::create(b, loc, vectorOf(v.getType()), v);
        state.addOperands(v);
      }
      state.addTypes(vectorOf(inner.getResult(0).getType()));
      state.addAttributes(inner.getAttrs());
      map.map(inner.getResult(0), b.create(state)->getResult(0));
    }
  }

  /// Reads the operands that depend on the innermost loop at `k`.
  void loadVarying(OpBuilder &b, Location loc, IRMapping &map, ValueRange outer,
                   Value k, bool asVector) {
    unsigned numInputs = op.getNumDpsInputs();
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (!plan.varies[operand.getOperandNumber()] || arg.use_empty())
        continue;
      if (plan.reduction && operand.getOperandNumber() >= numInputs)
        continue; // the accumulator is an iteration argument
      SmallVector<Value> indices = indicesOf(operand, outer, k);
      Value v =
          asVector
              ? Value(vector::LoadOp::create(b, loc, vectorOf(arg.getType()),
                                             operand.get(), indices))
              : Value(memref::LoadOp::create(b, loc, operand.get(), indices));
      map.map(arg, v);
    }
  }

  /// What the body yields for init `i`, in `map`.
  Value yielded(IRMapping &map, unsigned i) {
    return map.lookupOrDefault(body.getTerminator()->getOperand(i));
  }

  void emitInner(OpBuilder &b, Location loc, ValueRange outer, Value size) {
    // Operands that do not depend on the innermost loop: loaded once.
    IRMapping invariant;
    unsigned numInputs = op.getNumDpsInputs();
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (plan.varies[operand.getOperandNumber()] || arg.use_empty())
        continue;
      if (plan.reduction && operand.getOperandNumber() >= numInputs)
        continue; // the accumulator: read after the vector loop
      invariant.map(arg, memref::LoadOp::create(b, loc, operand.get(),
                                                indicesOf(operand, outer, {})));
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value step = arith::ConstantIndexOp::create(b, loc, lanes);
    Value full;
    bool hasTail = true;
    if (!ShapedType::isDynamic(plan.staticSize)) {
      full = arith::ConstantIndexOp::create(
          b, loc, plan.staticSize - plan.staticSize % lanes);
      hasTail = plan.staticSize % lanes != 0;
    } else {
      full = arith::SubIOp::create(b, loc, size,
                                   arith::RemUIOp::create(b, loc, size, step));
    }

    // The vector loop; for a reduction it carries one accumulator per init.
    SmallVector<Value> accumulators;
    auto inits = op.getDpsInitsMutable();
    if (plan.reduction)
      for (auto [i, kind] : llvm::enumerate(plan.kinds)) {
        Type f32 = b.getF32Type();
        accumulators.push_back(arith::ConstantOp::create(
            b, loc,
            SplatElementsAttr::get(vectorOf(f32),
                                   b.getFloatAttr(f32, identityOf(kind)))));
      }
    auto vectorLoop = scf::ForOp::create(
        b, loc, zero, full, step, accumulators,
        [&](OpBuilder &lb, Location l, Value k, ValueRange accs) {
          IRMapping map = invariant;
          loadVarying(lb, l, map, outer, k, /*asVector=*/true);
          for (auto [i, acc] : llvm::enumerate(accs))
            map.map(op.getMatchingBlockArgument(&inits[i]), acc);
          emitBody(lb, l, map, outer, k, /*asVector=*/true);
          SmallVector<Value> next;
          for (unsigned i = 0; i < inits.size(); ++i) {
            Value v = yielded(map, i);
            if (!isa<VectorType>(v.getType()))
              v = vector::BroadcastOp::create(lb, l, vectorOf(v.getType()), v);
            if (plan.reduction)
              next.push_back(v);
            else
              vector::StoreOp::create(lb, l, v, inits[i].get(),
                                      indicesOf(inits[i], outer, k));
          }
          scf::YieldOp::create(lb, l, next);
        });

    // Reductions: the initial value, then the lanes in order.
    SmallVector<Value> partial;
    for (auto [i, kind] : llvm::enumerate(plan.kinds)) {
      Value initial = memref::LoadOp::create(b, loc, inits[i].get(),
                                             indicesOf(inits[i], outer, {}));
      partial.push_back(vector::ReductionOp::create(
          b, loc, kind, vectorLoop.getResult(i), initial));
    }
    if (hasTail) {
      auto tail = scf::ForOp::create(
          b, loc, full, size, one, partial,
          [&](OpBuilder &lb, Location l, Value k, ValueRange accs) {
            IRMapping map = invariant;
            loadVarying(lb, l, map, outer, k, /*asVector=*/false);
            for (auto [i, acc] : llvm::enumerate(accs))
              map.map(op.getMatchingBlockArgument(&inits[i]), acc);
            emitBody(lb, l, map, outer, k, /*asVector=*/false);
            SmallVector<Value> next;
            for (unsigned i = 0; i < inits.size(); ++i) {
              if (plan.reduction)
                next.push_back(yielded(map, i));
              else
                memref::StoreOp::create(lb, l, yielded(map, i), inits[i].get(),
                                        indicesOf(inits[i], outer, k));
            }
            scf::YieldOp::create(lb, l, next);
          });
      partial.assign(tail.getResults().begin(), tail.getResults().end());
    }
    for (auto [i, value] : llvm::enumerate(partial))
      memref::StoreOp::create(b, loc, value, inits[i].get(),
                              indicesOf(inits[i], outer, {}));
  }

  linalg::GenericOp op;
  const Plan &plan;
  int64_t lanes;
  Block &body;
};

/// Vector math ops with an LLVM intrinsic: replaced by it, so that
/// convert-math-to-libm does not split them into scalar calls.
template <typename MathOp, typename LLVMOp>
struct VectorMathToIntrinsic : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<VectorType>(op.getType()))
      return failure();
    rewriter.replaceOpWithNewOp<LLVMOp>(op, op.getType(), op->getOperands());
    return success();
  }
};

struct TfmVectorizeInnerLoopsPass
    : mlir::tfm::impl::TfmVectorizeInnerLoopsPassBase<
          TfmVectorizeInnerLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (lanes < 2) {
      getOperation()->emitError("tfm-vectorize-inner-loops: lanes must be "
                                "at least 2, got ")
          << lanes;
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    // Transposes that keep the last dimension and broadcasts (GQA's
    // repeated heads) are copies along it: as generics they qualify.
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::TransposeOp, linalg::BroadcastOp>(op) &&
          cast<linalg::LinalgOp>(op).hasPureBufferSemantics())
        named.push_back(cast<linalg::LinalgOp>(op));
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    SmallVector<std::pair<linalg::GenericOp, Plan>> work;
    for (linalg::GenericOp op : generics) {
      std::optional<Plan> plan = planFor(op, lanes);
      if (!plan) {
        std::optional<unsigned> c = contiguousLoop(op);
        if (!c)
          continue;
        SmallVector<unsigned> order;
        for (unsigned d = 0; d < op.getNumLoops(); ++d)
          if (d != *c)
            order.push_back(d);
        order.push_back(*c);
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> moved =
            linalg::interchangeGenericOp(rewriter, op, order);
        if (failed(moved))
          continue;
        op = *moved;
        plan = planFor(op, lanes);
        if (!plan) { // the body does not qualify: the loops as they were
          SmallVector<unsigned> inverse(order.size());
          for (auto [p, d] : llvm::enumerate(order))
            inverse[d] = p;
          (void)linalg::interchangeGenericOp(rewriter, op, inverse);
          continue;
        }
      }
      work.push_back({op, std::move(*plan)});
    }
    for (auto &[op, plan] : work)
      InnerLoopVectorizer(op, plan, lanes).rewrite(rewriter);

    MLIRContext *ctx = &getContext();
    if (approximateMath) {
      SmallVector<Operation *> vectorMath;
      getOperation()->walk([&](Operation *op) {
        if (isa<math::ExpOp, math::LogOp, math::TanhOp>(op) &&
            isa<VectorType>(op->getResult(0).getType()) &&
            getElementTypeOrSelf(op->getResult(0)).isF32())
          vectorMath.push_back(op);
      });
      RewritePatternSet approximations(ctx);
      populateMathPolynomialApproximationPatterns(
          approximations, [](StringRef name) {
            name.consume_front("math.");
            return name == "exp" || name == "log" || name == "tanh";
          });
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      if (failed(applyOpPatternsGreedily(vectorMath, std::move(approximations),
                                         config)))
        return signalPassFailure();
    }
    RewritePatternSet intrinsics(ctx);
    intrinsics.add<VectorMathToIntrinsic<math::FmaOp, LLVM::FMAOp>,
                   VectorMathToIntrinsic<math::FloorOp, LLVM::FFloorOp>,
                   VectorMathToIntrinsic<math::CeilOp, LLVM::FCeilOp>,
                   VectorMathToIntrinsic<math::AbsFOp, LLVM::FAbsOp>,
                   VectorMathToIntrinsic<math::SqrtOp, LLVM::SqrtOp>,
                   VectorMathToIntrinsic<math::RoundEvenOp, LLVM::RoundEvenOp>,
                   VectorMathToIntrinsic<math::TruncOp, LLVM::FTruncOp>,
                   VectorMathToIntrinsic<math::CopySignOp, LLVM::CopySignOp>>(
        ctx);
    // Only the vector math ops: the rest of the function is not folded.
    SmallVector<Operation *> vectorOps;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          op->getNumResults() == 1 &&
          isa<VectorType>(op->getResult(0).getType()))
        vectorOps.push_back(op);
    });
    if (failed(applyOpPatternsGreedily(vectorOps, std::move(intrinsics))))
      return signalPassFailure();
  }
};

} // namespace
