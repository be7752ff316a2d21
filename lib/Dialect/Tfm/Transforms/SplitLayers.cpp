//===- SplitLayers.cpp - a model's layers over several scans --------------===//

#include "tfm/Dialect/Tfm/Transforms/SplitLayers.h"
#include "tfm/Dialect/Tfm/IR/StackedValues.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"

#include <set>

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// Layers [lo, hi) of a scan as a scan of their own.
struct Segment {
  int64_t lo, hi;
  /// The old kinds it runs, in order; the new kind of each is its index.
  SmallVector<unsigned> kinds;

  int64_t newKind(unsigned old) const {
    return llvm::find(kinds, old) - kinds.begin();
  }
};

/// The kind set (null: all) of `old` restricted to `seg`'s kinds, renumbered;
/// null when it covers every kind of `seg`.
DenseI64ArrayAttr restrictKinds(MLIRContext *ctx, DenseI64ArrayAttr old,
                                const Segment &seg) {
  if (!old)
    return DenseI64ArrayAttr();
  SmallVector<int64_t> kinds;
  for (auto [n, k] : llvm::enumerate(seg.kinds))
    if (llvm::is_contained(old.asArrayRef(), int64_t(k)))
      kinds.push_back(n);
  if (kinds.size() == seg.kinds.size())
    return DenseI64ArrayAttr();
  return DenseI64ArrayAttr::get(ctx, kinds);
}

/// The slices [begin, end) of a stacked value covering `set` that `seg`'s
/// layers read or write.
std::pair<int64_t, int64_t> sliceRange(RepeatOp repeat, DenseI64ArrayAttr set,
                                       const Segment &seg) {
  SmallVector<int64_t> layers = repeat.getLayersOfKinds(set);
  int64_t begin = llvm::count_if(layers, [&](int64_t l) { return l < seg.lo; });
  int64_t end = llvm::count_if(layers, [&](int64_t l) { return l < seg.hi; });
  return {begin, end};
}

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Why `repeat` cannot be split ("" when it can).
std::string whyNot(func::FuncOp func, RepeatOp repeat) {
  if (repeat.getReverse())
    return "a backward scan cannot be split";
  for (auto [j, w] : llvm::enumerate(repeat.getWeights())) {
    auto arg = dyn_cast<BlockArgument>(w);
    ParamAttr param = arg && arg.getOwner() == &func.front()
                          ? func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                             kParamAttrName)
                          : ParamAttr();
    if (!param || !param.getStacked() || !w.hasOneUse())
      return "stacked input #" + std::to_string(j) +
             " is not a stacked parameter of the function read by this "
             "scan alone";
  }
  for (Value v : repeat.getStackedResults())
    if (!isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType()))
      return "a stacked output is not a float tensor";
  return "";
}

