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
#include "tfm/Engine/Differentiate.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/InitAll.h"
#include "tfm/Support/BFloat16.h"
#include "tfm/Support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

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

struct TrainingStep::State {
  MLIRContext ctx;
  /// The imported model, unlowered: the weight map of @forward.
  OwningOpRef<ModuleOp> imported;
  std::vector<std::vector<int64_t>> argShapes;
  std::vector<ParamAttr> argParams;
  std::unique_ptr<CompiledFunction> compiled;
  /// Gradient results of @forward_vjp: (result index, argument index).
  std::vector<std::pair<unsigned, unsigned>> gradResults;
  /// Bound parameters (f32, or rounded to bf16), one per argument.
  std::vector<std::vector<float>> params;
  std::vector<std::vector<uint16_t>> bf16Params;
  std::optional<Checkpoint> checkpoint;

  explicit State(DialectRegistry &registry) : ctx(registry) {}
};

TrainingStep::TrainingStep(const ModelSpec &spec, const StepOptions &options)
    : spec(spec), options(options) {}
TrainingStep::~TrainingStep() = default;

llvm::Expected<std::unique_ptr<TrainingStep>>
TrainingStep::create(const ModelSpec &spec, const StepOptions &options) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<TrainingStep> step(new TrainingStep(spec, options));
  DialectRegistry registry;
  registerAllTfmDialects(registry);
  step->state = std::make_unique<State>(registry);
  State &s = *step->state;
  Type elementType = options.precision == Precision::bf16
                         ? Type(BFloat16Type::get(&s.ctx))
                         : Type(Float32Type::get(&s.ctx));

  s.imported = buildModel(s.ctx, spec, elementType);
  auto forward = s.imported->lookupSymbol<func::FuncOp>(kForwardFuncName);
  for (BlockArgument arg : forward.getArguments()) {
    s.argShapes.emplace_back(cast<RankedTensorType>(arg.getType()).getShape());
    s.argParams.push_back(forward.getArgAttrOfType<ParamAttr>(
        arg.getArgNumber(), kParamAttrName));
  }

  // Compilation lowers in place: compile a clone.
  OwningOpRef<ModuleOp> module = s.imported->clone();
  std::string entry = kForwardFuncName.str();
  if (options.gradients) {
    llvm::Expected<std::string> vjp =
        differentiate(*module, kForwardFuncName, /*seedAllResults=*/false);
    if (!vjp)
      return vjp.takeError();
    entry = *vjp;
    auto vjpFunc = module->lookupSymbol<func::FuncOp>(entry);
    for (unsigned r = 0; r < vjpFunc.getNumResults(); ++r)
      if (auto of =
              vjpFunc.getResultAttrOfType<IntegerAttr>(r, kGradOfAttrName))
        s.gradResults.push_back({r, unsigned(of.getInt())});
  }
  auto compiled = CompiledFunction::compile(*module, entry, options.compile);
  if (!compiled)
    return compiled.takeError();
  s.compiled = std::move(*compiled);
  step->compileMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  return step;
}

llvm::Error TrainingStep::bind(Checkpoint checkpoint) {
  State &s = *state;
  auto forward = s.imported->lookupSymbol<func::FuncOp>(kForwardFuncName);
  auto bound = bindParameters(forward, checkpoint);
  if (!bound)
    return bound.takeError();
  s.params = std::move(*bound);
  s.bf16Params.assign(s.params.size(), {});
  if (options.precision == Precision::bf16)
    for (size_t i = kNumForwardInputs; i < s.params.size(); ++i)
      s.bf16Params[i] = roundToBF16(s.params[i]);
  s.checkpoint = std::move(checkpoint);
  return llvm::Error::success();
}

llvm::Expected<StepResult> TrainingStep::run(const TokenBatch &batch) {
  State &s = *state;
  if (!s.checkpoint)
    return makeError("the step has no parameters: bind a checkpoint first");
  bool hasLabels = !batch.labels.empty();
  if (options.gradients && !hasLabels)
    return makeError("field 'labels': gradients need labels (the loss to "
                     "differentiate)");
  int64_t B = batch.batch, T = batch.seq;
  if (B <= 0 || T <= 0 || int64_t(batch.inputIds.size()) != B * T ||
      (hasLabels && int64_t(batch.labels.size()) != B * T))
    return makeError("token batch: expected " + llvm::Twine(B) + "x" +
                     llvm::Twine(T) + " input ids (and labels)");
  for (int64_t id : batch.inputIds)
    if (id < 0 || id >= spec.vocabSize)
      return makeError("token batch: token " + llvm::Twine(id) +
                       " is outside the vocabulary [0, " +
                       llvm::Twine(spec.vocabSize) + ")");

  std::vector<int64_t> positions(B * T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      positions[b * T + t] = t;
  std::vector<int64_t> labels =
      hasLabels ? batch.labels : std::vector<int64_t>(B * T, -100);
  float seed = 1.0f; // d loss / d loss (the loss is f32 in every precision)
  std::vector<CompiledFunction::Arg> args(kNumForwardInputs);
  args[kInputIdsArgument] = {batch.inputIds.data(), {B, T}};
  args[kPositionsArgument] = {positions.data(), {B, T}};
  args[kLabelsArgument] = {labels.data(), {B, T}};
  for (size_t i = kNumForwardInputs; i < s.params.size(); ++i)
    args.push_back({options.precision == Precision::bf16
                        ? static_cast<const void *>(s.bf16Params[i].data())
                        : s.params[i].data(),
                    s.argShapes[i]});
  if (options.gradients)
    args.push_back({&seed, {}});

  auto results = s.compiled->run(args);
  if (!results)
    return results.takeError();
  StepResult out;
  out.stepMs = s.compiled->getLastRunMs();
  out.logits = std::move((*results)[kLogitsResult]);
  if (hasLabels)
    out.loss = (*results)[kLossResult].f32[0];
  if (!options.gradients)
    return out;
  std::vector<const float *> byArg(s.argShapes.size(), nullptr);
  for (auto [r, a] : s.gradResults)
    byArg[a] = (*results)[r].f32.data();
  auto named = unbindGradients(s.argParams, s.argShapes, byArg, *s.checkpoint);
  if (!named)
    return named.takeError();
  out.gradients = std::move(*named);
  for (auto [r, a] : s.gradResults) {
    (void)a;
    out.parameterGradients.push_back(std::move((*results)[r]));
  }
  return out;
}

std::string mlir::tfm::describeStep(const TrainingStep &step,
                                    const TokenBatch &batch,
                                    const StepResult &result, double runMs) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const ModelSpec &spec = step.getSpec();
  bool gradients = step.getOptions().gradients;
  os << spec.architecture << ": " << batch.batch << "x" << batch.seq
     << " tokens, logits [" << batch.batch << ", " << batch.seq << ", "
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
