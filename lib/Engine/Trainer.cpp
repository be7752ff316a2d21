//===- Trainer.cpp - the optimizer loop over a compiled training step -----===//
//
// The optimizer step is compiled from a clone of the step's imported module
// that keeps only @forward_optimizer_step, for the step's own device; the
// f32 sum of micro-batch gradients (and the widening of a bf16 step's
// gradients) are two small functions compiled the same way on first use.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/Trainer.h"
#include "tfm/Conversion/InPlaceArguments.h"
#include "tfm/Support/Error.h"
#include "tfm/Training/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>
#include <cstring>

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
  OwningOpRef<ModuleOp> module, accumulateModule, widenModule;
  std::unique_ptr<CompiledFunction> function, accumulate, widen;
};

Trainer::Trainer(TrainingStep &step, const LearningRateSchedule &schedule,
                 Communicator &comm)
    : trainingStep(step), schedule(schedule), comm(comm) {}
Trainer::~Trainer() = default;

bool Trainer::masterIsModelTensor(size_t i) const {
  return trainingStep.getResidentParameter(trained[i]).getElementType().isF32();
}

DeviceTensor Trainer::modelMaster(size_t i) const {
  const DeviceTensor &whole = trainingStep.getResidentParameter(trained[i]);
  return isSharded() ? whole.rows(shards[i].firstRow, shards[i].rows) : whole;
}

