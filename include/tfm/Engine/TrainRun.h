//===- TrainRun.h - a whole training run, as tfm-train does it --*- C++ -*-===//
//
// What tfm-train, tfm.train (Python) and tfmTrain (C) share: N updates of
// a checkpoint's compiled training step and optimizer step over a token
// file or dataset, saves OUT/checkpoint-<step> (whole or absent), and at
// the end the trained model in OUT itself, in the input checkpoint's
// layout, with OUT/train_log.json. A failed run leaves no partial output
// (an output folder it created is removed again if still empty). Under
// mpirun.mpich every rank runs it with the same options: the ranks share
// each update's batch, and a rank that fails ends them all.
//
//   TrainRunOptions o;
//   o.checkpointDir = "ckpt"; o.tokensPath = "tokens.json";
//   o.outputDir = "out"; o.steps = 10;
//   llvm::Expected<std::vector<UpdateLog>> log = runTraining(o, &llvm::outs());
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_TRAINRUN_H
#define TFM_ENGINE_TRAINRUN_H

#include "tfm/Adapters/LoraConfig.h"
#include "tfm/Engine/Trainer.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <string>
#include <vector>

namespace mlir::tfm {

/// Every setting of a run (tfm-train's options; docs/cli.md).
struct TrainRunOptions {
  std::string checkpointDir;
  /// tokens.json (every update's batch, split into gradAccum micro-batches)
  /// or a .npy/.bin dataset of uint16/uint32 ids (batch x seq windows).
  std::string tokensPath;
  std::string outputDir;
  int64_t steps = 20;
  int64_t batch = 1, seq = 128;
  /// Visit the dataset's windows in a seeded order (-1: in order).
  int64_t shuffleSeed = -1;
  /// Id type of a .bin dataset.
  std::string tokenDtype = "uint16";
  /// A prepared corpus (tokensPath a folder): documents packed into
  /// windows; false: one document per padded window.
  bool packing = true;
  OptimizerOptions optimizer{
      /*optimizer=*/"adamw", 0.9, 0.999, 1e-8,  0.01,
      /*decay=*/"all",       0,   0,     false,
      /*maxGradNorm=*/1.0};
  double lr = 1e-3;
  int64_t warmupSteps = 0;
  /// constant, linear or cosine (after warm-up).
  std::string schedule = "constant";
  int64_t gradAccum = 1;
  /// Regular expression of HF tensor names not to train.
  std::string freeze;
  /// LoRA: train adapters on the targeted projections (the base model is
  /// frozen); saves and OUT hold the adapter as PEFT does
  /// (adapter_config.json, adapter_model.safetensors).
  std::optional<LoraConfig> lora;
  /// An adapter folder to start from (PEFT's layout; its adapter_config.json
  /// is the configuration when `lora` is unset). Empty: fresh adapters.
  std::string loraInit;
  /// The seed of fresh adapters' A.
  uint64_t loraSeed = 0;
  /// OUT also holds the merged model (W + s·B·A, the base's layout) in
  /// OUT/merged, which AutoModelForCausalLM loads without PEFT.
  bool mergeLora = false;
  std::string device = "cpu", dtype = "f32";
  std::string recompute = "save-all";
  std::string moeAuxLoss = "auto";
  bool fusion = true;
  /// Save every K updates (0: at the end only).
  int64_t saveEvery = 0;
  /// Held-out data (a dataset, prepared folder or tokens.json, read like
  /// tokensPath): its loss every `evalEvery` updates (0: at the end only)
  /// over its first `evalBatches` micro-batches, in the log, train_log.json
  /// and OUT/loss.svg.
  std::string evalPath;
  int64_t evalEvery = 0, evalBatches = 8;
  /// A progress line every K updates (and the first and the last).
  int64_t logEvery = 1;
  /// Continue the run saved in outputDir from its last save (a save of
  /// the run's last update is published as the trained model).
  bool resume = false;
  /// The ranks that train together (docs/distributed.md); null: the
  /// world, MPI's when mpirun.mpich started several, else this process.
  /// Each rank runs --grad-accum micro-batches of every update; rank 0
  /// alone writes OUT.
  Communicator *comm = nullptr;
  /// 1: ZeRO-1, each rank keeps the optimizer state (and bf16 models' f32
  /// masters) of a dim-0 shard of every trained tensor; 0: whole on every
  /// rank.
  int zero = 0;
  /// When set and true at the end of an update (a signal handler sets it),
  /// the run saves that update and ends with the error "interrupted at step
  /// N, saved in OUT/checkpoint-N".
  const std::atomic<bool> *interrupted = nullptr;
};

/// Runs the training `o` describes. Progress (a line per update, a first
/// and a last line) goes to `progress` unless it is null; `onUpdate`, when
/// given, sees each update's log as it ends. Returns the log of every
/// update of the run (a resumed one's earlier updates included). Errors
/// name the option, file or field at fault.
llvm::Expected<std::vector<UpdateLog>>
runTraining(const TrainRunOptions &o, llvm::raw_ostream *progress,
            llvm::function_ref<void(const UpdateLog &)> onUpdate = {});

} // namespace mlir::tfm

#endif // TFM_ENGINE_TRAINRUN_H
