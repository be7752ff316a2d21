//===- Evaluation.cpp - held-out loss during a training run ---------------===//

#include "tfm/Engine/Evaluation.h"
#include "tfm/Support/Error.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

llvm::Expected<std::unique_ptr<Evaluator>>
Evaluator::create(const ModelSpec &spec, StepOptions options,
                  std::unique_ptr<TokenDataset> data, int64_t batches) {
  if (batches < 1)
    return makeError("--eval-batches " + llvm::Twine(batches) +
                     " must be at least 1");
  options.gradients = false;
  options.logits = false;
  std::unique_ptr<Evaluator> e(new Evaluator());
  auto step = TrainingStep::create(spec, options);
  if (!step)
    return step.takeError();
  e->step = std::move(*step);
  e->data = std::move(data);
  e->batches = batches;
  return e;
}

std::string Evaluator::describe() const {
  return data->describe() + ", " + std::to_string(batches) + " micro-batches";
}

llvm::Expected<EvalLog> Evaluator::evaluate(TrainingStep &train,
                                            Trainer &trainer) {
  trainer.syncParametersToHost();
  auto named = train.namedParameters();
  if (!named)
    return named.takeError();
  auto checkpoint = checkpointOf(std::move(*named), "<trained weights>");
  if (!checkpoint)
    return checkpoint.takeError();
  if (auto e = step->bind(std::move(*checkpoint)))
    return std::move(e);
  data->seek(0);
  double sum = 0;
  int64_t counted = 0;
  for (int64_t b = 0; b < batches; ++b) {
    TokenBatch batch = data->next();
    int64_t n = countedTokens(batch);
    if (n == 0)
      continue;
    auto result = step->run(batch);
    if (!result)
      return result.takeError();
    sum += double(*result->loss) * double(n);
    counted += n;
  }
  if (counted == 0)
    return makeError("the held-out data has no counted tokens in its first " +
                     llvm::Twine(batches) + " micro-batches");
  EvalLog log;
  log.step = trainer.getStep();
  log.loss = sum / double(counted);
  log.perplexity = std::exp(log.loss);
  log.tokens = counted;
  return log;
}
