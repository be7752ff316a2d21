//===- Trainer.h - the optimizer loop over a compiled training step -*- C++
//-*-===//
//
// A Trainer owns the optimizer side of training: the compiled
// @forward_optimizer_step (tfm-add-optimizer-step), the f32 master weights
// and optimizer state, and the update count. Each update runs the step's
// forward and backward on every micro-batch (each one's loss weighted by
// its share of the update's counted tokens, as HF's Trainer does with
// num_items_in_batch), sums the gradients in f32 (a compiled function), and
// runs the optimizer step, which clips, updates and returns the gradient
// norm. Parameters, gradients and state stay resident (DeviceTensor: the
// CUDA arena on the GPU) from one update to the next (a bf16 model's bf16
// copies are rounded by the optimizer step itself); only the tokens, the
// learning rate and the step number are copied in, the loss and the norm
// out.
//
// Data parallel: with a communicator of N ranks each rank runs its own
// micro-batches of the update; the counted tokens are summed over the ranks
// before the weights are formed, then the gradient sums and the loss, so
// every rank's optimizer step runs on the same inputs as one process would
// with all the micro-batches:
//
//   auto trainer = Trainer::create(*step, optimizerOptions, schedule, comm);
//
// ZeRO-1 (`zero1`): each rank keeps the optimizer state, and the f32
// masters, of a dim-0 shard of every trained tensor only. The summed
// gradients are reduce-scattered to the shards' owners, each rank runs the
// optimizer step compiled for its shards, and the updated shards are
// all-gathered into every rank's whole parameters. Clipping's global norm
// is one scalar sum over the ranks.
//   llvm::Expected<UpdateLog> log = (*trainer)->update(microBatches);
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_TRAINER_H
#define TFM_ENGINE_TRAINER_H

#include "tfm/Distributed/Communicator.h"
#include "tfm/Engine/LearningRate.h"
#include "tfm/Engine/TrainingStep.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm {

/// tfm-add-optimizer-step's options (torch's defaults).
struct OptimizerOptions {
  std::string optimizer = "adamw"; // or "sgd"
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0.01;
  std::string decay = "all"; // or "hf"
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  /// Global-norm clipping (0: none).
  double maxGradNorm = 0;
};

/// What one update did.
struct UpdateLog {
  /// 1-based: the number of updates done after this one.
  int64_t step = 0;
  /// The loss of the update's batch before it (the mean over all counted
  /// tokens of its micro-batches).
  double loss = 0;
  /// The global gradient norm before clipping.
  double gradNorm = 0;
  double lr = 0;
  /// Tokens the update ran (input ids of every micro-batch, on every rank)
  /// and those the loss counted.
  int64_t tokens = 0, countedTokens = 0;
  /// Bytes copied from the host to the device during the update (0 on the
  /// CPU).
  size_t stagedBytes = 0;
  /// Wall time of the whole update, of its optimizer step alone, and of
  /// its collectives over the ranks (0 in one process).
  double ms = 0, optimizerMs = 0, communicationMs = 0;
};

/// One held-out evaluation of a run (Evaluation.h).
struct EvalLog {
  /// Updates done when it ran.
  int64_t step = 0;
  /// The mean loss over the counted tokens, and its exp.
  double loss = 0, perplexity = 0;
  int64_t tokens = 0;
};

class Trainer {
public:
  /// Builds and compiles the optimizer step of `step` (compiled with
  /// gradients, for the same device). `step` must outlive the trainer, and
  /// `comm` (the ranks it trains with; null: this process alone) too.
  static llvm::Expected<std::unique_ptr<Trainer>>
  create(TrainingStep &step, const OptimizerOptions &options,
         const LearningRateSchedule &schedule, Communicator *comm = nullptr,
         bool zero1 = false);
  ~Trainer();

  /// One update over `microBatches`, this rank's part of the update's batch
  /// (all with labels; at least one counted token over all ranks). A rank
  /// whose micro-batches count no token adds zeros.
  llvm::Expected<UpdateLog> update(llvm::ArrayRef<TokenBatch> microBatches);

  /// Updates done so far (the next one uses schedule.at(getStep())).
  int64_t getStep() const { return step; }

  /// The optimizer state, one tensor per trained parameter and state kind,
  /// named `<kind>/<argument>/<parameter name>`, copied to the host for
  /// checkpoints.
  struct StateTensor {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> data;
  };
  std::vector<StateTensor> getState() const;
  /// Restores the state saved by getState() after `steps` updates. `lookup`
  /// returns a saved tensor by name; errors name a missing or mis-shaped
  /// one.
  llvm::Error setState(int64_t steps,
                       llvm::function_ref<llvm::Expected<std::vector<float>>(
                           llvm::StringRef name, llvm::ArrayRef<int64_t> shape)>
                           lookup);
  /// Sets the f32 master weight of trained parameter `i` (and the step's
  /// copy of it).
  void setMaster(size_t i, std::vector<float> value);
  /// Copies the master weights to the step's host values, which
  /// TrainingStep::getParameter and namedParameters read (for saves).
  void syncParametersToHost();