void splitOne(func::FuncOp func, RepeatOp repeat, ArrayRef<int64_t> cuts) {
  MLIRContext *ctx = func.getContext();
  int64_t first = repeat.getFirstLayer().value_or(0);
  int64_t numLayers = repeat.getNumLayers();
  SmallVector<Segment> segments;
  int64_t lo = 0;
  for (int64_t c : llvm::concat<const int64_t>(cuts, ArrayRef(numLayers))) {
    Segment seg{lo, c, {}};
    std::set<unsigned> kinds;
    for (int64_t l = lo; l < c; ++l)
      kinds.insert(repeat.getKindOfLayer(l));
    seg.kinds.assign(kinds.begin(), kinds.end());
    segments.push_back(seg);
    lo = c;
  }

  // Each weight's arguments, one per segment that reads it, inserted where
  // it stood (later arguments first, so earlier positions hold).
  unsigned numWeights = repeat.getWeights().size();
  SmallVector<SmallVector<Value>> parts(numWeights,
                                        SmallVector<Value>(segments.size()));
  SmallVector<unsigned> order(numWeights);
  for (unsigned j = 0; j < numWeights; ++j)
    order[j] = j;
  auto argOf = [&](unsigned j) {
    return cast<BlockArgument>(repeat.getWeights()[j]);
  };
  llvm::sort(order, [&](unsigned a, unsigned b) {
    return argOf(a).getArgNumber() > argOf(b).getArgNumber();
  });
  for (unsigned j : order) {
    BlockArgument arg = argOf(j);
    unsigned index = arg.getArgNumber();
    auto param = func.getArgAttrOfType<ParamAttr>(index, kParamAttrName);
    auto type = cast<RankedTensorType>(arg.getType());
    unsigned inserted = 0;
    for (auto [s, seg] : llvm::enumerate(segments)) {
      auto [begin, end] = sliceRange(repeat, repeat.getWeightKindSet(j), seg);
      if (begin == end)
        continue;
      SmallVector<int64_t> layers;
      for (int64_t slice = begin; slice < end; ++slice)
        layers.push_back(param.hfLayer(slice));
      auto part = ParamAttr::get(
          ctx, param.getName(), param.getKind(), param.getMapping(),
          param.getSources(), param.getDim(), param.getOffset(),
          /*stacked=*/true, param.getTied(), param.getFrozen(),
          DenseI64ArrayAttr::get(ctx, layers), param.getBuffer());
      SmallVector<int64_t> shape(type.getShape());
      shape.front() = end - begin;
      unsigned at = index + 1 + inserted++;
      (void)func.insertArgument(
          at, RankedTensorType::get(shape, type.getElementType()),
          DictionaryAttr::get(
              ctx,
              {NamedAttribute(StringAttr::get(ctx, kParamAttrName), part)}),
          arg.getLoc());
      parts[j][s] = func.getArgument(at);
    }
  }

  // One scan per segment, each running the bodies of its kinds.
  OpBuilder builder(repeat);
  unsigned numCarried = repeat.getInits().size();
  SmallVector<Value> carried(repeat.getInits());
  unsigned numStacked = repeat.getStackedResults().size();
  SmallVector<SmallVector<Value>> stackedParts(numStacked);
  for (auto [s, seg] : llvm::enumerate(segments)) {
    SmallVector<Value> weights;
    SmallVector<DenseI64ArrayAttr> weightSets, stackedSets;
    for (unsigned j = 0; j < numWeights; ++j)
      if (parts[j][s]) {
        weights.push_back(parts[j][s]);
        weightSets.push_back(
            restrictKinds(ctx, repeat.getWeightKindSet(j), seg));
      }
    SmallVector<Type> types(repeat.getInits().getTypes());
    SmallVector<unsigned> stackedHere;
    for (unsigned t = 0; t < numStacked; ++t) {
      auto [begin, end] = sliceRange(repeat, repeat.getStackedKindSet(t), seg);
      if (begin == end)
        continue;
      auto type =
          cast<RankedTensorType>(repeat.getStackedResults()[t].getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.front() = end - begin;
      types.push_back(RankedTensorType::get(shape, type.getElementType()));
      stackedSets.push_back(
          restrictKinds(ctx, repeat.getStackedKindSet(t), seg));
      stackedHere.push_back(t);
    }
    DenseI64ArrayAttr schedule;
    if (seg.kinds.size() > 1) {
      SmallVector<int64_t> kinds;
      for (int64_t l = seg.lo; l < seg.hi; ++l)
        kinds.push_back(seg.newKind(repeat.getKindOfLayer(l)));
      schedule = DenseI64ArrayAttr::get(ctx, kinds);
    }
    ArrayAttr names;
    if (ArrayAttr old = repeat.getKindNamesAttr()) {
      SmallVector<Attribute> kept;
      for (unsigned k : seg.kinds)
        kept.push_back(old[k]);
      names = ArrayAttr::get(ctx, kept);
    }
    int64_t firstLayer = first + seg.lo;
    auto part = RepeatOp::create(
        builder, repeat.getLoc(), types, carried, weights,
        builder.getI64IntegerAttr(seg.hi - seg.lo), schedule, names, UnitAttr(),
        kindSetsAttr(ctx, weightSets, seg.kinds.size()),
        kindSetsAttr(ctx, stackedSets, seg.kinds.size()),
        firstLayer ? builder.getI64IntegerAttr(firstLayer) : IntegerAttr(),
        seg.kinds.size());
    for (auto [n, k] : llvm::enumerate(seg.kinds)) {
      IRMapping mapping;
      repeat.getKinds()[k].cloneInto(&part.getKinds()[n], mapping);
    }
    carried.assign(part.getResults().begin(),
                   part.getResults().begin() + numCarried);
    for (auto [i, t] : llvm::enumerate(stackedHere))
      stackedParts[t].push_back(part.getResult(numCarried + i));
  }

  for (unsigned i = 0; i < numCarried; ++i)
    repeat.getResult(i).replaceAllUsesWith(carried[i]);
  for (unsigned t = 0; t < numStacked; ++t) {
    Value whole = repeat.getStackedResults()[t];
    Value joined =
        stackedParts[t].size() == 1
            ? stackedParts[t].front()
            : ConcatOp::create(builder, repeat.getLoc(), whole.getType(),
                               stackedParts[t], builder.getI64IntegerAttr(0))
                  .getResult();
    whole.replaceAllUsesWith(joined);
  }
  llvm::BitVector erase(func.getNumArguments());
  for (unsigned j = 0; j < numWeights; ++j)
    erase.set(argOf(j).getArgNumber());
  repeat.erase();
  (void)func.eraseArguments(erase);
}

} // namespace

llvm::Error mlir::tfm::splitRepeatLayers(func::FuncOp func,
                                         ArrayRef<int64_t> boundaries) {
  // Each scan and the cuts inside it, all checked before anything changes.
  SmallVector<std::pair<RepeatOp, SmallVector<int64_t>>> work;
  for (RepeatOp repeat : func.front().getOps<RepeatOp>()) {
    int64_t first = repeat.getFirstLayer().value_or(0);
    int64_t numLayers = repeat.getNumLayers();
    std::set<int64_t> cuts;
    for (int64_t b : boundaries)
      if (b > first && b < first + numLayers)
        cuts.insert(b - first);
    if (cuts.empty())
      continue;
    if (std::string why = whyNot(func, repeat); !why.empty())
      return error("cannot split the layers of '" + func.getSymName() +
                   "' at layer " + llvm::Twine(*cuts.begin() + first) + ": " +
                   why);
    work.push_back({repeat, SmallVector<int64_t>(cuts.begin(), cuts.end())});
  }
  for (auto &[repeat, cuts] : work)
    splitOne(func, repeat, cuts);
  return llvm::Error::success();
}

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMSPLITLAYERSPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

namespace {
struct TfmSplitLayersPass : impl::TfmSplitLayersPassBase<TfmSplitLayersPass> {
  using TfmSplitLayersPassBase::TfmSplitLayersPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (llvm::Error e = splitRepeatLayers(
            func, SmallVector<int64_t>(layers.begin(), layers.end()))) {
      func.emitError() << "tfm-split-layers: " << llvm::toString(std::move(e));
      signalPassFailure();
    }
  }
};
} // namespace
} // namespace mlir::tfm
