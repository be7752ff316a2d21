//===- WeightPacking.cpp - fuse stacked parameters of a layer scan --------===//

#include "WeightPacking.h"

#include "llvm/ADT/BitVector.h"

using namespace mlir;
using namespace mlir::tfm;

std::optional<unsigned> mlir::tfm::stackedInputOf(RepeatOp repeat, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return std::nullopt;
  Region *region = arg.getOwner()->getParent();
  if (region->getParentOp() != repeat.getOperation())
    return std::nullopt;
  unsigned inits = repeat.getInits().size();
  if (arg.getArgNumber() < inits)
    return std::nullopt;
  return repeat.getWeightsOfKind(
      region->getRegionNumber())[arg.getArgNumber() - inits];
}

BlockArgument mlir::tfm::blockArgOf(RepeatOp repeat, unsigned weight,
                                    unsigned kind) {
  SmallVector<unsigned> ws = repeat.getWeightsOfKind(kind);
  auto it = llvm::find(ws, weight);
  if (it == ws.end())
    return {};
  return repeat.getKinds()[kind].front().getArgument(repeat.getInits().size() +
                                                     (it - ws.begin()));
}

/// The function argument stacked input `weight` is, with its parameter.
static std::pair<BlockArgument, ParamAttr> paramOf(RepeatOp repeat,
                                                   unsigned weight) {
  auto func = repeat->getParentOfType<func::FuncOp>();
  auto arg = dyn_cast<BlockArgument>(repeat.getWeights()[weight]);
  if (!func || !arg || arg.getOwner() != &func.getBody().front())
    return {};
  return {arg,
          func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName)};
}

bool mlir::tfm::canPackStackedWeights(RepeatOp repeat,
                                      ArrayRef<unsigned> weights) {
  if (weights.size() < 2)
    return false;
  RankedTensorType first;
  ParamAttr firstParam;
  for (unsigned w : weights) {
    if (llvm::count(weights, w) != 1)
      return false;
    auto [arg, param] = paramOf(repeat, w);
    if (!param || !arg.hasOneUse() || !param.getStacked() ||
        param.getMapping() != ParamMapping::direct || param.getSources() ||
        param.getTied() || param.getBuffer())
      return false;
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getRank() < 2)
      return false;
    if (!first) {
      first = type;
      firstParam = param;
      continue;
    }
    // Frozen and trained weights are packed apart (LoRA's frozen base and
    // its trained A of the same input), so the packed one is either.
    if (type.getElementType() != first.getElementType() ||
        type.getRank() != first.getRank() ||
        param.getFrozen() != firstParam.getFrozen() ||
        param.getLayers() != firstParam.getLayers() ||
        repeat.getWeightKindSet(w) != repeat.getWeightKindSet(weights[0]))
      return false;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != 1 && type.getDimSize(d) != first.getDimSize(d))
        return false;
  }
  return true;
}

std::string mlir::tfm::fusedName(ArrayRef<StringRef> names) {
  size_t prefix = names[0].size(), suffix = names[0].size();
  for (StringRef n : names.drop_front()) {
    size_t p = 0;
    while (p < prefix && p < n.size() && n[p] == names[0][p])
      ++p;
    prefix = p;
    size_t s = 0;
    while (s < suffix && s < n.size() &&
           n[n.size() - 1 - s] == names[0][names[0].size() - 1 - s])
      ++s;
    suffix = s;
  }
  // Keep whole name components ("q_proj", not "q" + "_proj"): the middles
  // start after a '.' and the suffix at a '.' or '_'.
  while (prefix > 0 && names[0][prefix - 1] != '.')
    --prefix;
  std::string out = names[0].take_front(prefix).str() + "{";
  for (auto [i, n] : llvm::enumerate(names)) {
    size_t end = n.size() - std::min(suffix, n.size() - prefix);
    if (i)
      out += ",";
    out += n.slice(prefix, end).str();
  }
  return out + "}" +
         names[0].take_back(std::min(suffix, names[0].size() - prefix)).str();
}

