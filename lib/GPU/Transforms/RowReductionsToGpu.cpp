//===- RowReductionsToGpu.cpp - last-dimension reductions as warp kernels -===//
//
// Norm statistics (sum of squares), softmax maxima and sums, log-sum-exp and
// the dot products of the norm/softmax backwards are linalg.generic ops
// whose only reduction dimension is the last one: one output per row. A
// thread per row (the generic path) reads rows with a stride between
// neighbouring threads; here each row gets one warp instead:
//
//   gpu.launch blocks(ceil(rows / W)) threads(32 * W)      W = warps/block
//     row = block * W + warp
//     acc = identity;  for k = lane; k < K; k += 32: acc = body(acc, in[.., k])
//     acc = combine(acc, shuffle_xor(acc, 16, 8, 4, 2, 1))  (butterfly)
//     lane 0 of an in-range row: out[row] = combine(out[row], acc)
//
// Lanes read consecutive elements (coalesced) and the reduction takes five
// shuffles (ptxas reports this shape at 0 spills and ~16 registers). Lanes of a
// row past the end clamp to row 0 and store nothing, so every lane of a warp
// reaches the shuffles. With lanes=1 (one thread per row, no shuffles) the same
// kernels run as CPU loops in the gpu-sim tests.
//
// Matched: buffer-semantics generics on f32 whose loops are parallel except
// the last (a reduction), whose outputs do not depend on it, and whose
// output block arguments are each used once, by an addf / mulf / maximumf /
// minimumf / maxnumf / minnumf whose result is yielded for that output, and
// whose inputs use the reduced dimension, if at all, as their last index.
// Anything else is left for the generic path.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/GpuKernelUtils.h"
#include "tfm/GPU/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMROWREDUCTIONSTOGPUPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpukernel = mlir::tfm::gpukernel;

namespace {

/// The identity of a combining op, or nullopt if it is not one we know.
std::optional<double> identityOf(Operation *op) {
  if (isa<arith::AddFOp>(op))
    return 0.0;
  if (isa<arith::MulFOp>(op))
    return 1.0;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return -std::numeric_limits<double>::infinity();
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return std::numeric_limits<double>::infinity();
  return std::nullopt;
}

/// For each output: the op combining it with the row's values.
FailureOr<SmallVector<Operation *>> matchRowReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op->getParentOfType<gpu::LaunchOp>())
    return failure();
  unsigned loops = op.getNumLoops();
  auto iterators = op.getIteratorTypesArray();
  if (loops < 2 || iterators.back() != utils::IteratorType::reduction)
    return failure();
  for (unsigned d = 0; d + 1 < loops; ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      return failure();
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  SmallVector<Operation *> combiners;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    // One output element per row: each warp owns its element (no races).
    AffineMap outMap = op.getMatchingIndexingMap(&init);
    if (outMap.isFunctionOfDim(loops - 1) || !outMap.isProjectedPermutation() ||
        outMap.getNumResults() != loops - 1)
      return failure();
    if (!cast<MemRefType>(init.get().getType()).getElementType().isF32())
      return failure();
    BlockArgument arg = op.getMatchingBlockArgument(&init);
    if (!arg.hasOneUse())
      return failure();
    Operation *combiner = *arg.getUsers().begin();
    unsigned index = init.getOperandNumber() - op.getNumDpsInputs();
    if (!identityOf(combiner) || combiner->getNumOperands() != 2 ||
        yield.getOperand(index) != combiner->getResult(0) ||
        !combiner->getResult(0).hasOneUse())
      return failure();
    combiners.push_back(combiner);
  }
  // Lanes must read along each input's contiguous (last) dimension: an
  // input indexed by the reduced dimension elsewhere (a column sum) reads
  // coalesced with a thread per output instead.
  AffineExpr reducedDim = getAffineDimExpr(loops - 1, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(input->get().getType()))
      return failure();
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.isFunctionOfDim(loops - 1) &&
        (map.getNumResults() == 0 || map.getResults().back() != reducedDim))
      return failure();
  }
  return combiners;
}

Value combine(OpBuilder &b, Location loc, Operation *combiner, Value x,
              Value y) {
  OperationState state(loc, combiner->getName().getIdentifier(),
                       ValueRange{x, y}, TypeRange{x.getType()},
                       combiner->getAttrs());
  return b.create(state)->getResult(0);
}

