//===- Trainer.cpp - the optimizer loop over a compiled training step -----===//
//
// The optimizer step is compiled from a clone of the step's imported module
// that keeps only @forward_optimizer_step, for the step's own device.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/Trainer.h"
#include "tfm/Support/Error.h"
#include "tfm/Training/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>

using namespace mlir;
using namespace mlir::tfm;

int64_t mlir::tfm::countedTokens(const TokenBatch &batch) {
  int64_t n = 0;
  for (int64_t b = 0; b < batch.batch; ++b)
    for (int64_t t = 1; t < batch.seq; ++t)
      n += batch.labels[b * batch.seq + t] != -100;
  return n;
}

struct Trainer::Compiled {
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<CompiledFunction> function;
};

Trainer::Trainer(TrainingStep &step, const LearningRateSchedule &schedule)
    : trainingStep(step), schedule(schedule) {}
Trainer::~Trainer() = default;

llvm::Expected<std::unique_ptr<Trainer>>
Trainer::create(TrainingStep &step, const OptimizerOptions &options,
                const LearningRateSchedule &schedule) {
  if (!step.getOptions().gradients)
    return makeError("training needs a step compiled with gradients");
  if (llvm::Error e = step.compile())
    return std::move(e);
  std::unique_ptr<Trainer> trainer(new Trainer(step, schedule));
  auto compiled = std::make_unique<Compiled>();
  compiled->module = step.getModel().clone();
  ModuleOp module = *compiled->module;
  {
    DiagnosticCollector diagnostics(module.getContext());
    PassManager pm(module.getContext());
    TfmAddOptimizerStepPassOptions pass;
    pass.optimizer = options.optimizer;
    pass.beta1 = options.beta1;
    pass.beta2 = options.beta2;
    pass.eps = options.eps;
    pass.weightDecay = options.weightDecay;
    pass.decay = options.decay;
    pass.momentum = options.momentum;
    pass.dampening = options.dampening;
    pass.nesterov = options.nesterov;
    pass.maxGradNorm = options.maxGradNorm;
    pm.addPass(createTfmAddOptimizerStepPass(pass));
    if (failed(pm.run(module)))
      return diagnostics.takeError("");
  }
  std::string name = getOptimizerStepFuncName("forward");
  auto optimizerStep = module.lookupSymbol<func::FuncOp>(name);
  for (int64_t a :
       optimizerStep
           ->getAttrOfType<DenseI64ArrayAttr>(kTrainedArgumentsAttrName)
           .asArrayRef())
    trainer->trained.push_back(unsigned(a));
  for (Attribute kind :
       optimizerStep->getAttrOfType<ArrayAttr>(kOptimizerStateAttrName))
    trainer->stateKinds.push_back(cast<StringAttr>(kind).str());
  if (trainer->trained.empty())
    return makeError("nothing to train: every parameter is frozen");
  // Only the update is compiled here; the step compiled the model.
  for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (f != optimizerStep)
      f.erase();
  auto function =
      CompiledFunction::compile(module, name, step.getOptions().compile);
  if (!function)
    return function.takeError();
  compiled->function = std::move(*function);
  trainer->compiled = std::move(compiled);

  llvm::ArrayRef<unsigned> withGradients = step.getGradientArguments();
  for (unsigned a : trainer->trained)
    if (!llvm::is_contained(withGradients, a))
      return makeError("parameter '" + step.getParam(a).getName() +
                       "' is trained but the step gives it no gradient");
  // stateValues[kind * n + i]: zeros before the first update.
  size_t n = trainer->trained.size();
  trainer->stateValues.resize(trainer->stateKinds.size() * n);
  for (size_t s = 0; s < trainer->stateValues.size(); ++s)
    trainer->stateValues[s].assign(
        step.getParameter(trainer->trained[s % n]).size(), 0.0f);
  return trainer;
}

