//===- TrainingStep.cpp - the compiled training step of an HF model -------===//
//
// The step is @forward of the imported model (with --grads, @forward_vjp:
// loss seed last, results logits, loss, then one gradient per parameter
// argument, each marked tfm.grad_of). The imported module is kept unlowered
// beside the compiled one: its weight map binds checkpoints and names
// gradients.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/TrainingStep.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/SplitLayers.h"
#include "tfm/Engine/Differentiate.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/InitAll.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/BFloat16.h"
#include "tfm/Support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <set>

using namespace mlir;
using namespace mlir::tfm;

llvm::StringRef mlir::tfm::precisionName(Precision precision) {
  return precision == Precision::bf16 ? "bf16" : "f32";
}

llvm::Expected<Precision> mlir::tfm::parsePrecision(llvm::StringRef name) {
  for (Precision p : {Precision::f32, Precision::bf16})
    if (name == precisionName(p))
      return p;
  return makeError("--dtype " + name + ": expected f32 or bf16");
}

/// The parameter and activation type of `precision`.
static Type elementTypeOf(MLIRContext &ctx, Precision precision) {
  return precision == Precision::bf16 ? Type(BFloat16Type::get(&ctx))
                                      : Type(Float32Type::get(&ctx));
}

/// Parameters bound from a checkpoint; shared by the steps retarget()
/// makes, so a reference step does not copy them.
struct BoundParameters {
  /// f32 (and, for bf16 steps, rounded to bf16), one per argument of
  /// @forward (empty for the inputs).
  std::vector<std::vector<float>> f32;
  std::vector<std::vector<uint16_t>> bf16;
  /// Kept to name gradients (tied tensors under every stored name).
  Checkpoint checkpoint;
};

struct TrainingStep::State {
  MLIRContext ctx;
  /// The imported model, unlowered: the weight map of @forward.
  OwningOpRef<ModuleOp> imported;
  std::vector<std::vector<int64_t>> argShapes;
  /// Arguments passed as bf16 bits (the others as f32: statistics-typed
  /// parameters such as DeepSeek's correction bias stay f32 in bf16 steps).
  std::vector<bool> argIsBF16;
  std::vector<ParamAttr> argParams;
  std::unique_ptr<CompiledFunction> compiled;
  /// Gradient results of @forward_vjp: (result index, argument index).
  std::vector<std::pair<unsigned, unsigned>> gradResults;
  std::vector<unsigned> gradArguments;
  /// Shared with the steps retarget() made (setParameter updates them all).
  std::shared_ptr<BoundParameters> bound;
  /// With makeParametersResident: each parameter argument where the step
  /// reads it (empty for the token inputs).
  std::vector<DeviceTensor> resident;

  explicit State(DialectRegistry &registry) : ctx(registry) {}
};

TrainingStep::TrainingStep(const ModelSpec &spec, const StepOptions &options)
    : spec(spec), options(options) {}
TrainingStep::~TrainingStep() = default;

/// Every HF tensor name argument `param` binds (each layer of a stacked
/// parameter, each source of a fused or stacked-experts one, tied names
/// last).
static std::vector<std::string> boundNames(ParamAttr param, int64_t layers) {
  // A fused or split parameter's name is tfm's own; its sources are HF's.
  bool packed = param.getMapping() == ParamMapping::fuse ||
                param.getMapping() == ParamMapping::split;
  std::vector<std::string> templates;
  if (!packed)
    templates.push_back(param.getName().str());
  if (param.getMapping() != ParamMapping::direct)
    if (ArrayAttr sources = param.getSources())
      for (Attribute a : sources)
        templates.push_back(cast<StringAttr>(a).str());
  std::vector<std::string> names;
  for (const std::string &t : templates)
    for (int64_t l = 0; l < (param.getStacked() ? layers : 1); ++l)
      names.push_back(param.getStacked() ? substituteLayer(t, param.hfLayer(l))
                                         : t);
  if (ArrayAttr tied = param.getTied())
    for (Attribute a : tied)
      names.push_back(cast<StringAttr>(a).str());
  return names;
}

