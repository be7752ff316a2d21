//===- ApplyLora.cpp - LoRA adapters as an IR rewrite ---------------------===//

#include "tfm/Adapters/ApplyLora.h"
#include "tfm/Dialect/Tfm/IR/StackedValues.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Support/Error.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

using namespace mlir;
using namespace mlir::tfm;

std::string mlir::tfm::peftAdapterName(llvm::StringRef module,
                                       llvm::StringRef which) {
  return ("base_model.model." + module + "." + which + ".weight").str();
}

std::string LoraSummary::describe() const {
  std::string ranks;
  for (const auto &[rank, count] : modulesByRank)
    ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
  std::string kinds;
  for (const auto &[kind, counts] : byKind)
    if (counts.first)
      kinds += llvm::formatv("{0}{1} {2}/{3}", kinds.empty() ? "" : ", ", kind,
                             counts.first, counts.second);
  return llvm::formatv("LoRA r={0} on {1} of {2} projections ({3}), {4} "
                       "adapter parameters",
                       ranks, adapted, projections, kinds, adapterParameters);
}

namespace {

/// A parameter argument used only as the weight of y = x·Wᵀ projections,
/// directly or as a tfm.repeat layer slice.
struct Projection {
  BlockArgument arg;
  ParamAttr param;
  /// The HF module of each layer slice (one for an unstacked weight).
  std::vector<std::string> modules;
};

bool isProjectionUse(OpOperand &use) {
  auto mm = dyn_cast<MatmulOp>(use.getOwner());
  return mm && use.getOperandNumber() == 1 &&
         mm.getTranspose() == Transpose::nt;
}

/// The block arguments that stand for stacked input `weight` of `repeat`,
/// one per layer kind that reads it.
SmallVector<BlockArgument> sliceArgs(RepeatOp repeat, unsigned weight) {
  SmallVector<BlockArgument> out;
  unsigned numCarried = repeat.getInits().size();
  for (unsigned k = 0; k < repeat.getKinds().size(); ++k) {
    SmallVector<unsigned> ws = repeat.getWeightsOfKind(k);
    if (auto pos = llvm::find(ws, weight); pos != ws.end())
      out.push_back(repeat.getKinds()[k].front().getArgument(
          numCarried + (pos - ws.begin())));
  }
  return out;
}

/// Whether every use of `arg` is as a projection weight (directly, or a
/// tfm.repeat slice of it that is).
bool onlyProjections(BlockArgument arg) {
  if (arg.use_empty())
    return false;
  for (OpOperand &use : arg.getUses()) {
    if (isProjectionUse(use))
      continue;
    auto repeat = dyn_cast<RepeatOp>(use.getOwner());
    unsigned numCarried = repeat ? repeat.getInits().size() : 0;
    if (!repeat || use.getOperandNumber() < numCarried)
      return false;
    for (BlockArgument slice :
         sliceArgs(repeat, use.getOperandNumber() - numCarried))
      if (slice.use_empty() || !llvm::all_of(slice.getUses(), [](OpOperand &u) {
            return isProjectionUse(u);
          }))
        return false;
  }
  return true;
}

/// The HF module of each of `slices` layer slices of a tensor named by
/// `templ` (its {layer} template when `param` is stacked).
std::vector<std::string> moduleNames(ParamAttr param, llvm::StringRef templ,
                                     int64_t slices) {
  std::vector<std::string> out;
  for (int64_t l = 0; l < slices; ++l) {
    std::string n = param.getStacked()
                        ? substituteLayer(templ, param.hfLayer(l))
                        : templ.str();
    llvm::StringRef m(n);
    m.consume_back(".weight");
    out.push_back(m.str());
  }
  return out;
}

/// y = x·Wᵀ  ->  y + s·(x·Aᵀ)·Bᵀ, after `mm`.
void addBranch(MatmulOp mm, Value a, Value b, double scaling) {
  OpBuilder builder(mm->getContext());
  builder.setInsertionPointAfter(mm);
  Location loc = mm.getLoc();
  auto xType = cast<RankedTensorType>(mm.getX().getType());
  auto aType = cast<RankedTensorType>(a.getType());
  SmallVector<int64_t> xaShape(xType.getShape());
  xaShape.back() = aType.getDimSize(0);
  auto nt = TransposeAttr::get(builder.getContext(), Transpose::nt);
  Value xa = MatmulOp::create(
      builder, loc, RankedTensorType::get(xaShape, xType.getElementType()),
      mm.getX(), a, Value(), nt);
  Value delta =
      MatmulOp::create(builder, loc, mm.getType(), xa, b, Value(), nt);
  Value scaled =
      ScaleOp::create(builder, loc, delta, builder.getF64FloatAttr(scaling));
  auto sum = AddOp::create(builder, loc, mm.getResult(), scaled);
  mm.getResult().replaceAllUsesExcept(sum, sum);
}

} // namespace

