//===- GlobalsToArena.cpp - constant globals read by kernels as buffers ---===//
//
// A `memref.global constant` (the RoPE frequency table, for instance) lives
// in the host module's memory; a kernel given its address through
// `memref.get_global` would read pageable host memory, which most GPUs
// cannot. Each function that launches kernels gets, once at entry, a fresh
// buffer (`memref.alloc`, i.e. the CUDA arena) filled with the global by a
// host `memref.copy`, every `get_global` of it is replaced by that buffer,
// and the buffer is freed before each return. Run after
// tfm-memref-copy-to-linalg, so the copy stays on the host.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGLOBALSTOARENAPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmGlobalsToArenaPass
    : mlir::tfm::impl::TfmGlobalsToArenaPassBase<TfmGlobalsToArenaPass> {
  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (func.isExternal())
      return;
    // The function's own returns (not those of nested regions).
    auto isReturn = [&](Operation *op) {
      return op->hasTrait<OpTrait::ReturnLike>() && op->getParentOp() == func;
    };
    // Globals read in this function, each copied once at entry. The
    // globals themselves are only looked up (they are siblings of the
    // function), never changed.
    llvm::MapVector<StringAttr, SmallVector<memref::GetGlobalOp>> uses;
    SymbolTableCollection
        symbols; // one hashed lookup table, not a scan per use
    func.walk([&](memref::GetGlobalOp op) {
      auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
          op, op.getNameAttr());
      if (global && global.getConstant())
        uses[op.getNameAttr().getAttr()].push_back(op);
    });
    if (uses.empty())
      return;
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPointToStart(&func.getFunctionBody().front());
    SmallVector<Value> buffers;
    for (auto &[name, ops] : uses) {
      auto type = cast<MemRefType>(ops.front().getType());
      bool returned = llvm::any_of(ops, [&](memref::GetGlobalOp op) {
        return llvm::any_of(op->getUsers(), isReturn);
      });
      // A returned global would be returned freed: leave it (the GPU
      // pipeline's deallocation has already cloned returned buffers).
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() || returned)
        continue;
      Location loc = ops.front().getLoc();
      Value source = memref::GetGlobalOp::create(rewriter, loc, type, name);
      Value buffer = memref::AllocOp::create(rewriter, loc, type);
      memref::CopyOp::create(rewriter, loc, source, buffer);
      for (memref::GetGlobalOp op : ops)
        rewriter.replaceOp(op, buffer);
      buffers.push_back(buffer);
    }
    func.walk([&](Operation *ret) {
      if (!isReturn(ret))
        return;
      rewriter.setInsertionPoint(ret);
      for (Value buffer : buffers)
        memref::DeallocOp::create(rewriter, ret->getLoc(), buffer);
    });
  }
};
} // namespace