/// Marks the parameters whose tensors all match `pattern` frozen; one that
/// matches only some of them is an error (a compiled parameter is frozen
/// as a whole).
static llvm::Error freezeParameters(func::FuncOp forward,
                                    llvm::StringRef pattern) {
  llvm::Regex regex(pattern);
  std::string why;
  if (!regex.isValid(why))
    return makeError("--freeze '" + pattern + "': " + why);
  bool any = false;
  for (BlockArgument arg : forward.getArguments()) {
    auto param =
        forward.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
    if (!param || param.getBuffer())
      continue;
    int64_t layers = cast<RankedTensorType>(arg.getType()).getDimSize(0);
    std::vector<std::string> names = boundNames(param, layers);
    // Tied names are other names of the same tensor: they follow it.
    unsigned matched = 0, own = names.size();
    if (ArrayAttr tied = param.getTied())
      own -= tied.size();
    for (unsigned i = 0; i < own; ++i)
      matched += regex.match(names[i]);
    if (matched == 0)
      continue;
    if (matched != own)
      return makeError(
          "--freeze '" + pattern + "' matches some but not all of the " +
          llvm::Twine(own) + " tensors of the compiled parameter '" +
          param.getName() + "' (e.g. '" + names.front() +
          "'): freeze all of them, or run without fusion (--no-fusion) "
          "when it packs tensors you freeze apart");
    any = true;
    forward.setArgAttr(arg.getArgNumber(), kParamAttrName, param.asFrozen());
  }
  if (!any)
    return makeError("--freeze '" + pattern +
                     "' matches no parameter of the model");
  return llvm::Error::success();
}

/// The model layers where `pattern` starts or stops matching the tensors
/// of a stacked parameter of `forward` (layer b: it matches in b and not in
/// the slice before, or the other way round), so that splitting the scans
/// there lets `--freeze` freeze whole parameters.
static std::vector<int64_t> freezeBoundaries(func::FuncOp forward,
                                             const llvm::Regex &regex) {
  std::set<int64_t> cuts;
  for (BlockArgument arg : forward.getArguments()) {
    auto param =
        forward.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
    if (!param || !param.getStacked() || param.getBuffer())
      continue;
    int64_t slices = cast<RankedTensorType>(arg.getType()).getDimSize(0);
    std::optional<bool> previous;
    for (int64_t l = 0; l < slices; ++l) {
      bool matched = regex.match(param.nameForLayer(l));
      if (previous && matched != *previous)
        cuts.insert(param.hfLayer(l));
      previous = matched;
    }
  }
  return {cuts.begin(), cuts.end()};
}

/// The HF-literal model of `spec` (before fusion), with the LoRA adapters
/// of `options` when it has some; `summary` receives what they adapted.
static llvm::Expected<OwningOpRef<ModuleOp>>
buildLiteralModel(MLIRContext &ctx, const ModelSpec &spec,
                  const StepOptions &options,
                  std::optional<LoraSummary> *summary = nullptr) {
  OwningOpRef<ModuleOp> model = buildModel(
      ctx, spec, elementTypeOf(ctx, options.precision), options.logits);
  if (!options.freeze.empty()) {
    // Per-layer patterns freeze some layers of a stacked weight: those
    // layers get scans (and stacked weights) of their own.
    llvm::Regex regex(options.freeze);
    std::string why;
    if (!regex.isValid(why))
      return makeError("--freeze '" + options.freeze + "': " + why);
    auto forward = model->lookupSymbol<func::FuncOp>(kForwardFuncName);
    if (llvm::Error e =
            splitRepeatLayers(forward, freezeBoundaries(forward, regex)))
      return makeError("--freeze '" + options.freeze +
                       "': " + llvm::toString(std::move(e)));
  }
  if (!options.lora)
    return model;
  auto adapted = applyLora(model->lookupSymbol<func::FuncOp>(kForwardFuncName),
                           *options.lora);
  if (!adapted)
    return adapted.takeError();
  if (summary)
    *summary = std::move(*adapted);
  return model;
}

