//===- RecordEntryBounds.cpp - the tfm-record-entry-bounds pass -----------===//

#include "tfm/Analysis/EntryContract.h"
#include "tfm/Analysis/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMRECORDENTRYBOUNDSPASS
#include "tfm/Analysis/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

struct TfmRecordEntryBoundsPass
    : mlir::tfm::impl::TfmRecordEntryBoundsPassBase<TfmRecordEntryBoundsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isDeclaration() || func.isPrivate())
      return;
    Block &entry = func.getBody().front();
    // argument -> (bound, allowed); an argument indexing two dimensions
    // keeps the tighter bound (and drops `allowed` unless both allow it).
    std::map<unsigned, std::pair<int64_t, std::optional<int64_t>>> bounds;
    func.walk([&](IndexOperandsOpInterface op) {
      SmallVector<IndexOperand> operands;
      op.getIndexOperands(operands);
      for (const IndexOperand &io : operands) {
        auto arg = dyn_cast<BlockArgument>(op->getOperand(io.operand));
        auto boundType = dyn_cast<ShapedType>(io.boundOf.getType());
        if (!arg || arg.getOwner() != &entry || !boundType ||
            !boundType.hasRank() || io.boundDim >= boundType.getRank() ||
            boundType.isDynamicDim(io.boundDim))
          continue;
        int64_t bound = boundType.getDimSize(io.boundDim);
        auto [it, inserted] =
            bounds.try_emplace(arg.getArgNumber(), bound, io.alsoAllowed);
        if (inserted)
          continue;
        it->second.first = std::min(it->second.first, bound);
        if (it->second.second != io.alsoAllowed)
          it->second.second.reset();
      }
    });
    if (bounds.empty())
      return;
    Builder b(func.getContext());
    SmallVector<Attribute> records;
    for (auto &[arg, bound] : bounds)
      records.push_back(b.getDenseI64ArrayAttr(
          {int64_t(arg), bound.first, bound.second.value_or(bound.first)}));
    func->setAttr(kEntryIndexBoundsAttr, b.getArrayAttr(records));
  }
};

} // namespace
