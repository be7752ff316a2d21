//===- GpuLaunchToLoops.cpp - run gpu.launch bodies as CPU loops (testing)
//-===//
//
// Without a GPU, the kernels the GPU path forms can still be checked for
// what they compute: a launch whose threads do not communicate (no
// shuffles, barriers or other gpu ops in its body) means the same as
//
//   for bx, by, bz in grid: for tx, ty, tz in block: <body>
//
// which this pass emits. --tfm-train-gpu-sim runs the GPU path's kernel
// formation (flat element-wise launches, single-thread loops, copies as
// kernels, the host orchestration) through it on the CPU, and the HF
// numeric tests compare the result (test/GPU/sim-*.test). Launches with
// communicating threads (the warp-per-row reductions) are reported as an
// error: they cannot be run this way.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPULAUNCHTOLOOPSPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// Replaces gpu.block_id / thread_id / grid_dim / block_dim in the body by
/// the launch's block arguments (which the loops then provide).
void useBlockArguments(RewriterBase &rewriter, gpu::LaunchOp launch) {
  auto pick = [](gpu::KernelDim3 d, gpu::Dimension dim) {
    return dim == gpu::Dimension::x   ? d.x
           : dim == gpu::Dimension::y ? d.y
                                      : d.z;
  };
  launch.getBody().walk([&](Operation *op) {
    Value replacement;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      replacement = pick(launch.getBlockIds(), id.getDimension());
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      replacement = pick(launch.getThreadIds(), id.getDimension());
    else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      replacement = pick(launch.getGridSize(), dim.getDimension());
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      replacement = pick(launch.getBlockSize(), dim.getDimension());
    if (replacement) {
      rewriter.replaceOp(op, replacement);
    }
  });
}

LogicalResult emulate(RewriterBase &rewriter, gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  if (!body.hasOneBlock())
    return launch.emitOpError("cannot be run as loops: more than one block");
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() || launch.hasClusterSize())
    return launch.emitOpError(
        "cannot be run as loops: memory attributions or clusters");
  useBlockArguments(rewriter, launch);
  WalkResult communicating = body.walk([&](Operation *op) {
    if (op->getDialect() == launch->getDialect() && !isa<gpu::TerminatorOp>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (communicating.wasInterrupted() || launch.getAsyncToken() ||
      launch.getDynamicSharedMemorySize())
    return launch.emitOpError("cannot be run as loops: its threads communicate "
                              "(gpu ops in the body) or it is asynchronous");
  RewriterBase &b = rewriter;
  b.setInsertionPoint(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Value> bounds = {grid.x,  grid.y,  grid.z,
                               block.x, block.y, block.z};
  SmallVector<Value> ivs;
  for (Value bound : bounds) {
    auto loop = scf::ForOp::create(b, loc, zero, bound, one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  IRMapping map;
  gpu::KernelDim3 blockIds = launch.getBlockIds(),
                  threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize(),
                  blockArgs = launch.getBlockSize();
  Value ids[] = {blockIds.x,  blockIds.y,  blockIds.z,
                 threadIds.x, threadIds.y, threadIds.z};
  for (auto [id, iv] : llvm::zip(ids, ivs))
    map.map(id, iv);
  Value sizeArgs[] = {gridArgs.x,  gridArgs.y,  gridArgs.z,
                      blockArgs.x, blockArgs.y, blockArgs.z};
  for (auto [arg, bound] : llvm::zip(sizeArgs, bounds))
    map.map(arg, bound);
  for (Operation &op : body.front().without_terminator())
    b.clone(op, map);
  rewriter.eraseOp(launch);
  return success();
}

struct TfmGpuLaunchToLoopsPass
    : mlir::tfm::impl::TfmGpuLaunchToLoopsPassBase<TfmGpuLaunchToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(rewriter, launch)))
        return signalPassFailure();
  }
};
} // namespace