llvm::Expected<std::unique_ptr<TrainingStep>>
TrainingStep::create(const ModelSpec &spec, const StepOptions &options) {
  // Every front end's rule (tfm-run, the C API, Python): a recompute plan
  // is a plan of the backward.
  if (options.recompute != "save-all" && !options.gradients)
    return makeError("--recompute plans the backward: it needs --grads");
  std::unique_ptr<TrainingStep> step(new TrainingStep(spec, options));
  DialectRegistry registry;
  registerAllTfmDialects(registry);
  step->state = std::make_unique<State>(registry);
  State &s = *step->state;
  auto imported = buildLiteralModel(s.ctx, spec, options, &step->loraSummary);
  if (!imported)
    return imported.takeError();
  s.imported = std::move(*imported);
  if (options.fuse) {
    DiagnosticCollector diagnostics(&s.ctx);
    PassManager pm(&s.ctx);
    buildTfmFusePipeline(pm);
    if (failed(pm.run(*s.imported)))
      return makeError("tfm-fuse failed: " + diagnostics.str());
  }
  auto forward = s.imported->lookupSymbol<func::FuncOp>(kForwardFuncName);
  if (!options.freeze.empty())
    if (llvm::Error e = freezeParameters(forward, options.freeze))
      return std::move(e);
  for (BlockArgument arg : forward.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    s.argShapes.emplace_back(type.getShape());
    s.argIsBF16.push_back(type.getElementType().isBF16());
    s.argParams.push_back(forward.getArgAttrOfType<ParamAttr>(
        arg.getArgNumber(), kParamAttrName));
  }
  return step;
}

llvm::Expected<std::unique_ptr<TrainingStep>>
TrainingStep::retarget(const CompileOptions &compile) const {
  StepOptions retargeted = options;
  retargeted.compile = compile;
  auto step = create(spec, retargeted);
  if (step)
    (*step)->state->bound = state->bound;
  return step;
}

llvm::Error TrainingStep::compile() {
  State &s = *state;
  if (s.compiled)
    return llvm::Error::success();
  // Compilation lowers in place: compile a clone.
  OwningOpRef<ModuleOp> module = s.imported->clone();
  std::string entry = kForwardFuncName.str();
  std::vector<std::pair<unsigned, unsigned>> gradResults;
  if (options.gradients) {
    llvm::Expected<std::string> vjp =
        differentiate(*module, kForwardFuncName, /*seedAllResults=*/false);
    if (!vjp)
      return vjp.takeError();
    entry = *vjp;
    if (options.recompute != "save-all")
      if (llvm::Error e = planRecompute(*module, options.recompute))
        return e;
    auto vjpFunc = module->lookupSymbol<func::FuncOp>(entry);
    for (unsigned r = 0; r < vjpFunc.getNumResults(); ++r)
      if (auto of =
              vjpFunc.getResultAttrOfType<IntegerAttr>(r, kGradOfAttrName))
        gradResults.push_back({r, unsigned(of.getInt())});
  }
  auto start = std::chrono::steady_clock::now();
  auto compiled = CompiledFunction::compile(*module, entry, options.compile);
  if (!compiled)
    return compiled.takeError();
  compileMs = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  s.compiled = std::move(*compiled);
  s.gradResults = std::move(gradResults);
  s.gradArguments.clear();
  for (auto [r, a] : s.gradResults) {
    (void)r;
    s.gradArguments.push_back(a);
  }
  return llvm::Error::success();
}

