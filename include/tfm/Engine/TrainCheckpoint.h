//===- TrainCheckpoint.h - saving and resuming a training run ---*- C++ -*-===//
//
// A save is a folder OUT/checkpoint-<step> that transformers loads as it
// is: config.json and the input folder's other files (tokenizer, ...),
// the weights under the input's names, dtypes and shards, plus
// optimizer.safetensors (the optimizer state, and the f32 master weights
// when the weights are stored narrower) and trainer_state.json (the update
// count, the data position, the settings and the log). It is written as
// OUT/.checkpoint-<step>.partial and renamed when complete, so a folder
// named checkpoint-<step> is always whole; older saves are removed after.
// The final save's files are also linked into OUT itself.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_TRAINCHECKPOINT_H
#define TFM_ENGINE_TRAINCHECKPOINT_H

#include "tfm/Engine/RunFolder.h"
#include "tfm/Engine/Trainer.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm {

/// The run's progress as a save records it.
struct SavedRun {
  int64_t step = 0;
  /// Micro-batches the data source has given.
  int64_t dataPosition = 0;
  /// JSON object text of the settings a resume must repeat (optimizer,
  /// schedule, batch shape, data); compared on resume.
  std::string settings = "{}";
  std::vector<UpdateLog> log;
  /// The held-out evaluations so far (--eval-data).
  std::vector<EvalLog> evals;
};

/// Writes OUT/checkpoint-<run.step> from `step` (bound from `inputDir`'s
/// layout) and `trainer` (whose weights it first copies to the host), then
/// removes older saves. Errors name the file.
llvm::Error saveTrainingCheckpoint(llvm::StringRef outDir,
                                   llvm::StringRef inputDir,
                                   const TrainingStep &step, Trainer &trainer,
                                   const SavedRun &run);

/// Writes `dir` (created; it must not exist) as a plain checkpoint of the
/// LoRA-trained `step` with its adapters merged: every adapted weight is
/// W + s·B·A, in `inputDir`'s layout and dtypes, with its model files
/// (config.json, tokenizer). Errors name the file.
llvm::Error saveMergedModel(llvm::StringRef dir, llvm::StringRef inputDir,
                            const TrainingStep &step);

/// Puts the files of the save `checkpointDir` into `outDir` as hard links
/// (each linked aside, then renamed over the old one).
llvm::Error publishCheckpoint(llvm::StringRef checkpointDir,
                              llvm::StringRef outDir);

/// OUT/checkpoint-<n> with the largest n, or "" when there is none. Only
/// real folders count (a link named checkpoint-<n> is not a save).
std::string findLatestCheckpoint(llvm::StringRef outDir);

/// n of a folder named checkpoint-<n> (n >= 1, written without leading
/// zeros), or none.
std::optional<int64_t> checkpointStep(llvm::StringRef checkpointDir);

/// Reads `checkpointDir/trainer_state.json`.
llvm::Expected<SavedRun> readSavedRun(llvm::StringRef checkpointDir);

/// Restores `trainer`'s state after `steps` updates, and the f32 master
/// weights when the save has them, from `checkpointDir/optimizer.safetensors`.
/// Errors name a missing or mis-shaped tensor (a save of another model or
/// optimizer).
llvm::Error restoreOptimizer(llvm::StringRef checkpointDir, int64_t steps,
                             TrainingStep &step, Trainer &trainer);

/// Writes `{"steps": [{"step", "loss", "grad_norm", "lr", "tokens_per_s"},
/// ...]}` to `path` (aside, then renamed).
llvm::Error writeTrainLog(llvm::StringRef path, llvm::ArrayRef<UpdateLog> log,
                          llvm::ArrayRef<EvalLog> evals = {});

} // namespace mlir::tfm

#endif // TFM_ENGINE_TRAINCHECKPOINT_H