llvm::Error mlir::tfm::addOptimizerStep(ModuleOp module,
                                        const OptimizerOptions &options) {
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
  pass.modelCopies = true; // bf16 copies made on the device
  pm.addPass(createTfmAddOptimizerStepPass(pass));
  if (failed(pm.run(module)))
    return diagnostics.takeError("");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Trainer>>
Trainer::create(TrainingStep &step, const OptimizerOptions &options,
                const LearningRateSchedule &schedule, Communicator *comm,
                bool zero1) {
  if (!step.getOptions().gradients)
    return makeError("training needs a step compiled with gradients");
  if (llvm::Error e = step.makeParametersResident())
    return std::move(e);
  std::unique_ptr<Trainer> trainer(new Trainer(
      step, schedule, comm ? *comm : getSingleProcessCommunicator()));
  trainer->optimizerOptions = options;
  auto compiled = std::make_unique<Compiled>();
  compiled->module = step.getModel().clone();
  ModuleOp module = *compiled->module;
  if (auto e = addOptimizerStep(module, options))
    return std::move(e);
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
  for (int64_t i :
       optimizerStep->getAttrOfType<DenseI64ArrayAttr>(kModelCopiesAttrName)
           .asArrayRef())
    trainer->modelCopies.push_back(size_t(i));
  // (tfm-add-optimizer-step refuses a model with nothing to train.)
  // Only the update is compiled here; the step compiled the model.
  trainer->compiled = std::move(compiled);
  if (zero1) {
    // Compiled for this rank's shards instead.
    auto function = trainer->shardOptimizer(options, trainer->compiled->module);
    if (!function)
      return function.takeError();
    trainer->compiled->function = std::move(*function);
  } else {
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (f != optimizerStep)
        f.erase();
    auto function =
        CompiledFunction::compile(module, name, step.getOptions().compile);
    if (!function)
      return function.takeError();
    trainer->compiled->function = std::move(*function);
  }

  llvm::ArrayRef<unsigned> withGradients = step.getGradientArguments();
  for (unsigned a : trainer->trained)
    if (!llvm::is_contained(withGradients, a))
      return makeError("parameter '" + step.getParam(a).getName() +
                       "' is trained but the step gives it no gradient");
  // f32 masters: an f32 parameter's is the step's own tensor, a bf16 one's
  // a copy of the f32 value it was bound from.
  size_t n = trainer->trained.size();
  bool gpu = step.getResidentParameter(trainer->trained[0]).onGpu();
  Type f32 = Float32Type::get(step.getModel().getContext());
  // Under ZeRO-1 both are this rank's shards (an f32 one is its rows of
  // the step's tensor).
  for (size_t i = 0; i < n; ++i) {
    unsigned a = trainer->trained[i];
    if (trainer->masterIsModelTensor(i))
      trainer->masters.push_back(trainer->modelMaster(i));
    else
      trainer->masters.push_back(
          DeviceTensor::upload(trainer->shardOf(i, step.getParameter(a)).data(),
                               trainer->shardShape(i), f32, gpu));
  }
  // stateValues[kind * n + i]: zeros before the first update.
  for (size_t s = 0; s < trainer->stateKinds.size() * n; ++s) {
    std::vector<int64_t> shape = trainer->shardShape(s % n);
    std::vector<float> zeros(size_t(ShapedType::getNumElements(shape)), 0.0f);
    trainer->stateValues.push_back(
        DeviceTensor::upload(zeros.data(), shape, f32, gpu));
  }
  for (const auto &t :
       llvm::concat<DeviceTensor>(trainer->masters, trainer->stateValues))
    if (!t)
      return makeError("out of memory for the optimizer state");
  return trainer;
}

/// Builds @name(acc_i : f32 ..., g_i ...) -> (acc_i + g_i : f32 ...) (or,
/// without accumulators, @name(g_i ...) -> (g_i : f32 ...)), one
/// linalg.generic per tensor widening bf16 gradients to f32. The sums are
/// added into the accumulators' own buffers (writable arguments, the
/// generic's outputs): a micro-batch allocates no new f32 gradients.
static OwningOpRef<ModuleOp> buildGradientSum(MLIRContext *ctx,
                                              llvm::ArrayRef<DeviceTensor> g,
                                              bool withAccumulators) {
  OpBuilder b(ctx);
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type f32 = b.getF32Type();
  SmallVector<Type> gradTypes, sumTypes, argTypes;
  for (const DeviceTensor &t : g) {
    gradTypes.push_back(
        RankedTensorType::get(t.getShape(), t.getElementType()));
    sumTypes.push_back(RankedTensorType::get(t.getShape(), f32));
  }
  if (withAccumulators)
    argTypes.append(sumTypes);
  argTypes.append(gradTypes);
  auto f = func::FuncOp::create(b, loc, "sum_gradients",
                                b.getFunctionType(argTypes, sumTypes));
  if (withAccumulators)
    for (size_t i = 0; i < g.size(); ++i)
      markUpdatedInPlace(f, i);
  Block *body = f.addEntryBlock();
  b.setInsertionPointToStart(body);
  SmallVector<Value> sums;
  size_t n = g.size();
  for (size_t i = 0; i < n; ++i) {
    auto type = cast<RankedTensorType>(sumTypes[i]);
    Value grad = body->getArgument((withAccumulators ? n : 0) + i);
    Value init =
        withAccumulators
            ? Value(body->getArgument(i))
            : Value(tensor::EmptyOp::create(b, loc, type.getShape(), f32));
    SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{grad}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value g = args[0];
          if (!g.getType().isF32())
            g = arith::ExtFOp::create(nb, nl, f32, g);
          if (withAccumulators)
            g = arith::AddFOp::create(nb, nl, args[1], g);
          linalg::YieldOp::create(nb, nl, g);
        });
    sums.push_back(generic.getResult(0));
  }
  func::ReturnOp::create(b, loc, sums);
  return module;
}

llvm::Expected<std::vector<DeviceTensor>>
Trainer::addGradients(const std::vector<DeviceTensor> *sums,
                      std::vector<DeviceTensor> grads) {
  bool allF32 = llvm::all_of(
      grads, [](const DeviceTensor &t) { return t.getElementType().isF32(); });
  if (!sums && allF32)
    return grads; // the optimizer's f32 gradients as they are
  std::unique_ptr<CompiledFunction> &fn =
      sums ? compiled->accumulate : compiled->widen;
  OwningOpRef<ModuleOp> &module =
      sums ? compiled->accumulateModule : compiled->widenModule;
  if (!fn) {
    module = buildGradientSum(trainingStep.getModel().getContext(), grads,
                              /*withAccumulators=*/sums != nullptr);
    auto compiledFn = CompiledFunction::compile(
        *module, "sum_gradients", trainingStep.getOptions().compile);
    if (!compiledFn)
      return compiledFn.takeError();
    fn = std::move(*compiledFn);
  }
  std::vector<CompiledFunction::Arg> args;
  const std::vector<DeviceTensor> *lists[] = {sums, &grads};
  for (const std::vector<DeviceTensor> *list : lists)
    if (list)
      for (const DeviceTensor &t : *list) {
        CompiledFunction::Arg arg;
        arg.resident = &t;
        args.push_back(arg);
      }
  return fn->runResident(args);
}

