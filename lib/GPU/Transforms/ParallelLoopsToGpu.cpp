//===- ParallelLoopsToGpu.cpp - outermost scf.parallel to gpu.launch ------===//
//
// Upstream's gpu-map-parallel-loops + convert-parallel-loops-to-gpu give
// every parallel dimension its own grid/block dimension and need constant
// inner bounds; after tiling dynamic shapes they leave most loops on the
// host (as of MLIR 22). Element-wise kernels want something
// simpler: flatten the iteration space of each outermost scf.parallel into
// one linear index, one thread per point, the last dimension fastest so
// neighbouring threads touch neighbouring elements (coalesced), and
//
//   gpu.launch blocks(ceil(N / block_size)) threads(block_size)
//     if (id < N) { ivs = delinearize(id); <loop body> }
//
// guarded by N > 0 (CUDA refuses empty grids). Reduction dimensions that
// convert-linalg-to-parallel-loops emitted as scf.for stay inside the body,
// so each thread reduces its own output point. Loops with scf.reduce
// results are left alone.
//
// A full reduction (the loss's sum over all positions) has no parallel
// dimension at all and would stay a host loop reading device data; such a
// top-level scf.for nest (float loads or stores, no launches or calls
// inside) runs as a single-thread kernel instead. The deallocation helper's
// loops over index/i1 pointer lists stay on the host.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/GpuKernelUtils.h"
#include "tfm/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPARALLELLOOPSTOGPUPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
namespace gpukernel = mlir::tfm::gpukernel;

namespace {

bool isOutermost(scf::ParallelOp op) {
  return !op->getParentOfType<scf::ParallelOp>() &&
         !op->getParentOfType<gpu::LaunchOp>() &&
         !op->getParentOfType<gpu::GPUModuleOp>();
}

void launchFlattened(RewriterBase &b, scf::ParallelOp loop, int64_t blockSize) {
  b.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value zero = cst(0), one = cst(1);

  // Trip count of each dimension and their product.
  SmallVector<Value> trips;
  Value total = one;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value n = arith::CeilDivSIOp::create(b, loc, span, step);
    n = arith::MaxSIOp::create(b, loc, n, zero);
    trips.push_back(n);
    total = arith::MulIOp::create(b, loc, total, n);
  }
  Value bs = cst(blockSize);
  Value grid = arith::CeilDivSIOp::create(b, loc, total, bs);
  Value nonEmpty =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, total, zero);
  auto guard = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, bs, one, one);
  b.setInsertionPointToStart(&launch.getBody().front());

  Value id = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, bs),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, total);
  auto inside = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  gpu::TerminatorOp::create(b, loc);

  b.setInsertionPointToStart(&inside.getThenRegion().front());
  IRMapping map;
  unsigned rank = trips.size();
  SmallVector<Value> ivs = gpukernel::delinearize(b, loc, id, trips);
  for (unsigned d = 0; d < rank; ++d) {
    Value scaled = arith::MulIOp::create(b, loc, ivs[d], loop.getStep()[d]);
    ivs[d] = arith::AddIOp::create(b, loc, loop.getLowerBound()[d], scaled);
  }
  for (unsigned d = 0; d < rank; ++d)
    map.map(loop.getInductionVars()[d], ivs[d]);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  b.eraseOp(loop);
}

/// A host scf.for nest that reads or writes float data and launches nothing.
bool isSerialDeviceLoop(scf::ForOp loop) {
  if (loop->getParentOfType<scf::ForOp>() ||
      loop->getParentOfType<gpu::LaunchOp>() ||
      loop->getParentOfType<gpu::GPUModuleOp>())
    return false;
  bool touchesFloats = false, blocked = false;
  loop->walk([&](Operation *op) {
    if (isa<gpu::LaunchOp, func::CallOp, scf::ParallelOp>(op))
      blocked = true;
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef();
    if (memref &&
        isa<FloatType>(cast<MemRefType>(memref.getType()).getElementType()))
      touchesFloats = true;
  });
  return touchesFloats && !blocked && loop.getNumResults() == 0;
}

void launchSingleThread(RewriterBase &b, scf::ForOp loop) {
  b.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.moveOpBefore(loop, &launch.getBody().front().back());
}

struct TfmParallelLoopsToGpuPass
    : mlir::tfm::impl::TfmParallelLoopsToGpuPassBase<
          TfmParallelLoopsToGpuPass> {
  using Base::Base;
  LogicalResult initialize(MLIRContext *ctx) override {
    if (blockSize < 1 || blockSize > 1024)
      return emitError(
          UnknownLoc::get(ctx),
          "tfm-parallel-loops-to-gpu: block-size must be in [1, 1024]");
    return success();
  }

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (isOutermost(op) && op.getNumResults() == 0)
        loops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops)
      launchFlattened(rewriter, loop, blockSize);
    SmallVector<scf::ForOp> serial;
    getOperation()->walk([&](scf::ForOp op) {
      if (isSerialDeviceLoop(op))
        serial.push_back(op);
    });
    for (scf::ForOp loop : serial)
      launchSingleThread(rewriter, loop);
  }
};

} // namespace