llvm::Expected<UpdateLog>
Trainer::update(llvm::ArrayRef<TokenBatch> microBatches) {
  auto start = std::chrono::steady_clock::now();
  UpdateLog log;
  for (const TokenBatch &mb : microBatches) {
    if (mb.labels.empty())
      return makeError("field 'labels': training needs labels");
    log.countedTokens += countedTokens(mb);
    log.tokens += mb.batch * mb.seq;
  }
  if (log.countedTokens == 0)
    return makeError("field 'labels': the update's batch counts no target "
                     "token (every shifted label is -100)");

  // Position of each trained argument among the step's gradients.
  llvm::ArrayRef<unsigned> gradArgs = trainingStep.getGradientArguments();
  std::vector<size_t> gradIndex;
  for (unsigned a : trained)
    gradIndex.push_back(llvm::find(gradArgs, a) - gradArgs.begin());
  std::vector<std::vector<float>> grads(trained.size());
  for (const TokenBatch &mb : microBatches) {
    int64_t counted = countedTokens(mb);
    if (counted == 0)
      continue; // no loss term, zero gradients
    // HF's Trainer: each micro-batch's loss is its summed cross-entropy
    // over the update's counted tokens (num_items_in_batch).
    double weight = double(counted) / double(log.countedTokens);
    llvm::Expected<StepResult> r = trainingStep.run(mb, float(weight));
    if (!r)
      return r.takeError();
    log.loss += weight * *r->loss;
    for (size_t i = 0; i < trained.size(); ++i) {
      std::vector<float> &g = r->parameterGradients[gradIndex[i]].f32;
      if (grads[i].empty()) {
        grads[i] = std::move(g);
        continue;
      }
      for (size_t e = 0; e < g.size(); ++e)
        grads[i][e] += g[e];
    }
  }

  size_t n = trained.size();
  double lr = schedule.at(step);
  int64_t stepNumber = step + 1; // torch counts updates from 1
  std::vector<CompiledFunction::Arg> args;
  for (unsigned a : trained)
    args.push_back({trainingStep.getParameter(a).data(),
                    trainingStep.getArgumentShape(a).vec()});
  for (size_t i = 0; i < n; ++i)
    args.push_back(
        {grads[i].data(), trainingStep.getArgumentShape(trained[i]).vec()});
  for (size_t s = 0; s < stateValues.size(); ++s)
    args.push_back({stateValues[s].data(),
                    trainingStep.getArgumentShape(trained[s % n]).vec()});
  args.push_back({&lr, {}});
  args.push_back({&stepNumber, {}});
  auto results = compiled->function->run(args);
  if (!results)
    return results.takeError();
  for (size_t i = 0; i < n; ++i)
    trainingStep.setParameter(trained[i], std::move((*results)[i].f32));
  for (size_t s = 0; s < stateValues.size(); ++s)
    stateValues[s] = std::move((*results)[n + s].f32);
  log.gradNorm = results->back().f32[0];
  log.lr = lr;
  log.step = ++step;
  log.ms = std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
               .count();
  return log;
}

std::vector<Trainer::StateTensor> Trainer::getState() const {
  std::vector<StateTensor> out;
  size_t n = trained.size();
  for (size_t s = 0; s < stateValues.size(); ++s) {
    unsigned a = trained[s % n];
    out.push_back({stateKinds[s / n] + "/" + std::to_string(a) + "/" +
                       trainingStep.getParam(a).getName().str(),
                   trainingStep.getArgumentShape(a).vec(), &stateValues[s]});
  }
  return out;
}

llvm::Error
Trainer::setState(int64_t steps,
                  llvm::function_ref<llvm::Expected<std::vector<float>>(
                      llvm::StringRef name, llvm::ArrayRef<int64_t> shape)>
                      lookup) {
  std::vector<StateTensor> names = getState();
  std::vector<std::vector<float>> values;
  for (const StateTensor &t : names) {
    llvm::Expected<std::vector<float>> v = lookup(t.name, t.shape);
    if (!v)
      return v.takeError();
    values.push_back(std::move(*v));
  }
  stateValues = std::move(values);
  step = steps;
  return llvm::Error::success();
}