std::vector<DeviceTensor> Trainer::zeroGradients() const {
  std::vector<DeviceTensor> zeros;
  Type f32 = Float32Type::get(trainingStep.getModel().getContext());
  for (const DeviceTensor &m : masters) {
    std::vector<float> values(size_t(m.getNumElements()), 0.0f);
    zeros.push_back(
        DeviceTensor::upload(values.data(), m.getShape(), f32, m.onGpu()));
  }
  return zeros;
}

llvm::Error Trainer::reduceOverRanks(std::vector<DeviceTensor> &grads,
                                     double &loss) {
  for (DeviceTensor &g : grads)
    if (auto e = comm.allReduceSum(static_cast<float *>(g.data()),
                                   size_t(g.getNumElements())))
      return e;
  return comm.allReduceSum(&loss, 1);
}

llvm::Expected<UpdateLog>
Trainer::update(llvm::ArrayRef<TokenBatch> microBatches) {
  auto start = std::chrono::steady_clock::now();
  UpdateLog log;
  std::vector<int64_t> counted;
  for (const TokenBatch &mb : microBatches) {
    if (mb.labels.empty())
      return makeError("field 'labels': training needs labels");
    counted.push_back(countedTokens(mb));
    log.countedTokens += counted.back();
    log.tokens += mb.batch * mb.seq;
  }
  // HF's num_items_in_batch is the whole update's: every rank's tokens.
  int64_t totals[2] = {log.countedTokens, log.tokens};
  if (auto e = comm.allReduceSum(totals, 2))
    return std::move(e);
  log.countedTokens = totals[0];
  log.tokens = totals[1];
  if (log.countedTokens == 0)
    return makeError("field 'labels': the update's batch counts no target "
                     "token (every shifted label is -100)");

  // Position of each trained argument among the step's gradients.
  llvm::ArrayRef<unsigned> gradArgs = trainingStep.getGradientArguments();
  std::vector<size_t> gradIndex;
  for (unsigned a : trained)
    gradIndex.push_back(llvm::find(gradArgs, a) - gradArgs.begin());
  std::vector<DeviceTensor> grads;
  for (auto [mb, mbCounted] : llvm::zip_equal(microBatches, counted)) {
    if (mbCounted == 0)
      continue; // no loss term, zero gradients
    // HF's Trainer: each micro-batch's loss is its summed cross-entropy
    // over the update's counted tokens (num_items_in_batch).
    double weight = double(mbCounted) / double(log.countedTokens);
    auto r = trainingStep.runGradients(mb, float(weight));
    if (!r)
      return r.takeError();
    log.stagedBytes += trainingStep.getLastStagedBytes();
    log.loss += weight * r->loss;
    std::vector<DeviceTensor> mine;
    for (size_t i = 0; i < trained.size(); ++i)
      mine.push_back(std::move(r->gradients[gradIndex[i]]));
    // Summed (and bf16 gradients widened) in f32.
    auto sum = addGradients(grads.empty() ? nullptr : &grads, std::move(mine));
    if (!sum)
      return sum.takeError();
    grads = std::move(*sum);
  }
  float shardedNorm = 0;
  if (grads.empty())
    grads = zeroGradients(); // this rank counted no token
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t)
        .count();
  };
  auto commStart = std::chrono::steady_clock::now();
  if (isSharded()) {
    auto mine = scatterGradients(std::move(grads), log.loss, shardedNorm);
    if (!mine)
      return mine.takeError();
    grads = std::move(*mine);
  } else if (comm.getSize() > 1) {
    if (auto e = reduceOverRanks(grads, log.loss))
      return std::move(e);
  }
  if (comm.getSize() > 1)
    log.communicationMs = since(commStart);

  size_t n = trained.size();
  double lr = schedule.at(step);
  int64_t stepNumber = step + 1; // torch counts updates from 1
  std::vector<CompiledFunction::Arg> args;
  auto resident = [&](const DeviceTensor &t) {
    CompiledFunction::Arg arg;
    arg.resident = &t;
    args.push_back(arg);
  };
  for (const DeviceTensor &t : masters)
    resident(t);
  for (const DeviceTensor &t : grads)
    resident(t);
  for (const DeviceTensor &t : stateValues)
    resident(t);
  args.push_back({&lr, {}});
  args.push_back({&stepNumber, {}});
  auto optimizerStart = std::chrono::steady_clock::now();
  auto results = compiled->function->runResident(args);
  if (!results)
    return results.takeError();
  log.stagedBytes += compiled->function->getLastStagedBytes();
  grads.clear();
  size_t normResult = n + stateValues.size();
  for (size_t i = 0; i < n; ++i) {
    DeviceTensor updated = std::move((*results)[i]);
    if (!isSharded() || !masterIsModelTensor(i)) {
      masters[i] = std::move(updated);
      if (masterIsModelTensor(i))
        trainingStep.setResidentParameter(trained[i], masters[i]);
    } else if (updated.data() != masters[i].data()) {
      // Updated in place as a rule; else copied into the step's rows.
      std::memcpy(masters[i].data(), updated.data(), updated.getNumBytes());
    }
  }
  // A bf16 parameter's copy, rounded by the optimizer step (model-copies).
  llvm::ArrayRef<DeviceTensor> copies =
      llvm::ArrayRef(*results).drop_front(normResult + 1);
  if (isSharded()) {
    auto gatherStart = std::chrono::steady_clock::now();
    if (auto e = gatherParameters(copies))
      return std::move(e);
    log.communicationMs += since(gatherStart);
  } else {
    for (auto [k, i] : llvm::enumerate(modelCopies))
      trainingStep.setResidentParameter(trained[i], copies[k]);
  }
  for (size_t s = 0; s < stateValues.size(); ++s)
    stateValues[s] = std::move((*results)[n + s]);
  log.gradNorm =
      isSharded() ? shardedNorm : (*results)[normResult].toHost().f32[0];
  log.lr = lr;
  log.step = ++step;
  log.optimizerMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - optimizerStart)
                        .count();
  log.ms = std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
               .count();
  return log;
}

