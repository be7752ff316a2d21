//===- ApplyLora.cpp - LoRA adapters as an IR rewrite ---------------------===//

#include "tfm/Adapters/ApplyLora.h"
#include "tfm/Adapters/ExpertTargetNames.h"
#include "tfm/Dialect/Tfm/IR/StackedValues.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/SplitLayers.h"
#include "tfm/Support/Error.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
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

/// How LoRA adapts a weight.
enum class Form {
  /// y = x·Wᵀ (PEFT's lora.Linear, or a ParamWrapper on a 2-D weight).
  Dense,
  /// Grouped expert GEMMs on a stacked [E, out, in] (or [E, in, out])
  /// weight (PEFT's ParamWrapper on a 3-D parameter).
  Experts,
};

/// A parameter argument LoRA can adapt: used only as the weight of
/// projections of one form, directly or as a tfm.repeat layer slice.
struct Candidate {
  BlockArgument arg;
  ParamAttr param;
  Form form = Form::Dense;
  /// Experts: the weight is [E, in, out] (x·W, gpt-oss).
  bool transposed = false;
  /// Per layer slice: the HF tensor name and its HF module.
  std::vector<std::string> keys, modules;
  /// Whether transformers holds it as nn.Linear (what all-linear selects):
  /// not the output head, not a router (its own module class in
  /// transformers 5), not a stacked expert weight.
  bool linearInHF = false;
};

/// A candidate chosen for an adapter.
struct Target {
  const Candidate *candidate;
  /// Selected by target_parameters (PEFT's ParamWrapper), not
  /// target_modules.
  bool byParameter;
  int64_t rank;
  double scale;
  /// Per slice, the module PEFT names the adapter under (with a
  /// `.base_layer` per later-wrapped parameter of the same module).
  std::vector<std::string> adapterModules;
};

bool isProjectionUse(OpOperand &use) {
  auto mm = dyn_cast<MatmulOp>(use.getOwner());
  return mm && use.getOperandNumber() == 1 &&
         mm.getTranspose() == Transpose::nt;
}

