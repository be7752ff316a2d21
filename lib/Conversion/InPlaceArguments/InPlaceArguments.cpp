//===- InPlaceArguments.cpp - which arguments an entry may write ----------===//
//
// An entry function writes only the arguments it is declared to update (the
// optimizer step's parameters and state), and returns those as they are
// rather than as copies. tfm-read-only-arguments runs before one-shot
// bufferization, tfm-return-arguments-in-place after buffer deallocation;
// Passes.td has the details.
//
//===----------------------------------------------------------------------===//

#include "tfm/Conversion/InPlaceArguments.h"
#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMREADONLYARGUMENTSPASS
#define GEN_PASS_DEF_TFMRETURNARGUMENTSINPLACEPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// The functions the runtime calls: public, defined, and not called from
/// within the module.
SmallVector<func::FuncOp> entryFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal() &&
        SymbolTable::symbolKnownUseEmpty(func, module))
      entries.push_back(func);
  return entries;
}

struct TfmReadOnlyArgumentsPass
    : tfm::impl::TfmReadOnlyArgumentsPassBase<TfmReadOnlyArgumentsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    for (func::FuncOp func : entryFunctions(getOperation()))
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        if (!isa<TensorType>(func.getArgument(i).getType()))
          continue;
        if (isMarkedUpdatedInPlace(func, i))
          func.setArgAttr(i, kUpdatedInPlaceAttrName, UnitAttr::get(ctx));
        else
          func.setArgAttr(
              i, bufferization::BufferizationDialect::kWritableAttrName,
              BoolAttr::get(ctx, false));
      }
  }
};

/// Whether `op` leaves every buffer's contents as they are: the ops the
/// deallocation pipeline places between its clones and the return.
bool writesNoMemory(Operation &op) {
  return isa<bufferization::CloneOp, memref::DeallocOp,
             bufferization::DeallocOp>(op);
}

/// Replaces `ret`'s operands that are single-use clones of an argument of
/// `func` updated in place with the argument, when nothing after the clone
/// writes memory.
void returnArguments(func::FuncOp func, func::ReturnOp ret) {
  for (OpOperand &operand : ret->getOpOperands()) {
    auto clone = operand.get().getDefiningOp<bufferization::CloneOp>();
    if (!clone || !clone->hasOneUse() || clone->getBlock() != ret->getBlock())
      continue;
    auto arg = dyn_cast<BlockArgument>(clone.getInput());
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        arg.getType() != clone.getType() ||
        !func.getArgAttr(arg.getArgNumber(), kUpdatedInPlaceAttrName))
      continue;
    auto between =
        llvm::make_range(std::next(clone->getIterator()), ret->getIterator());
    if (!llvm::all_of(between, writesNoMemory))
      continue;
    operand.set(arg);
    clone->erase();
  }
}

struct TfmReturnArgumentsInPlacePass
    : tfm::impl::TfmReturnArgumentsInPlacePassBase<
          TfmReturnArgumentsInPlacePass> {
  void runOnOperation() override {
    for (func::FuncOp func : entryFunctions(getOperation()))
      func.walk([&](func::ReturnOp ret) { returnArguments(func, ret); });
  }
};

} // namespace
