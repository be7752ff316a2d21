//===- RecordEntryDims.cpp - the tfm-record-entry-dims pass ---------------===//
//
// A union-find over dimension sizes: of values (value, d), of index values
// (value, -1) and of structured ops' loops (op, -2 - l). Each rule below
// unions sizes the IR already requires to be equal, so the classes are what
// the generated code assumes; a rule that is missing only leaves a check
// out.
//
//===----------------------------------------------------------------------===//

#include "tfm/Analysis/EntryContract.h"
#include "tfm/Analysis/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <array>
#include <set>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMRECORDENTRYDIMSPASS
#include "tfm/Analysis/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Key = std::pair<const void *, int64_t>;

class SizeClasses {
public:
  static Key dim(Value v, int64_t d) { return {v.getAsOpaquePointer(), d}; }
  static Key index(Value v) { return {v.getAsOpaquePointer(), -1}; }
  static Key loop(Operation *op, int64_t l) { return {op, -2 - l}; }

  unsigned find(Key k) {
    auto [it, inserted] = ids.try_emplace(k, parent.size());
    if (inserted)
      parent.push_back(it->second);
    unsigned x = it->second;
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(Key a, Key b) { parent[find(a)] = find(b); }
  /// Every dimension of `a` with the same one of `b` (same-shaped values).
  void uniteShapes(Value a, Value b) {
    auto ta = dyn_cast<RankedTensorType>(a.getType());
    auto tb = dyn_cast<RankedTensorType>(b.getType());
    if (!ta || !tb || ta.getRank() != tb.getRank())
      return;
    for (int64_t d = 0; d < ta.getRank(); ++d)
      unite(dim(a, d), dim(b, d));
  }
  /// Dimension `d` of `v` with an index value (a constant size counts too).
  void uniteSize(Value v, int64_t d, OpFoldResult size) {
    if (auto value = dyn_cast<Value>(size))
      unite(dim(v, d), index(value));
  }

private:
  llvm::DenseMap<Key, unsigned> ids;
  std::vector<unsigned> parent;
};

void addRules(Operation *op, SizeClasses &classes) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (!linalgOp.hasPureTensorSemantics())
      return;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      for (auto [r, expr] : llvm::enumerate(map.getResults()))
        if (auto d = dyn_cast<AffineDimExpr>(expr))
          classes.unite(SizeClasses::dim(operand.get(), r),
                        SizeClasses::loop(op, d.getPosition()));
    }
    for (auto [init, result] :
         llvm::zip(linalgOp.getDpsInits(), op->getResults()))
      classes.uniteShapes(init, result);
    return;
  }
  if (auto dimOp = dyn_cast<tensor::DimOp>(op)) {
    if (std::optional<int64_t> d = dimOp.getConstantIndex())
      classes.unite(SizeClasses::index(dimOp.getResult()),
                    SizeClasses::dim(dimOp.getSource(), *d));
    return;
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    for (auto [d, size] : llvm::enumerate(empty.getMixedSizes()))
      classes.uniteSize(empty.getResult(), d, size);
    return;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (slice.getType().getRank() == slice.getSourceType().getRank())
      for (auto [d, size] : llvm::enumerate(slice.getMixedSizes()))
        classes.uniteSize(slice.getResult(), d, size);
    return;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    classes.uniteShapes(insert.getDest(), insert.getResult());
    return;
  }
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    classes.uniteShapes(cast.getSource(), cast.getResult());
    return;
  }
  auto unitGroups = [&](Value collapsed, Value expanded,
                        ArrayRef<ReassociationIndices> groups) {
    for (auto [d, group] : llvm::enumerate(groups))
      if (group.size() == 1)
        classes.unite(SizeClasses::dim(collapsed, d),
                      SizeClasses::dim(expanded, group[0]));
  };
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    unitGroups(collapse.getResult(), collapse.getSrc(),
               collapse.getReassociationIndices());
    return;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    unitGroups(expand.getSrc(), expand.getResult(),
               expand.getReassociationIndices());
    // The sizes it is given (a [B·T, N] matmul result back to [B, T, ...]).
    for (auto [d, size] : llvm::enumerate(expand.getMixedOutputShape()))
      classes.uniteSize(expand.getResult(), d, size);
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [init, arg, yielded, result] :
         llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                   yield.getOperands(), loop.getResults())) {
      classes.uniteShapes(init, arg);
      classes.uniteShapes(init, yielded);
      classes.uniteShapes(init, result);
    }
    return;
  }
  if (isa<scf::IfOp, scf::IndexSwitchOp>(op)) {
    for (Region &region : op->getRegions()) {
      if (region.empty())
        continue;
      auto yield = dyn_cast<scf::YieldOp>(region.front().getTerminator());
      if (!yield)
        continue;
      for (auto [result, yielded] :
           llvm::zip(op->getResults(), yield.getOperands()))
        classes.uniteShapes(result, yielded);
    }
  }
}