  /// ZeRO-1: collective (every rank calls it); gathers on rank 0 the whole
  /// f32 masters into the step's host values and the whole optimizer
  /// state, which syncParametersToHost and getState then give there (what
  /// saves and evaluations, rank 0's, read). Nothing otherwise.
  llvm::Error gatherShards();
  bool isSharded() const { return !shards.empty(); }
  size_t getNumStateTensors() const { return stateValues.size(); }
  /// Bytes of optimizer state and separate f32 masters this rank holds.
  size_t getOptimizerBytes() const;

  /// The @forward arguments the optimizer updates.
  llvm::ArrayRef<unsigned> getTrainedArguments() const { return trained; }

private:
  Trainer(TrainingStep &step, const LearningRateSchedule &schedule,
          Communicator &comm);
  struct Compiled;
  /// `*sums + grads` in f32 for every trained argument, or `grads` in f32
  /// without sums (widening a bf16 step's gradients); compiled on first
  /// use.
  llvm::Expected<std::vector<DeviceTensor>>
  addGradients(const std::vector<DeviceTensor> *sums,
               std::vector<DeviceTensor> grads);
  /// Whether trained argument `i` is f32 in @forward (its master is the
  /// step's own tensor, or under ZeRO-1 this rank's rows of it).
  bool masterIsModelTensor(size_t i) const;
  /// The step's tensor of trained argument `i` (this rank's rows of it
  /// under ZeRO-1).
  DeviceTensor modelMaster(size_t i) const;

  /// f32 zeros shaped as the trained arguments: the gradient sums of a rank
  /// whose micro-batches count no token.
  std::vector<DeviceTensor> zeroGradients() const;
  /// Sums the gradients and the loss over the ranks, in place.
  llvm::Error reduceOverRanks(std::vector<DeviceTensor> &grads, double &loss);

  // ZeRO-1 (TrainerSharding.cpp).
  /// This rank's dim-0 shard of trained tensor i: rows [firstRow, +rows)
  /// of `rowSize` values; `counts` are every rank's values.
  struct Shard {
    std::vector<size_t> counts;
    int64_t firstRow = 0, rows = 0, rowSize = 1;
  };
  /// Splits every trained tensor and compiles the optimizer step for the
  /// shards, from `module` (set to @forward with its arguments retyped to
  /// them, and the step).
  llvm::Expected<std::unique_ptr<CompiledFunction>>
  shardOptimizer(const OptimizerOptions &options,
                 OwningOpRef<ModuleOp> &module);
  /// Trained tensor i's shape, with this rank's rows under ZeRO-1.
  std::vector<int64_t> shardShape(size_t i) const;
  /// The shard of `full` (trained tensor i's values) this rank owns (all
  /// of it without ZeRO-1).
  llvm::ArrayRef<float> shardOf(size_t i, llvm::ArrayRef<float> full) const;
  /// Every rank's bytes of trained tensor i's shards, `width` bytes a value.
  std::vector<size_t> shardBytes(size_t i, size_t width) const;
  /// State tensor s (kind s / n of trained tensor s % n) named as saves
  /// name it.
  StateTensor stateTensor(size_t s, std::vector<float> values) const;
  /// Reduce-scatters the summed gradients into this rank's shards, sums
  /// the loss, and clips the shards by the global norm (returned).
  llvm::Expected<std::vector<DeviceTensor>>
  scatterGradients(std::vector<DeviceTensor> grads, double &loss, float &norm);
  /// All-gathers the updated shards into every rank's resident parameters
  /// (`copies`: the bf16 shards of bf16 parameters).
  llvm::Error gatherParameters(llvm::ArrayRef<DeviceTensor> copies);
  /// Every rank's shards of `t` (trained tensor i's, f32), whole on rank 0
  /// (empty elsewhere).
  llvm::Expected<std::vector<float>> gatherWhole(size_t i,
                                                 const DeviceTensor &t);

  TrainingStep &trainingStep;
  LearningRateSchedule schedule;
  Communicator &comm;
  std::vector<unsigned> trained;
  std::vector<std::string> stateKinds;
  /// The f32 master weight of each trained argument (the step's own
  /// resident tensor for f32 parameters).
  std::vector<DeviceTensor> masters;
  /// stateValues[kind * trained.size() + i].
  std::vector<DeviceTensor> stateValues;
  /// The trained positions whose model-typed copy the optimizer step
  /// returns after the norm (bf16 parameters).
  std::vector<size_t> modelCopies;
  int64_t step = 0;
  std::unique_ptr<Compiled> compiled;
  OptimizerOptions optimizerOptions;
  /// ZeRO-1: per trained tensor (empty without it), and the whole state
  /// gatherShards() last gathered.
  std::vector<Shard> shards;
  std::vector<StateTensor> gatheredState;
};

/// Runs tfm-add-optimizer-step with `options` on `module` (bf16 copies made
/// by the step).
llvm::Error addOptimizerStep(ModuleOp module, const OptimizerOptions &options);

/// The targets a batch's loss counts: labels after the causal shift
/// (labels[:, 1:]) that are not -100.
int64_t countedTokens(const TokenBatch &batch);

} // namespace mlir::tfm

#endif // TFM_ENGINE_TRAINER_H
