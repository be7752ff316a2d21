//===- MemRefCopyToLinalg.cpp - memref.copy as linalg.copy ----------------===//
//
// On the GPU path a memref.copy would lower to a host memcpy (or the
// runtime's strided memrefCopy) over device memory. As linalg.copy it goes
// through convert-linalg-to-parallel-loops like every other element-wise
// op and becomes a kernel.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMMEMREFCOPYTOLINALGPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmMemRefCopyToLinalgPass
    : mlir::tfm::impl::TfmMemRefCopyToLinalgPassBase<
          TfmMemRefCopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp op) { copies.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
  }
};
} // namespace
