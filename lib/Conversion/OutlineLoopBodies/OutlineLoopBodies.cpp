//===- OutlineLoopBodies.cpp - keep the functions LLVM optimises small ----===//
//
// LLVM's loop passes (LoopRotate, LoopFullUnroll, LoopIdiomRecognize) take
// time that grows faster than the function they run on. A training step
// lowers to one function per entry, with every layer kind's forward and
// backward inlined into the scans: a 4-layer Qwen3-Next step was one
// 89,000-line LLVM function that took 40 s at -O3, all but 3 s of its
// compile. Moving each large loop body (a layer kind, a scan's chunk loop,
// an attention tile; before linalg becomes loops, so innermost loop bodies
// are never candidates) into a function of its own keeps every function
// small; the functions are `no_inline`, so LLVM's inliner does not undo it.
// One call per layer, kind or tile costs nothing beside the work inside.
//
//===----------------------------------------------------------------------===//

#include "tfm/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMOUTLINELOOPBODIESPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The operations in `region`, nested ones included, and whether it may be
/// outlined: one of them is a loop (a structured op or an scf.for; a body
/// without one is an innermost loop's, which must stay inline, not a call
/// per element) and none allocates on the stack.
std::pair<unsigned, bool> measure(Region &region) {
  unsigned n = 0;
  bool loops = false;
  bool stack = false;
  region.walk([&](Operation *op) {
    ++n;
    loops |= isa<linalg::LinalgOp, scf::ForOp>(op);
    stack |= isa<memref::AllocaOp, memref::AllocaScopeOp>(op);
  });
  // Stack buffers live until their function returns: not outlined.
  return {n, loops && !stack};
}

struct TfmOutlineLoopBodiesPass
    : tfm::impl::TfmOutlineLoopBodiesPassBase<TfmOutlineLoopBodiesPass> {
  using TfmOutlineLoopBodiesPassBase::TfmOutlineLoopBodiesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isDeclaration())
        continue;
      // Inner regions first: an outer body is measured with its large
      // inner bodies already calls. (Outlining only the outermost ones, one
      // function per layer kind, left a 33,000-line backward body and
      // compiled slower; the inner bodies' loops vectorise as before: the
      // step time is unchanged.)
      auto large = [&](Region &region) {
        auto [ops, loops] = measure(region);
        return region.hasOneBlock() && ops >= minOps && loops;
      };
      SmallVector<Region *> regions;
      func.walk<WalkOrder::PostOrder>([&](Operation *op) {
        if (isa<scf::ForOp, scf::IfOp, scf::IndexSwitchOp>(op))
          for (Region &region : op->getRegions())
            regions.push_back(&region);
      });
      unsigned next = 0;
      for (Region *region : regions) {
        if (!large(*region))
          continue;
        std::string name;
        do
          name = (func.getSymName() + "__body" + Twine(next++)).str();
        while (module.lookupSymbol(name));
        FailureOr<func::FuncOp> outlined = outlineSingleBlockRegion(
            rewriter, region->getParentOp()->getLoc(), *region, name);
        if (failed(outlined))
          continue;
        outlined->setPrivate();
        // LLVM's `noinline`: func.func's own no_inline is not carried to
        // llvm.func by the conversion; a discardable `passthrough` is, and
        // becomes the LLVM function attribute.
        (*outlined)->setAttr("passthrough",
                             rewriter.getStrArrayAttr({"noinline"}));
      }
    }
  }
};

} // namespace