bool isExpertUse(OpOperand &use) {
  return isa<MoeGroupedMatmulOp>(use.getOwner()) && use.getOperandNumber() == 1;
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

/// The uses of `arg` that compute with it: its own, or those of its
/// tfm.repeat slices. False when it has none or is used otherwise.
bool computeUses(BlockArgument arg, SmallVectorImpl<OpOperand *> &uses) {
  for (OpOperand &use : arg.getUses()) {
    auto repeat = dyn_cast<RepeatOp>(use.getOwner());
    unsigned numCarried = repeat ? repeat.getInits().size() : 0;
    if (!repeat) {
      uses.push_back(&use);
      continue;
    }
    if (use.getOperandNumber() < numCarried)
      return false;
    for (BlockArgument slice :
         sliceArgs(repeat, use.getOperandNumber() - numCarried)) {
      if (slice.use_empty())
        return false;
      for (OpOperand &u : slice.getUses())
        uses.push_back(&u);
    }
  }
  return !uses.empty();
}

bool onlyUsedAs(BlockArgument arg, bool (*pred)(OpOperand &)) {
  SmallVector<OpOperand *> uses;
  return computeUses(arg, uses) &&
         llvm::all_of(uses, [&](OpOperand *u) { return pred(*u); });
}

/// The HF name of each of `slices` layer slices of a tensor named by
/// `templ` (its {layer} template when `param` is stacked).
std::vector<std::string> layerNames(ParamAttr param, llvm::StringRef templ,
                                    int64_t slices) {
  std::vector<std::string> out;
  for (int64_t l = 0; l < slices; ++l)
    out.push_back(param.getStacked() ? substituteLayer(templ, param.hfLayer(l))
                                     : templ.str());
  return out;
}

std::string moduleOf(llvm::StringRef key) {
  return key.rsplit('.').first.str();
}

/// PEFT refuses these modules of Mamba-based models
/// (_check_lora_target_modules_mamba).
bool isMambaModel(llvm::StringRef modelType) {
  return llvm::is_contained(
      {"falcon_h1", "mamba", "mamba2", "falcon_mamba", "nemotron_h"},
      modelType);
}
bool isMambaRefused(llvm::StringRef module) {
  std::string leaf = leafName(module);
  return leaf == "out_proj" || leaf == "conv1d";
}

/// y + delta after `op`, replacing y's other uses.
void addDelta(Operation *op, Value delta, OpBuilder &builder) {
  Value y = op->getResult(0);
  auto sum = AddOp::create(builder, op->getLoc(), y, delta);
  y.replaceAllUsesExcept(sum, sum);
}

/// s·xa: the scale goes on the r-wide x·Aᵀ rather than on the out-wide
/// result, the same product for r/out of the traffic (PEFT scales the
/// result; the two differ by rounding).
Value scaled(Value xa, double scaling, OpBuilder &builder) {
  return ScaleOp::create(builder, xa.getLoc(), xa,
                         builder.getF64FloatAttr(scaling));
}

/// y = x·Wᵀ  ->  y + s·(x·Aᵀ)·Bᵀ, after `mm`.
void addDenseBranch(MatmulOp mm, Value a, Value b, double scaling) {
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
  Value delta = MatmulOp::create(builder, loc, mm.getType(),
                                 scaled(xa, scaling, builder), b, Value(), nt);
  addDelta(mm, delta, builder);
}

/// The grouped form on the same routing: y_e = x_e·W_e (+ bias) becomes
/// y_e + s·(x_e·A_eᵀ)·B_eᵀ with A [E, r, in], B [E, out, r]; W_e + B_e·A_e
/// is never formed.
void addExpertBranch(MoeGroupedMatmulOp gm, Value a, Value b, double scaling) {
  OpBuilder builder(gm->getContext());
  builder.setInsertionPointAfter(gm);
  Location loc = gm.getLoc();
  auto xType = cast<RankedTensorType>(gm.getX().getType());
  auto aType = cast<RankedTensorType>(a.getType());
  SmallVector<int64_t> xaShape(xType.getShape());
  xaShape.back() = aType.getDimSize(1);
  auto nt = TransposeAttr::get(builder.getContext(), Transpose::nt);
  Value xa = MoeGroupedMatmulOp::create(
      builder, loc, RankedTensorType::get(xaShape, xType.getElementType()),
      gm.getX(), a, gm.getOffsets(), Value(), nt);
  Value delta = MoeGroupedMatmulOp::create(builder, loc, gm.getType(),
                                           scaled(xa, scaling, builder), b,
                                           gm.getOffsets(), Value(), nt);
  addDelta(gm, delta, builder);
}

/// Why a parameter that is not a candidate cannot be adapted, and whether
/// all-linear must refuse it too (HF holds it as nn.Linear).
struct Other {
  std::string module, key, why;
  bool linearInHF;
};

/// The parameters of `forward`, sorted into candidates and the rest.
void collect(func::FuncOp forward, llvm::StringRef modelType,
             std::vector<Candidate> &candidates, std::vector<Other> &others) {
  for (BlockArgument arg : forward.getArguments()) {
    auto param =
        forward.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
    if (!param || param.getBuffer())
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    int64_t sliceRank = type.getRank() - (param.getStacked() ? 1 : 0);
    int64_t slices = param.getStacked() ? type.getDimSize(0) : 1;
    std::vector<std::string> keys = layerNames(param, param.getName(), slices);
    bool plain = param.getMapping() == ParamMapping::direct;
    Candidate c;
    c.arg = arg;
    c.param = param;
    c.form = Form::Dense;
    c.keys = keys;
    if (plain && sliceRank == 2 && param.getName().ends_with(".weight") &&
        param.getKind() != "embedding" && onlyUsedAs(arg, isProjectionUse)) {
      for (const std::string &k : keys)
        c.modules.push_back(moduleOf(k));
      c.linearInHF =
          param.getKind() != "lm_head" && param.getKind() != "moe_router";
      candidates.push_back(std::move(c));
      continue;
    }
    if ((plain || param.getMapping() == ParamMapping::stacked_experts) &&
        sliceRank == 3 && onlyUsedAs(arg, isExpertUse)) {
      SmallVector<OpOperand *> uses;
      computeUses(arg, uses);
      auto transposeOf = [](OpOperand *u) {
        return cast<MoeGroupedMatmulOp>(u->getOwner()).getTranspose();
      };
      Transpose t = transposeOf(uses.front());
      if (llvm::all_of(uses,
                       [&](OpOperand *u) { return transposeOf(u) == t; })) {
        c.form = Form::Experts;
        c.transposed = t == Transpose::nn;
        for (const std::string &k : keys)
          c.modules.push_back(moduleOf(k));
        candidates.push_back(std::move(c));
        continue;
      }
    }
    bool packed = param.getMapping() == ParamMapping::split ||
                  param.getMapping() == ParamMapping::fuse;
    std::vector<std::string> names = keys;
    if (packed && param.getSources()) {
      // The HF modules are the sources.
      names.clear();
      for (Attribute a : param.getSources())
        llvm::append_range(
            names, layerNames(param, cast<StringAttr>(a).getValue(), slices));
    }
    for (const std::string &key : names) {
      std::string module =
          llvm::StringRef(key).ends_with(".weight") ? moduleOf(key) : key;
      std::string why =
          param.getKind() == "embedding"
              ? "embeddings are not supported as LoRA targets"
          : isMambaModel(modelType) && isMambaRefused(module)
              ? "Mamba's out_proj and conv1d are not LoRA targets (PEFT "
                "refuses them)"
          : packed ? "packed projections (one HF module held as several "
                     "tfm parameters, or several as one) are not supported "
                     "as LoRA targets yet"
                   : "not a linear projection tfm can adapt";
      others.push_back(
          {module, key, why, packed && onlyUsedAs(arg, isProjectionUse)});
    }
  }
}

/// The names PEFT resolves string target_modules against.
ModelNames modelNames(const std::vector<Candidate> &candidates,
                      const std::vector<Other> &others) {
  ModelNames names;
  llvm::StringSet<> modules;
  auto addModules = [&](llvm::StringRef key) {
    for (size_t dot = key.find('.'); dot != llvm::StringRef::npos;
         dot = key.find('.', dot + 1))
      if (modules.insert(key.take_front(dot)).second)
        names.modules.push_back(key.take_front(dot).str());
  };
  for (const Candidate &c : candidates)
    for (auto [key, module] : llvm::zip(c.keys, c.modules)) {
      if (c.linearInHF)
        names.linearModules.push_back(module);
      names.parameters.push_back(key);
      addModules(key);
    }
  for (const Other &o : others) {
    if (o.linearInHF)
      names.linearModules.push_back(o.module);
    names.parameters.push_back(o.key);
    addModules(o.key);
  }
  return names;
}

} // namespace

