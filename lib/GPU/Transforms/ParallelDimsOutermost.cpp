//===- ParallelDimsOutermost.cpp - reductions inside, parallel loops out --===//
//
// convert-linalg-to-parallel-loops keeps loop order: a generic reducing over
// leading dimensions (a weight gradient summed over [B, T] for each
// feature) becomes host scf.for loops around an scf.parallel, which the GPU
// path would launch once per token. Interchanging the generic's loops so
// every parallel dimension comes first (in their original order) and the
// reductions last gives one launch with a thread per output, each looping
// over the reduced dimensions; neighbouring threads still read neighbouring
// elements. Each output keeps its reduction order, so results are
// unchanged.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPARALLELDIMSOUTERMOSTPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmParallelDimsOutermostPass
    : mlir::tfm::impl::TfmParallelDimsOutermostPassBase<
          TfmParallelDimsOutermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      auto iterators = op.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (auto [d, it] : llvm::enumerate(iterators))
        if (it == utils::IteratorType::parallel)
          order.push_back(d);
      if (order.empty() || order.size() == iterators.size())
        continue;
      for (auto [d, it] : llvm::enumerate(iterators))
        if (it != utils::IteratorType::parallel)
          order.push_back(d);
      if (llvm::is_sorted(order))
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitOpError("cannot move its parallel loops outermost");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