void Trainer::setMaster(size_t i, std::vector<float> value) {
  unsigned a = trained[i];
  const DeviceTensor &old = masters[i];
  if (!masterIsModelTensor(i))
    masters[i] = DeviceTensor::upload(shardOf(i, value).data(), old.getShape(),
                                      old.getElementType(), old.onGpu());
  trainingStep.setParameter(a, std::move(value));
  if (masterIsModelTensor(i))
    masters[i] = modelMaster(i);
}

void Trainer::syncParametersToHost() {
  if (isSharded())
    return; // gatherShards() did, on every rank
  // (An f32 master is the step's tensor: this copies it to the host.)
  for (size_t i = 0; i < trained.size(); ++i)
    setMaster(i, masters[i].toHost().f32);
}

Trainer::StateTensor Trainer::stateTensor(size_t s,
                                          std::vector<float> values) const {
  size_t n = trained.size();
  unsigned a = trained[s % n];
  return {stateKinds[s / n] + "/" + std::to_string(a) + "/" +
              trainingStep.getParam(a).getName().str(),
          trainingStep.getArgumentShape(a).vec(), std::move(values)};
}

std::vector<Trainer::StateTensor> Trainer::getState() const {
  if (isSharded())
    return gatheredState;
  std::vector<StateTensor> out;
  for (size_t s = 0; s < stateValues.size(); ++s)
    out.push_back(stateTensor(s, stateValues[s].toHost().f32));
  return out;
}

llvm::Error
Trainer::setState(int64_t steps,
                  llvm::function_ref<llvm::Expected<std::vector<float>>(
                      llvm::StringRef name, llvm::ArrayRef<int64_t> shape)>
                      lookup) {
  std::vector<DeviceTensor> values;
  size_t n = trained.size();
  for (size_t s = 0; s < stateValues.size(); ++s) {
    StateTensor named = stateTensor(s, {});
    const DeviceTensor &old = stateValues[s];
    llvm::Expected<std::vector<float>> v = lookup(named.name, named.shape);
    if (!v)
      return v.takeError();
    values.push_back(DeviceTensor::upload(shardOf(s % n, *v).data(),
                                          old.getShape(), old.getElementType(),
                                          old.onGpu()));
  }
  stateValues = std::move(values);
  step = steps;
  return llvm::Error::success();
}
