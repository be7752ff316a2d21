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

#include "tfm/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGLOBALSTOARENAPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmGlobalsToArenaPass
    : mlir::tfm::impl::TfmGlobalsToArenaPassBase<TfmGlobalsToArenaPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Globals read in this function, each copied once at entry.
      llvm::MapVector<StringAttr, SmallVector<memref::GetGlobalOp>> uses;
      func.walk([&](memref::GetGlobalOp op) {
        auto global = symbols.lookup<memref::GlobalOp>(op.getName());
        if (global && global.getConstant())
          uses[op.getNameAttr().getAttr()].push_back(op);
      });
      if (uses.empty())
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      SmallVector<Value> buffers;
      for (auto &[name, ops] : uses) {
        auto type = cast<MemRefType>(ops.front().getType());
        bool returned = llvm::any_of(ops, [](memref::GetGlobalOp op) {
          return llvm::any_of(op->getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); });
        });
        // A returned global would be returned freed: leave it (the GPU
        // pipeline's deallocation has already cloned returned buffers).
        if (!type.hasStaticShape() || !type.getLayout().isIdentity() || returned)
          continue;
        Location loc = ops.front().getLoc();
        Value source = memref::GetGlobalOp::create(b, loc, type, name);
        Value buffer = memref::AllocOp::create(b, loc, type);
        memref::CopyOp::create(b, loc, source, buffer);
        for (memref::GetGlobalOp op : ops) {
          op.getResult().replaceAllUsesWith(buffer);
          op.erase();
        }
        buffers.push_back(buffer);
      }
      func.walk([&](func::ReturnOp ret) {
        OpBuilder rb(ret);
        for (Value buffer : buffers)
          memref::DeallocOp::create(rb, ret.getLoc(), buffer);
      });
    }
  }
};
} // namespace
