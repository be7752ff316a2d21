//===- Evaluation.h - held-out loss during a training run -------*- C++ -*-===//
//
// A loss-only step (no gradients, no logits) compiled beside the training
// step, bound to the training step's current weights before each
// evaluation, run on the first `batches` micro-batches of held-out data (the
// same ones every time, so evaluations compare). The loss is the mean over
// every counted token of those micro-batches; the perplexity its exp.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_EVALUATION_H
#define TFM_ENGINE_EVALUATION_H

#include "tfm/Engine/TokenDataset.h"
#include "tfm/Engine/Trainer.h"
#include "tfm/Engine/TrainingStep.h"

#include <memory>

namespace mlir::tfm {

class Evaluator {
public:
  /// `options` are the training step's (the evaluation step drops its
  /// gradients and logits); at most `batches` micro-batches of `data`.
  static llvm::Expected<std::unique_ptr<Evaluator>>
  create(const ModelSpec &spec, StepOptions options,
         std::unique_ptr<TokenDataset> data, int64_t batches);

  /// The held-out loss of `train`'s current weights (`trainer`'s masters
  /// synced to it first), after `trainer.getStep()` updates.
  llvm::Expected<EvalLog> evaluate(TrainingStep &train, Trainer &trainer);
  std::string describe() const;

private:
  Evaluator() = default;
  std::unique_ptr<TrainingStep> step;
  std::unique_ptr<TokenDataset> data;
  int64_t batches = 0;
};

} // namespace mlir::tfm

#endif // TFM_ENGINE_EVALUATION_H