llvm::Expected<LoraSummary> mlir::tfm::applyLora(func::FuncOp forward,
                                                 const LoraConfig &config) {
  if (llvm::Error e = checkLoraConfig(config))
    return std::move(e);
  if (!config.targetParameters.empty())
    return makeError("LoRA target_parameters (stacked expert weights) are "
                     "not supported yet: " +
                     config.targetParameters.front());
  MLIRContext *ctx = forward.getContext();
  LoraSummary summary;
  summary.config = config;

  // The projections, and every other parameter's module (to name a target
  // that is not a projection).
  std::vector<Projection> projections;
  // Module, why it cannot be adapted, and whether all-linear must refuse
  // it too (a projection HF holds as nn.Linear that tfm cannot adapt yet).
  struct Other {
    std::string module, why;
    bool linearInHF;
  };
  std::vector<Other> others;
  for (BlockArgument arg : forward.getArguments()) {
    auto param =
        forward.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
    if (!param || param.getBuffer())
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    int64_t slices = param.getStacked() ? type.getDimSize(0) : 1;
    std::vector<std::string> modules =
        moduleNames(param, param.getName(), slices);
    bool linear = param.getMapping() == ParamMapping::direct &&
                  param.getName().ends_with(".weight") &&
                  type.getRank() == (param.getStacked() ? 3 : 2) &&
                  param.getKind() != "embedding" && onlyProjections(arg);
    if (!linear) {
      bool packed = param.getMapping() == ParamMapping::split ||
                    param.getMapping() == ParamMapping::fuse;
      std::vector<std::string> names = modules;
      if (packed && param.getSources()) {
        // The HF modules are the sources.
        names.clear();
        for (Attribute a : param.getSources())
          llvm::append_range(
              names,
              moduleNames(param, cast<StringAttr>(a).getValue(), slices));
      }
      for (const std::string &m : names)
        others.push_back(
            {m,
             param.getKind() == "embedding"
                 ? "embeddings are not supported as LoRA targets"
             : packed ? "packed projections (one HF module held as several "
                        "tfm parameters, or several as one) are not "
                        "supported as LoRA targets yet"
                      : "not a linear projection tfm can adapt",
             packed && onlyProjections(arg)});
      continue;
    }
    projections.push_back({arg, param, std::move(modules)});
  }

  // Which projections are targeted; every target must select something.
  std::vector<const Projection *> targeted;
  std::vector<bool> entryUsed(config.targetModules.size(), false);
  for (const Projection &p : projections) {
    bool head = p.param.getKind() == "lm_head";
    int64_t matched = 0;
    for (const std::string &m : p.modules) {
      if (head && config.allLinear)
        continue; // all-linear leaves the output head, as PEFT does
      if (!config.targets(m))
        continue;
      ++matched;
      for (auto [i, entry] : llvm::enumerate(config.targetModules))
        if (moduleMatchesName(m, entry))
          entryUsed[i] = true;
    }
    std::string kind = p.param.getKind().str();
    summary.byKind[kind].second += p.modules.size();
    summary.projections += p.modules.size();
    if (matched == 0)
      continue;
    if (head)
      return makeError("LoRA target '" + p.modules.front() +
                       "': the output head is not supported as a LoRA target");
    if (matched != int64_t(p.modules.size()))
      return makeError(llvm::formatv(
          "LoRA targets select {0} of the {1} layers of '{2}' (e.g. '{3}'): "
          "adapting only some layers of a stacked weight is not supported "
          "yet; target every layer",
          matched, p.modules.size(), p.param.getName(), p.modules.front()));
    int64_t rank = config.rankOf(p.modules.front());
    double scale = config.scalingOf(p.modules.front());
    for (const std::string &m : p.modules)
      if (config.rankOf(m) != rank || config.scalingOf(m) != scale)
        return makeError("rank_pattern/alpha_pattern give the layers of '" +
                         p.param.getName().str() +
                         "' different ranks or scales (e.g. '" + m +
                         "'): not supported yet");
    targeted.push_back(&p);
    summary.byKind[kind].first += p.modules.size();
  }
  for (const Other &o : others)
    if (config.targets(o.module) && (!config.allLinear || o.linearInHF))
      return makeError("LoRA target '" + o.module + "': " + o.why);
  for (auto [i, used] : llvm::enumerate(entryUsed))
    if (!used)
      return makeError("LoRA target_modules entry '" + config.targetModules[i] +
                       "' matches no linear projection of the model");
  if (targeted.empty())
    return makeError(
        config.targetRegex
            ? "LoRA target_modules '" + *config.targetRegex +
                  "' matches no linear projection of the model"
            : std::string("LoRA targets match no linear projection of the "
                          "model"));

  // Everything that is not an adapter is frozen.
  for (BlockArgument arg : forward.getArguments())
    if (auto param = forward.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                         kParamAttrName))
      forward.setArgAttr(arg.getArgNumber(), kParamAttrName, param.asFrozen());

  // The adapters: new arguments, then a branch at each use.
  Location loc = forward.getLoc();
  std::set<std::string> leaves;
  for (const Projection *p : targeted) {
    llvm::StringRef templ = p->param.getName();
    templ.consume_back(".weight");
    int64_t rank = config.rankOf(p->modules.front());
    double scale = config.scalingOf(p->modules.front());
    auto wType = cast<RankedTensorType>(p->arg.getType());
    bool stacked = p->param.getStacked();
    ArrayRef<int64_t> shape = wType.getShape();
    int64_t out = shape[shape.size() - 2], in = shape.back();
    auto stackedShape = [&](int64_t rows, int64_t cols) {
      SmallVector<int64_t> s;
      if (stacked)
        s.push_back(shape.front());
      s.append({rows, cols});
      return RankedTensorType::get(s, wType.getElementType());
    };
    Value adapter[2];
    const char *which[2] = {"lora_A", "lora_B"};
    RankedTensorType types[2] = {stackedShape(rank, in),
                                 stackedShape(out, rank)};
    for (int i = 0; i < 2; ++i) {
      auto param = ParamAttr::get(
          ctx, peftAdapterName(templ, which[i]),
          i == 0 ? kLoraAKind : kLoraBKind, ParamMapping::direct, ArrayAttr(),
          0, 0, stacked, ArrayAttr(), /*frozen=*/false, p->param.getLayers(),
          /*buffer=*/false);
      unsigned index = forward.getNumArguments();
      if (failed(forward.insertArgument(
              index, types[i],
              DictionaryAttr::get(
                  ctx, {NamedAttribute(StringAttr::get(ctx, kParamAttrName),
                                       param)}),
              loc)))
        return makeError("cannot add the LoRA arguments of " + templ.str());
      adapter[i] = forward.getArgument(index);
      summary.adapterParameters += types[i].getNumElements();
    }
    summary.adapted += p->modules.size();
    summary.modulesByRank[rank] += p->modules.size();
    leaves.insert(templ.rsplit('.').second.str());

    for (OpOperand &use : llvm::make_early_inc_range(p->arg.getUses())) {
      if (auto mm = dyn_cast<MatmulOp>(use.getOwner())) {
        addBranch(mm, adapter[0], adapter[1], scale);
        continue;
      }
      // A tfm.repeat weight: A and B become stacked inputs of the same
      // layer kinds, sliced per layer beside it.
      auto repeat = cast<RepeatOp>(use.getOwner());
      unsigned numCarried = repeat.getInits().size();
      unsigned w = use.getOperandNumber() - numCarried;
      SmallVector<DenseI64ArrayAttr> sets;
      for (unsigned j = 0; j < repeat.getWeights().size(); ++j)
        sets.push_back(repeat.getWeightKindSet(j));
      DenseI64ArrayAttr set = sets[w];
      SmallVector<BlockArgument> slices = sliceArgs(repeat, w);
      repeat.getWeightsMutable().append(ValueRange{adapter[0], adapter[1]});
      sets.append({set, set});
      repeat.setWeightKindsAttr(
          kindSetsAttr(ctx, sets, repeat.getKinds().size()));
      for (BlockArgument slice : slices) {
        Block *body = slice.getOwner();
        // A repeat's weights are stacked: each layer reads one slice.
        Value a = body->addArgument(
            types[0].clone(types[0].getShape().drop_front()), loc);
        Value b = body->addArgument(
            types[1].clone(types[1].getShape().drop_front()), loc);
        for (OpOperand &u : llvm::make_early_inc_range(slice.getUses()))
          addBranch(cast<MatmulOp>(u.getOwner()), a, b, scale);
      }
    }
  }
  summary.leafNames.assign(leaves.begin(), leaves.end());
  return summary;
}