/// `map` applied to the loop induction variables `ivs`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), ivs));
  return indices;
}

/// One row's reduction: lanes stride over the row, a butterfly combines
/// them, lane 0 of an in-range row stores.
void buildRowBody(OpBuilder &b, Location loc, linalg::GenericOp op,
                  ArrayRef<Operation *> combiners, ArrayRef<Value> sizes,
                  int64_t lanes, const gpukernel::RowThread &t) {
  unsigned loops = op.getNumLoops();
  Value lane = t.lane, active = t.active;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value reduced = sizes.back();
  // Parallel induction variables of the row, last dimension fastest.
  SmallVector<Value> ivs =
      gpukernel::delinearize(b, loc, t.row, sizes.drop_back());
  ivs.push_back(Value());

  SmallVector<Value> inits;
  Type f32 = b.getF32Type();
  for (Operation *c : combiners)
    inits.push_back(
        arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, *identityOf(c))));
  auto strided = scf::ForOp::create(b, loc, lane, reduced, t.lanes, inits);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(strided.getBody());
    ivs[loops - 1] = strided.getInductionVar();
    IRMapping map;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value v = memref::LoadOp::create(
          b, loc, input->get(),
          applyMap(b, loc, op.getMatchingIndexingMap(input), ivs));
      map.map(op.getMatchingBlockArgument(input), v);
    }
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
      map.map(op.getMatchingBlockArgument(&init),
              strided.getRegionIterArgs()[i]);
    for (Operation &bodyOp : op.getBody()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(bodyOp, map);
    }
    SmallVector<Value> next;
    for (Value v : op.getBody()->getTerminator()->getOperands())
      next.push_back(map.lookup(v));
    scf::YieldOp::create(b, loc, next);
  }

  // Outputs do not depend on the reduced dimension; give it a value defined
  // here.
  ivs[loops - 1] = zero;

  // Butterfly across the warp: every lane ends with the row's value.
  SmallVector<Value> accs(strided.getResults());
  for (int32_t offset = lanes / 2; offset > 0; offset /= 2)
    for (auto [i, c] : llvm::enumerate(combiners)) {
      auto shuffled = gpu::ShuffleOp::create(
          b, loc, accs[i], offset, int32_t(lanes), gpu::ShuffleMode::XOR);
      accs[i] = combine(b, loc, c, accs[i], shuffled.getShuffleResult());
    }

  Value leader = arith::AndIOp::create(
      b, loc, active,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero));
  auto store = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      SmallVector<Value> at =
          applyMap(b, loc, op.getMatchingIndexingMap(&init), ivs);
      Value old = memref::LoadOp::create(b, loc, init.get(), at);
      memref::StoreOp::create(
          b, loc, combine(b, loc, combiners[i], old, accs[i]), init.get(), at);
    }
  }
}

void launchWarpPerRow(RewriterBase &b, linalg::GenericOp op,
                      ArrayRef<Operation *> combiners, int64_t warpsPerBlock,
                      int64_t lanes) {
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  unsigned loops = op.getNumLoops();
  SmallVector<Value> sizes;
  for (Range r :
       cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  Value rows = one;
  for (unsigned d = 0; d + 1 < loops; ++d)
    rows = arith::MulIOp::create(b, loc, rows, sizes[d]);

  gpukernel::launchRows(b, loc, rows, lanes, warpsPerBlock,
                        [&](const gpukernel::RowThread &t) {
                          buildRowBody(b, loc, op, combiners, sizes, lanes, t);
                        });
  b.eraseOp(op);
}

struct TfmRowReductionsToGpuPass
    : mlir::tfm::impl::TfmRowReductionsToGpuPassBase<
          TfmRowReductionsToGpuPass> {
  using Base::Base;
  LogicalResult initialize(MLIRContext *ctx) override {
    if (lanes != 1 && lanes != 32)
      return emitError(
          UnknownLoc::get(ctx),
          "tfm-row-reductions-to-gpu: lanes must be 32 (a warp) or 1");
    return success();
  }

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SmallVector<Operation *>>> matches;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (auto combiners = matchRowReduction(op); succeeded(combiners))
        matches.push_back({op, *combiners});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, combiners] : matches)
      launchWarpPerRow(rewriter, op, combiners, warpsPerBlock, lanes);
  }
};
} // namespace