struct TfmRecordEntryDimsPass
    : mlir::tfm::impl::TfmRecordEntryDimsPassBase<TfmRecordEntryDimsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isDeclaration() || func.isPrivate())
      return;
    SizeClasses classes;
    func.walk([&](Operation *op) { addRules(op, classes); });
    // A tensor.extract at a loop's index inside a structured op reads the
    // tensor at every index of that loop: its dimension is at least the
    // loop's size (labels read at each row of the logits, a table at each
    // position), not equal to it.
    SmallVector<std::pair<Key, Key>> atLeast; // (big, small)
    func.walk([&](tensor::ExtractOp extract) {
      for (auto [k, idx] : llvm::enumerate(extract.getIndices()))
        if (auto index = idx.getDefiningOp<linalg::IndexOp>())
          if (auto loopOp = index->getParentOfType<linalg::LinalgOp>())
            atLeast.push_back({SizeClasses::dim(extract.getTensor(), k),
                               SizeClasses::loop(loopOp, index.getDim())});
    });

    // Static sizes of each class, from every value's type.
    llvm::DenseMap<unsigned, std::set<int64_t>> staticSizes;
    func.walk([&](Operation *op) {
      auto note = [&](Value v) {
        if (auto t = dyn_cast<RankedTensorType>(v.getType()))
          for (int64_t d = 0; d < t.getRank(); ++d)
            if (!t.isDynamicDim(d))
              staticSizes[classes.find(SizeClasses::dim(v, d))].insert(
                  t.getDimSize(d));
      };
      for (Value v : op->getOperands())
        note(v);
      for (Value v : op->getResults())
        note(v);
      // Constant index values (sizes of tensor.empty, slices).
      if (auto c = dyn_cast<arith::ConstantIndexOp>(op))
        staticSizes[classes.find(SizeClasses::index(c))].insert(c.value());
    });

    // The arguments' dynamic dimensions by class, in argument order.
    llvm::MapVector<unsigned, SmallVector<int64_t>> members;
    for (BlockArgument arg : func.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t)
        continue;
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (t.isDynamicDim(d))
          members[classes.find(SizeClasses::dim(arg, d))].append(
              {int64_t(arg.getArgNumber()), d});
    }
    Builder b(func.getContext());
    SmallVector<Attribute> records;
    for (auto &[root, argDims] : members) {
      const std::set<int64_t> &sizes = staticSizes[root];
      if (sizes.size() > 1)
        continue; // not a rule's doing on valid IR; check nothing
      if (argDims.size() < 4 && sizes.empty())
        continue; // one dynamic dimension, free
      SmallVector<int64_t> record = {sizes.empty() ? -1 : *sizes.begin()};
      record.append(argDims);
      records.push_back(b.getDenseI64ArrayAttr(record));
    }
    if (records.empty())
      func->removeAttr(kEntryDimsAttr);
    else
      func->setAttr(kEntryDimsAttr, b.getArrayAttr(records));

    // A class as one size: its static size, else its first dynamic
    // argument dimension; none when it has neither (or two static sizes).
    auto sizeOf =
        [&](unsigned root) -> std::optional<std::pair<int64_t, int64_t>> {
      const std::set<int64_t> &sizes = staticSizes[root];
      if (sizes.size() == 1)
        return std::make_pair(int64_t(-1), *sizes.begin());
      if (!sizes.empty())
        return std::nullopt;
      auto it = members.find(root);
      if (it == members.end())
        return std::nullopt;
      return std::make_pair(it->second[0], it->second[1]);
    };
    std::set<std::array<int64_t, 4>> bounds;
    for (auto [bigKey, smallKey] : atLeast) {
      unsigned big = classes.find(bigKey), small = classes.find(smallKey);
      if (big == small)
        continue;
      auto bigSize = sizeOf(big), smallSize = sizeOf(small);
      if (!bigSize || !smallSize ||
          (bigSize->first < 0 && smallSize->first < 0))
        continue; // unknown, or static on both sides (the IR's own business)
      bounds.insert({bigSize->first, bigSize->second, smallSize->first,
                     smallSize->second});
    }
    SmallVector<Attribute> boundRecords;
    for (const std::array<int64_t, 4> &r : bounds)
      boundRecords.push_back(b.getDenseI64ArrayAttr(r));
    if (boundRecords.empty())
      func->removeAttr(kEntryDimsAtLeastAttr);
    else
      func->setAttr(kEntryDimsAtLeastAttr, b.getArrayAttr(boundRecords));
  }
};

} // namespace