llvm::Error TrainingStep::bind(Checkpoint checkpoint) {
  State &s = *state;
  auto forward = s.imported->lookupSymbol<func::FuncOp>(kForwardFuncName);
  auto params = bindParameters(forward, checkpoint);
  if (!params && options.fuse) {
    // A fused parameter only knows its sources' total size; the unfused
    // weight map names the tensor that does not fit and its expected shape.
    llvm::Error fusedError = params.takeError();
    auto literal = buildLiteralModel(s.ctx, spec, options);
    if (!literal) {
      llvm::consumeError(std::move(fusedError));
      return literal.takeError();
    }
    auto unfused = bindParameters(
        (*literal)->lookupSymbol<func::FuncOp>(kForwardFuncName), checkpoint);
    if (!unfused) {
      llvm::consumeError(std::move(fusedError));
      return unfused.takeError();
    }
    return fusedError;
  }
  if (!params)
    return params.takeError();
  auto bound = std::make_shared<BoundParameters>(
      BoundParameters{std::move(*params), {}, std::move(checkpoint)});
  bound->bf16.assign(bound->f32.size(), {});
  for (size_t i = kNumForwardInputs; i < bound->f32.size(); ++i)
    if (s.argIsBF16[i])
      bound->bf16[i] = roundToBF16(bound->f32[i]);
  s.bound = std::move(bound);
  return llvm::Error::success();
}

/// Ids in [0, vocab); labels too, or -100 (not counted).
static llvm::Error checkTokens(const TokenBatch &batch, int64_t vocab) {
  auto outside = [&](int64_t token, llvm::StringRef field) {
    return makeError("token batch: field '" + field + "': token " +
                     llvm::Twine(token) + " is outside the vocabulary [0, " +
                     llvm::Twine(vocab) + ")");
  };
  for (int64_t id : batch.inputIds)
    if (!isValidToken(id, vocab, /*isLabel=*/false))
      return outside(id, "input_ids");
  for (int64_t label : batch.labels)
    if (!isValidToken(label, vocab, /*isLabel=*/true))
      return outside(label, "labels");
  return llvm::Error::success();
}

/// The arguments of one call of the compiled step, with the values they
/// point to (positions, ignored labels, the loss seed).
struct mlir::tfm::StepArguments {
  std::vector<int64_t> positions, noLabels;
  float seed = 1.0f;
  std::vector<CompiledFunction::Arg> args;
};

llvm::Error TrainingStep::prepareArguments(const TokenBatch &batch,
                                           float lossWeight,
                                           StepArguments &out) {
  State &s = *state;
  if (!s.bound)
    return makeError("the step has no parameters: bind a checkpoint first");
  bool hasLabels = !batch.labels.empty();
  if (options.gradients && !hasLabels)
    return makeError("field 'labels': gradients need labels (the loss to "
                     "differentiate)");
  if (!options.logits && !hasLabels)
    return makeError("field 'labels': a loss-only step (no logits) computes "
                     "only the loss, which needs labels");
  int64_t B = batch.batch, T = batch.seq;
  bool hasPositions = !batch.positionIds.empty();
  if (B <= 0 || T <= 0 || int64_t(batch.inputIds.size()) != B * T ||
      (hasLabels && int64_t(batch.labels.size()) != B * T) ||
      (hasPositions && int64_t(batch.positionIds.size()) != B * T))
    return makeError("token batch: expected " + llvm::Twine(B) + "x" +
                     llvm::Twine(T) + " input ids (and labels, positions)");
  for (int64_t p : batch.positionIds)
    if (p < 0)
      return makeError("token batch: field 'position_ids': position " +
                       llvm::Twine(p) + " is negative");
  if (llvm::Error e = checkTokens(batch, spec.vocabSize))
    return e;
  if (llvm::Error e = compile())
    return e;

  // Without position ids every row is one document: 0..T-1.
  if (hasPositions) {
    out.positions = batch.positionIds;
  } else {
    out.positions.resize(B * T);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        out.positions[b * T + t] = t;
  }
  // Without labels every position is ignored (the loss is then not read).
  if (!hasLabels)
    out.noLabels.assign(B * T, -100);
  const int64_t *labels = hasLabels ? batch.labels.data() : out.noLabels.data();
  // d (lossWeight * loss) / d loss (the loss is f32 in every precision).
  out.seed = lossWeight;
  out.args.assign(kNumForwardInputs, {});
  out.args[kInputIdsArgument] = {batch.inputIds.data(), {B, T}};
  out.args[kPositionsArgument] = {out.positions.data(), {B, T}};
  out.args[kLabelsArgument] = {labels, {B, T}};
  const BoundParameters &bound = *s.bound;
  for (size_t i = kNumForwardInputs; i < bound.f32.size(); ++i) {
    if (!s.resident.empty() && s.resident[i]) {
      CompiledFunction::Arg arg;
      arg.resident = &s.resident[i];
      out.args.push_back(arg);
      continue;
    }
    out.args.push_back({s.argIsBF16[i]
                            ? static_cast<const void *>(bound.bf16[i].data())
                            : bound.f32[i].data(),
                        s.argShapes[i]});
  }
  if (options.gradients)
    out.args.push_back({&out.seed, {}});
  return llvm::Error::success();
}