void mlir::tfm::packStackedWeights(
    RepeatOp repeat, ArrayRef<WeightGroup> groups,
    function_ref<void(unsigned, ArrayRef<Value>)> rewrite) {
  auto func = repeat->getParentOfType<func::FuncOp>();
  MLIRContext *ctx = repeat.getContext();
  Builder b(ctx);
  Location loc = repeat.getLoc();
  unsigned oldWeights = repeat.getWeights().size();
  std::optional<ArrayAttr> weightKinds = repeat.getWeightKinds();
  SmallVector<Attribute> kindSets;
  if (weightKinds)
    kindSets.assign(weightKinds->begin(), weightKinds->end());

  // New function arguments and repeat operands, one per group.
  for (const WeightGroup &g : groups) {
    SmallVector<StringRef> names;
    SmallVector<Attribute> sources;
    int64_t rows = 0;
    auto [arg0, param0] = paramOf(repeat, g.weights[0]);
    for (unsigned w : g.weights) {
      auto [arg, param] = paramOf(repeat, w);
      names.push_back(param.getName());
      sources.push_back(b.getStringAttr(param.getName()));
      rows += cast<RankedTensorType>(arg.getType()).getDimSize(1);
    }
    auto t0 = cast<RankedTensorType>(arg0.getType());
    SmallVector<int64_t> shape(t0.getShape());
    shape[1] = rows;
    auto type = RankedTensorType::get(shape, t0.getElementType());
    auto param = ParamAttr::get(
        ctx, fusedName(names), g.kind, ParamMapping::fuse,
        b.getArrayAttr(sources), /*dim=*/0, /*offset=*/0, /*stacked=*/true,
        ArrayAttr(), param0.getFrozen(), param0.getLayers(), /*buffer=*/false);
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(
        index, type, b.getDictionaryAttr(b.getNamedAttr(kParamAttrName, param)),
        loc);
    repeat.getWeightsMutable().append(func.getArgument(index));
    if (weightKinds)
      kindSets.push_back((*weightKinds)[g.weights[0]]);
  }
  if (weightKinds)
    repeat.setWeightKindsAttr(b.getArrayAttr(kindSets));

  // New block arguments (the new weights are last, so their arguments are
  // appended), then each body's rewrite.
  for (Region &region : repeat.getKinds()) {
    unsigned kind = region.getRegionNumber();
    if (!repeat.weightCoversKind(groups[0].weights[0], kind))
      continue;
    SmallVector<Value> packed;
    for (unsigned i = 0; i < groups.size(); ++i) {
      auto t =
          cast<RankedTensorType>(repeat.getWeights()[oldWeights + i].getType());
      packed.push_back(region.front().addArgument(
          RankedTensorType::get(t.getShape().drop_front(), t.getElementType()),
          loc));
    }
    rewrite(kind, packed);
  }

  // Erase the old weights: block arguments, operands, kind sets, arguments.
  SmallVector<unsigned> erased;
  for (const WeightGroup &g : groups)
    erased.append(g.weights.begin(), g.weights.end());
  llvm::sort(erased, std::greater<unsigned>());
  for (Region &region : repeat.getKinds()) {
    llvm::BitVector args(region.front().getNumArguments());
    for (unsigned w : erased)
      if (BlockArgument a = blockArgOf(repeat, w, region.getRegionNumber()))
        args.set(a.getArgNumber());
    region.front().eraseArguments(args);
  }
  llvm::BitVector funcArgs(func.getNumArguments());
  for (unsigned w : erased) {
    funcArgs.set(cast<BlockArgument>(repeat.getWeights()[w]).getArgNumber());
    if (weightKinds)
      kindSets.erase(kindSets.begin() + w);
  }
  for (unsigned w : erased)
    repeat.getWeightsMutable().erase(w);
  if (weightKinds)
    repeat.setWeightKindsAttr(b.getArrayAttr(kindSets));
  (void)func.eraseArguments(funcArgs);
}

MatmulOp mlir::tfm::soleMatmulOf(Value w, bool asBias) {
  if (!w || !w.hasOneUse())
    return {};
  auto mm = dyn_cast<MatmulOp>(*w.getUsers().begin());
  if (!mm || mm.getTranspose() != Transpose::nt ||
      (asBias ? mm.getBias() : mm.getW()) != w)
    return {};
  return mm;
}

Value mlir::tfm::buildPackedMatmul(RewriterBase &rewriter, Value x,
                                   Value weight, Value bias,
                                   ArrayRef<MatmulOp> parts) {
  MatmulOp head = parts[0];
  Operation *before = head;
  for (MatmulOp mm : parts)
    if (mm->isBeforeInBlock(before))
      before = mm;
  auto first = cast<RankedTensorType>(head.getType());
  int64_t n = 0;
  for (MatmulOp mm : parts)
    n += cast<RankedTensorType>(mm.getType()).getShape().back();
  SmallVector<int64_t> shape(first.getShape());
  shape.back() = n;
  rewriter.setInsertionPoint(before);
  return MatmulOp::create(rewriter, head.getLoc(),
                          RankedTensorType::get(shape, first.getElementType()),
                          x, weight, bias, head.getTransposeAttr());
}