llvm::Expected<LoraSummary> mlir::tfm::applyLora(func::FuncOp forward,
                                                 const LoraConfig &given) {
  if (llvm::Error e = checkLoraConfig(given))
    return std::move(e);
  MLIRContext *ctx = forward.getContext();
  std::string modelType;
  if (auto module = forward->getParentOfType<ModuleOp>())
    if (auto hf = module->getAttrOfType<DictionaryAttr>("tfm.hf"))
      if (auto t = hf.getAs<StringAttr>("model_type"))
        modelType = t.str();

  std::vector<Candidate> candidates;
  std::vector<Other> others;
  collect(forward, modelType, candidates, others);

  LoraSummary summary;
  summary.config = given;
  LoraConfig &config = summary.config;
  if (llvm::Error e = convertExpertTargetNames(config, modelType,
                                               modelNames(candidates, others)))
    return std::move(e);
  bool mamba = isMambaModel(modelType);

  // Targets that select some layers of a stacked weight, or give them
  // different ranks or scales, get scans of their own first
  // (tfm-split-layers), so that each weight is adapted whole.
  auto adaptationAt = [&](const Candidate &c, size_t i) {
    bool byModule =
        c.form == Form::Dense && config.targets(c.modules[i]) &&
        !(config.allLinear && !c.linearInHF) &&
        !(config.allLinear && mamba && isMambaRefused(c.modules[i]));
    bool byParameter = config.targetsParameter(c.keys[i]);
    const std::string &key = byParameter ? c.keys[i] : c.modules[i];
    return std::make_tuple(
        byModule, byParameter, byModule || byParameter ? config.rankOf(key) : 0,
        byModule || byParameter ? config.scalingOf(key) : 0.0);
  };
  std::set<int64_t> cuts;
  for (const Candidate &c : candidates)
    for (size_t i = 1; i < c.keys.size(); ++i)
      if (adaptationAt(c, i) != adaptationAt(c, i - 1))
        cuts.insert(c.param.hfLayer(i));
  if (!cuts.empty()) {
    if (llvm::Error e = splitRepeatLayers(
            forward, std::vector<int64_t>(cuts.begin(), cuts.end())))
      return makeError("LoRA targets some layers of a stacked weight: " +
                       llvm::toString(std::move(e)));
    candidates.clear();
    others.clear();
    collect(forward, modelType, candidates, others);
  }

  // Which candidates are targeted, and how; every entry must select
  // something.
  std::vector<Target> targets;
  std::vector<bool> moduleEntryUsed(config.targetModules.size(), false),
      parameterEntryUsed(config.targetParameters.size(), false);
  for (const Candidate &c : candidates) {
    bool head = c.param.getKind() == "lm_head";
    int64_t byModule = 0, byParameter = 0;
    for (size_t slice = 0; slice < c.keys.size(); ++slice) {
      auto [module, parameter, rank, scale] = adaptationAt(c, slice);
      if (module) {
        ++byModule;
        for (auto [i, entry] : llvm::enumerate(config.targetModules))
          if (moduleMatchesName(c.modules[slice], entry))
            moduleEntryUsed[i] = true;
      }
      if (parameter) {
        ++byParameter;
        for (auto [i, entry] : llvm::enumerate(config.targetParameters))
          if (moduleMatchesName(c.keys[slice], entry))
            parameterEntryUsed[i] = true;
      }
    }
    std::string kind = c.param.getKind().str();
    summary.byKind[kind].second += c.keys.size();
    summary.projections += c.keys.size();
    if (byModule == 0 && byParameter == 0)
      continue;
    if (byModule && byParameter)
      return makeError("LoRA targets '" + c.modules.front() +
                       "' through both target_modules and target_parameters");
    if (head)
      return makeError("LoRA target '" + c.modules.front() +
                       "': the output head is not supported as a LoRA target");
    if (mamba && byModule && isMambaRefused(c.modules.front()))
      return makeError("LoRA target '" + c.modules.front() +
                       "': Mamba's out_proj and conv1d are not LoRA targets "
                       "(PEFT refuses them)");
    // Modules are named by their module, parameter targets by their full
    // name (PEFT's current_key, which rank_pattern / alpha_pattern see).
    const std::vector<std::string> &patternKeys =
        byParameter ? c.keys : c.modules;
    // Split above: every layer of the weight is adapted alike.
    assert(byModule + byParameter == int64_t(c.keys.size()));
    int64_t rank = config.rankOf(patternKeys.front());
    double scale = config.scalingOf(patternKeys.front());
    targets.push_back({&c, byParameter > 0, rank, scale, c.modules});
    summary.byKind[kind].first += c.keys.size();
  }
  for (const Other &o : others) {
    if (config.targetsParameter(o.key))
      return makeError("LoRA target_parameters select '" + o.key +
                       "', which is not a weight tfm can adapt (a "
                       "projection's or the stacked experts')");
    bool allLinearSkips =
        config.allLinear &&
        (!o.linearInHF || (mamba && isMambaRefused(o.module)));
    if (config.targets(o.module) && !allLinearSkips)
      return makeError("LoRA target '" + o.module + "': " + o.why);
  }
  for (auto [i, used] : llvm::enumerate(moduleEntryUsed))
    if (!used)
      return makeError("LoRA target_modules entry '" + config.targetModules[i] +
                       "' matches no linear projection of the model");
  for (auto [i, used] : llvm::enumerate(parameterEntryUsed))
    if (!used)
      return makeError("LoRA target_parameters entry '" +
                       config.targetParameters[i] +
                       "' matches no parameter of the model");
  if (targets.empty())
    return makeError(
        config.targetRegex
            ? "LoRA target_modules '" + *config.targetRegex +
                  "' matches no linear projection of the model"
            : std::string("LoRA targets match no linear projection of the "
                          "model"));

  // PEFT wraps the targeted parameters of one module in the order the
  // module registers them (as tfm's arguments list them), the first
  // innermost: each is named under one `.base_layer` per later one.
  for (Target &t : targets) {
    if (!t.byParameter)
      continue;
    int64_t later = llvm::count_if(targets, [&](const Target &o) {
      return o.byParameter && o.candidate->modules == t.candidate->modules &&
             o.candidate->arg.getArgNumber() > t.candidate->arg.getArgNumber();
    });
    for (std::string &m : t.adapterModules)
      for (int64_t i = 0; i < later; ++i)
        m += ".base_layer";
  }
  for (const Target &t : targets)
    for (const Target &o : targets)
      if (t.byParameter != o.byParameter &&
          t.candidate->modules == o.candidate->modules)
        return makeError("LoRA targets module '" +
                         t.candidate->modules.front() +
                         "' through both target_modules and "
                         "target_parameters");

  // Everything that is not an adapter is frozen.
  for (BlockArgument arg : forward.getArguments())
    if (auto param = forward.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                         kParamAttrName))
      forward.setArgAttr(arg.getArgNumber(), kParamAttrName, param.asFrozen());

  // The adapters: new arguments, then a branch at each use.
  Location loc = forward.getLoc();
  std::set<std::string> leaves;
  for (const Target &t : targets) {
    const Candidate &c = *t.candidate;
    bool experts = c.form == Form::Experts;
    bool stacked = c.param.getStacked();
    auto wType = cast<RankedTensorType>(c.arg.getType());
    ArrayRef<int64_t> shape = wType.getShape();
    int64_t rows = shape[shape.size() - 2], cols = shape.back();
    int64_t out = c.transposed ? cols : rows, in = c.transposed ? rows : cols;
    int64_t numExperts = experts ? shape[shape.size() - 3] : 0;
    auto adapterType = [&](int64_t r, int64_t cl) {
      SmallVector<int64_t> s;
      if (stacked)
        s.push_back(shape.front());
      if (experts)
        s.push_back(numExperts);
      s.append({r, cl});
      return RankedTensorType::get(s, wType.getElementType());
    };
    // The adapter's name template: the (nested) module of the weight's.
    std::string templ = moduleOf(c.param.getName());
    if (t.adapterModules.front().size() > c.modules.front().size())
      templ += t.adapterModules.front().substr(c.modules.front().size());
    Value adapter[2];
    const char *which[2] = {"lora_A", "lora_B"};
    RankedTensorType types[2] = {adapterType(t.rank, in),
                                 adapterType(out, t.rank)};
    ParamMapping mappings[2] = {
        experts ? ParamMapping::expert_major : ParamMapping::direct,
        experts ? ParamMapping::rank_major : ParamMapping::direct};
    for (int i = 0; i < 2; ++i) {
      auto param = ParamAttr::get(ctx, peftAdapterName(templ, which[i]),
                                  i == 0 ? kLoraAKind : kLoraBKind, mappings[i],
                                  ArrayAttr(), 0, 0, stacked, ArrayAttr(),
                                  /*frozen=*/false, c.param.getLayers(),
                                  /*buffer=*/false);
      unsigned index = forward.getNumArguments();
      if (failed(forward.insertArgument(
              index, types[i],
              DictionaryAttr::get(
                  ctx, {NamedAttribute(StringAttr::get(ctx, kParamAttrName),
                                       param)}),
              loc)))
        return makeError("cannot add the LoRA arguments of " + templ);
      adapter[i] = forward.getArgument(index);
      summary.adapterParameters += types[i].getNumElements();
      // As the file stores each layer's: A [r, in] / B [out, r]; experts
      // flattened, A expert-major [E·r, in], B rank-major [out, r·E].
      int64_t e = std::max<int64_t>(numExperts, 1);
      std::vector<int64_t> stored = i == 0
                                        ? std::vector<int64_t>{e * t.rank, in}
                                        : std::vector<int64_t>{out, t.rank * e};
      for (int64_t l = 0; l < (stacked ? shape.front() : 1); ++l)
        summary.tensors.push_back(
            {stacked ? param.nameForLayer(l) : param.getName().str(), stored,
             i == 0, experts});
    }
    summary.adapted += c.keys.size();
    summary.modulesByRank[t.rank] += c.keys.size();
    if (!t.byParameter)
      leaves.insert(leafName(templ));
    summary.targets.push_back(
        {stacked ? c.param.hfLayer(0) : -1, c.param.getName().str(),
         peftAdapterName(templ, "lora_A"), peftAdapterName(templ, "lora_B"),
         numExperts, c.transposed, t.rank, t.scale});

    auto branch = [&](Operation *op, Value a, Value b) {
      if (auto mm = dyn_cast<MatmulOp>(op))
        addDenseBranch(mm, a, b, t.scale);
      else
        addExpertBranch(cast<MoeGroupedMatmulOp>(op), a, b, t.scale);
    };
    for (OpOperand &use : llvm::make_early_inc_range(c.arg.getUses())) {
      auto repeat = dyn_cast<RepeatOp>(use.getOwner());
      if (!repeat) {
        branch(use.getOwner(), adapter[0], adapter[1]);
        continue;
      }
      // A tfm.repeat weight: A and B become stacked inputs of the same
      // layer kinds, sliced per layer beside it.
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
          branch(u.getOwner(), a, b);
      }
    }
  }
  summary.leafNames.assign(leaves.begin(), leaves.end());
  return summary;
}