llvm::Expected<StepResult> TrainingStep::run(const TokenBatch &batch,
                                             float lossWeight) {
  State &s = *state;
  StepArguments prepared;
  if (llvm::Error e = prepareArguments(batch, lossWeight, prepared))
    return std::move(e);
  auto results = s.compiled->run(prepared.args);
  if (!results)
    return results.takeError();
  StepResult out;
  out.stepMs = s.compiled->getLastRunMs();
  unsigned lossResult = kLossResult;
  if (options.logits)
    out.logits = std::move((*results)[kLogitsResult]);
  else
    lossResult = 0;
  if (!batch.labels.empty())
    out.loss = (*results)[lossResult].f32[0];
  if (!options.gradients)
    return out;
  if (options.nameGradients) {
    std::vector<const float *> byArg(s.argShapes.size(), nullptr);
    for (auto [r, a] : s.gradResults)
      byArg[a] = (*results)[r].f32.data();
    auto named =
        unbindGradients(s.argParams, s.argShapes, byArg, s.bound->checkpoint);
    if (!named)
      return named.takeError();
    out.gradients = std::move(*named);
  }
  for (auto [r, a] : s.gradResults) {
    (void)a;
    out.parameterGradients.push_back(std::move((*results)[r]));
  }
  return out;
}

llvm::Expected<TrainingStep::ResidentGradients>
TrainingStep::runGradients(const TokenBatch &batch, float lossWeight) {
  State &s = *state;
  if (!options.gradients || batch.labels.empty())
    return makeError("runGradients needs a step with gradients and labels");
  StepArguments prepared;
  if (llvm::Error e = prepareArguments(batch, lossWeight, prepared))
    return std::move(e);
  auto results = s.compiled->runResident(prepared.args);
  if (!results)
    return results.takeError();
  ResidentGradients out;
  unsigned lossResult = options.logits ? unsigned(kLossResult) : 0u;
  out.loss = (*results)[lossResult].toHost().f32[0];
  for (auto [r, a] : s.gradResults) {
    (void)a;
    out.gradients.push_back(std::move((*results)[r]));
  }
  return out;
}

size_t TrainingStep::getLastStagedBytes() const {
  return state->compiled ? state->compiled->getLastStagedBytes() : 0;
}

llvm::Error TrainingStep::makeParametersResident() {
  State &s = *state;
  if (!s.bound)
    return makeError("the step has no parameters: bind a checkpoint first");
  if (llvm::Error e = compile())
    return e;
  bool gpu = s.compiled->onCuda();
  auto forward = s.imported->lookupSymbol<func::FuncOp>(kForwardFuncName);
  s.resident.assign(s.argShapes.size(), DeviceTensor());
  for (size_t i = kNumForwardInputs; i < s.argShapes.size(); ++i) {
    Type elem = cast<RankedTensorType>(forward.getArgument(i).getType())
                    .getElementType();
    const void *data = s.argIsBF16[i]
                           ? static_cast<const void *>(s.bound->bf16[i].data())
                           : s.bound->f32[i].data();
    s.resident[i] = DeviceTensor::upload(data, s.argShapes[i], elem, gpu);
    if (!s.resident[i])
      return gpu ? cuda::takeError() : makeError("out of host memory");
  }
  return llvm::Error::success();
}

const DeviceTensor &TrainingStep::getResidentParameter(unsigned arg) const {
  static const DeviceTensor none;
  return state->resident.empty() ? none : state->resident[arg];
}

void TrainingStep::setResidentParameter(unsigned arg, DeviceTensor value) {
  state->resident[arg] = std::move(value);
}

ModuleOp TrainingStep::getModel() const { return *state->imported; }

unsigned TrainingStep::getNumArguments() const {
  return state->argShapes.size();
}

ParamAttr TrainingStep::getParam(unsigned arg) const {
  return state->argParams[arg];
}

llvm::ArrayRef<int64_t> TrainingStep::getArgumentShape(unsigned arg) const {
  return state->argShapes[arg];
}

llvm::ArrayRef<unsigned> TrainingStep::getGradientArguments() const {
  return state->gradArguments;
}

llvm::ArrayRef<float> TrainingStep::getParameter(unsigned arg) const {
  return state->bound->f32[arg];
}

void TrainingStep::setParameter(unsigned arg, std::vector<float> value) {
  State &s = *state;
  BoundParameters &bound = *s.bound;
  if (s.argIsBF16[arg])
    bound.bf16[arg] = roundToBF16(value);
  bound.f32[arg] = std::move(value);
  if (!s.resident.empty() && s.resident[arg]) {
    const DeviceTensor &old = s.resident[arg];
    const void *data = s.argIsBF16[arg]
                           ? static_cast<const void *>(bound.bf16[arg].data())
                           : bound.f32[arg].data();
    s.resident[arg] = DeviceTensor::upload(data, old.getShape(),
                                           old.getElementType(), old.onGpu());
  }
}

llvm::Expected<std::vector<NamedGradient>>
TrainingStep::namedParameters() const {
  std::vector<unsigned> all;
  for (unsigned i = kNumForwardInputs; i < state->argShapes.size(); ++i)
    all.push_back(i);
  return namedParametersOf(all);
}

llvm::Expected<std::vector<NamedGradient>>
TrainingStep::namedParametersOf(llvm::ArrayRef<unsigned> args) const {
  const State &s = *state;
  if (!s.bound)
    return makeError("the step has no parameters: bind a checkpoint first");
  std::vector<const float *> byArg(s.argShapes.size(), nullptr);
  for (unsigned i : args)
    if (i >= kNumForwardInputs && i < s.bound->f32.size())
      byArg[i] = s.bound->f32[i].data();
  return unbindGradients(s.argParams, s.argShapes, byArg, s.bound->checkpoint);
}

const Checkpoint &TrainingStep::getCheckpoint() const {
  return state->bound->checkpoint;
}

llvm::Expected<TrainingStep::LiteralParameters>
TrainingStep::literalParameters() const {
  llvm::Expected<std::vector<NamedGradient>> named = namedParameters();
  if (!named)
    return named.takeError();
  auto literal = buildLiteralModel(state->ctx, spec, options);
  if (!literal)
    return literal.takeError();
  // The named tensors as a checkpoint the literal weight map binds.
  llvm::Expected<Checkpoint> tensors =
      checkpointOf(std::move(*named), "<bound parameters>");
  if (!tensors)
    return tensors.takeError();
  auto values = bindParameters(
      (*literal)->lookupSymbol<func::FuncOp>(kForwardFuncName), *tensors);
  if (!values)
    return values.takeError();
  return LiteralParameters{std::move(*literal), std::move(*values)};
}

std::string mlir::tfm::describeStep(const TrainingStep &step,
                                    const TokenBatch &batch,
                                    const StepResult &result, double runMs) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const ModelSpec &spec = step.getSpec();
  bool gradients = step.getOptions().gradients;
  os << spec.architecture << ": " << batch.batch << "x" << batch.seq
     << " tokens";
  if (step.getOptions().logits)
    os << ", logits [" << batch.batch << ", " << batch.seq << ", "
       << spec.vocabSize << "]";
  if (result.loss)
    os << ", loss " << llvm::format("%.6f", *result.loss);
  if (gradients)
    os << ", " << result.gradients.size() << " gradients";
  os << " on " << deviceName(step.getOptions().compile.device) << " (compile "
     << llvm::format("%.0f", step.getCompileMs()) << " ms, "
     << (gradients ? "step " : "run ") << llvm::format("%.1f", runMs) << " ms)";
  return text;
}
