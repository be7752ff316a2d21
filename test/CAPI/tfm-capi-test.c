/*===- tfm-capi-test.c - drives the C API end to end ----------------------===*\
|*                                                                            *|
|*   tfm-capi-test CKPT_DIR     a run with gradients: JSON on stdout         *|
|*   tfm-capi-test --errors DIR OUT  each misuse's error, one per line      *|
|*                                                                            *|
|* Plain C99 against tfm-c/Tfm.h only; check_capi.py compares the JSON with  *|
|* Hugging Face's model and torch autograd.                                   *|
\*===----------------------------------------------------------------------===*/

#include "tfm-c/Tfm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, char *error) {
  fprintf(stderr, "tfm-capi-test: %s: %s\n", what, error ? error : "(null)");
  tfmFree(error);
  return 1;
}

static void printTensor(const char *name, const float *data, int64_t rank,
                        const int64_t *shape) {
  int64_t n = 1;
  printf("\"%s\": {\"shape\": [", name);
  for (int64_t d = 0; d < rank; ++d) {
    printf(d ? ", %lld" : "%lld", (long long)shape[d]);
    n *= shape[d];
  }
  printf("], \"data\": [");
  for (int64_t i = 0; i < n; ++i)
    printf(i ? ", %.9g" : "%.9g", data[i]);
  printf("]}");
}

/* Two rows of ids derived from the vocabulary, labels = ids. */
enum { kBatch = 2, kSeq = 7 };
static void makeTokens(int64_t vocab, int64_t *ids) {
  for (int i = 0; i < kBatch * kSeq; ++i)
    ids[i] = (i * 7 + 3) % vocab;
}

static int runWithGradients(const char *dir) {
  char *error;
  tfmModel model = tfmImportHF(dir, &error);
  if (tfmModelIsNull(model))
    return fail("import", error);
  tfmStepOptions options;
  tfmStepOptionsInit(&options);
  options.gradients = true;
  tfmStep step = tfmCompile(model, &options, &error);
  if (tfmStepIsNull(step))
    return fail("compile", error);
  if (!tfmStepBind(step, dir, &error))
    return fail("bind", error);
  int64_t ids[kBatch * kSeq];
  makeTokens(tfmModelVocabSize(model), ids);
  tfmResult result = tfmStepRun(step, kBatch, kSeq, ids, ids, &error);
  if (tfmResultIsNull(result))
    return fail("run", error);

  printf("{\"architecture\": \"%s\", \"parameters\": %lld, ",
         tfmModelArchitecture(model), (long long)tfmModelNumParameters(model));
  printf("\"input_ids\": [");
  for (int i = 0; i < kBatch * kSeq; ++i)
    printf(i ? ", %lld" : "%lld", (long long)ids[i]);
  printf("], \"shape\": [%d, %d], \"loss\": %.9g, ", kBatch, kSeq,
         tfmResultHasLoss(result) ? tfmResultLoss(result) : -1.0f);
  int64_t rank;
  const int64_t *shape;
  const float *logits = tfmResultLogits(result, &rank, &shape);
  if (!logits)
    return fail("logits", NULL);
  printTensor("logits", logits, rank, shape);
  printf(", \"grads\": {");
  for (int64_t i = 0; i < tfmResultNumGradients(result); ++i) {
    const float *g = tfmResultGradient(result, i, &rank, &shape);
    if (i)
      printf(", ");
    printTensor(tfmResultGradientName(result, i), g, rank, shape);
  }
  /* Lookup by name agrees with iteration. */
  const char *first = tfmResultGradientName(result, 0);
  int byName = tfmResultGradientByName(result, first, &rank, &shape) ==
               tfmResultGradient(result, 0, &rank, &shape);
  int missing = tfmResultGradientByName(result, "no.such.tensor", &rank,
                                        &shape) == NULL;
  printf("}, \"lookup_ok\": %s}\n", byName && missing ? "true" : "false");

  char *summary = tfmModelSummaryJson(model);
  char *mlir = tfmModelMLIR(model);
  int ok = summary && strstr(summary, "\"parameters\"") && mlir &&
           strstr(mlir, "func.func @forward");
  tfmFree(summary);
  tfmFree(mlir);
  tfmResultDestroy(result);
  tfmStepDestroy(step);
  tfmModelDestroy(model);
  return ok ? 0 : fail("summary or MLIR text", NULL);
}

/* Each misuse fails with a message (and a null handle), never aborts. */
static int printErrors(const char *dir, const char *out) {
  char *error;
  tfmModel bad = tfmImportHF("/nonexistent/config.json", &error);
  printf("import: %s null=%d\n", error, tfmModelIsNull(bad));
  tfmFree(error);

  tfmModel model = tfmImportHF(dir, &error);
  if (tfmModelIsNull(model))
    return fail("import", error);
  tfmStepOptions options;
  tfmStepOptionsInit(&options);
  options.dtype = "f16";
  tfmStep step = tfmCompile(model, &options, &error);
  printf("dtype: %s null=%d\n", error, tfmStepIsNull(step));
  tfmFree(error);

  tfmStepOptionsInit(&options);
  options.gradients = true;
  step = tfmCompile(model, &options, &error);
  if (tfmStepIsNull(step))
    return fail("compile", error);
  int64_t ids[kBatch * kSeq];
  makeTokens(tfmModelVocabSize(model), ids);
  tfmResult r = tfmStepRun(step, kBatch, kSeq, ids, ids, &error);
  printf("unbound: %s null=%d\n", error, tfmResultIsNull(r));
  tfmFree(error);

  bool bound = tfmStepBind(step, "/nonexistent", &error);
  printf("bind missing: %s bound=%d\n", error, bound);
  tfmFree(error);
  if (!tfmStepBind(step, dir, &error))
    return fail("bind", error);
  ids[3] = tfmModelVocabSize(model);
  r = tfmStepRun(step, kBatch, kSeq, ids, ids, &error);
  printf("vocab: %s null=%d\n", error, tfmResultIsNull(r));
  tfmFree(error);
  r = tfmStepRun(step, kBatch, kSeq, ids, NULL, &error);
  printf("no labels: %s null=%d\n", error, tfmResultIsNull(r));
  tfmFree(error);
  r = tfmStepRun(step, 0, kSeq, ids, ids, &error);
  printf("empty: %s null=%d\n", error, tfmResultIsNull(r));
  tfmFree(error);

  /* Every accessor takes the null handle a failed call returned. */
  int64_t rank = 7;
  const int64_t *shape = ids;
  tfmTensors none = {NULL};
  printf("null handles: %lld %s%s %lld %d %g %g %d %lld %d %d %d %d %lld "
         "%d %d\n",
         (long long)tfmModelNumParameters(bad), tfmModelArchitecture(bad),
         tfmModelType(bad), (long long)tfmModelVocabSize(bad),
         tfmModelSummaryJson(bad) == NULL, tfmResultLoss(r),
         tfmResultStepMs(r), tfmResultHasLoss(r),
         (long long)tfmResultNumGradients(r),
         tfmResultLogits(r, &rank, &shape) == NULL && rank == 0 && !shape,
         tfmResultGradientName(r, 0) == NULL,
         tfmResultGradient(r, 0, NULL, NULL) == NULL,
         tfmResultGradientByName(r, "lm_head.weight", &rank, NULL) == NULL,
         (long long)tfmTensorsSize(none), tfmTensorsName(none, 0) == NULL,
         tfmTensorsData(none, 0, NULL, &shape) == NULL);

  tfmTrainOptions train;
  tfmTrainOptionsInit(&train);
  train.optimizer = "lion";
  char tokens[4096];
  snprintf(tokens, sizeof tokens, "%s/tokens.json", dir);
  int64_t steps = tfmTrain(dir, tokens, out, &train, false, &error);
  printf("train: %s steps=%lld\n", error, (long long)steps);
  tfmFree(error);
  tfmStepDestroy(step);
  tfmModelDestroy(model);
  return 0;
}

/* LoRA from C: a PEFT config as JSON text. Fresh adapters (B zero) leave
   the base's loss; the gradients are the adapter's, under PEFT's names. */
static int runLora(const char *dir, const char *out) {
  char *error;
  tfmModel model = tfmImportHF(dir, &error);
  if (tfmModelIsNull(model))
    return fail("import", error);
  int64_t ids[kBatch * kSeq];
  makeTokens(tfmModelVocabSize(model), ids);
  tfmStepOptions options;
  tfmStepOptionsInit(&options);
  options.gradients = true;
  tfmStep base = tfmCompile(model, &options, &error);
  if (tfmStepIsNull(base) || !tfmStepBind(base, dir, &error))
    return fail("base", error);
  tfmResult baseResult = tfmStepRun(base, kBatch, kSeq, ids, ids, &error);
  if (tfmResultIsNull(baseResult))
    return fail("base run", error);

  options.lora = "{\"r\": 2, \"lora_alpha\": 3, \"target_modules\": "
                 "[\"q_proj\", \"v_proj\"], \"peft_type\": \"LORA\"}";
  options.loraSeed = 3;
  tfmStep step = tfmCompile(model, &options, &error);
  if (tfmStepIsNull(step) || !tfmStepBind(step, dir, &error))
    return fail("lora", error);
  tfmResult r = tfmStepRun(step, kBatch, kSeq, ids, ids, &error);
  if (tfmResultIsNull(r))
    return fail("lora run", error);
  printf("lora: loss as the base's: %d, %lld gradients\n",
         tfmResultLoss(r) == tfmResultLoss(baseResult),
         (long long)tfmResultNumGradients(r));
  for (int64_t i = 0; i < tfmResultNumGradients(r); ++i)
    printf("lora: %s\n", tfmResultGradientName(r, i));
  tfmResultDestroy(r);
  tfmStepDestroy(step);

  options.lora = "{\"r\": 0, \"target_modules\": [\"q_proj\"]}";
  step = tfmCompile(model, &options, &error);
  printf("lora r=0: %s null=%d\n", error, tfmStepIsNull(step));
  tfmFree(error);

  tfmTrainOptions train;
  tfmTrainOptionsInit(&train);
  train.steps = 1;
  train.lora = "{\"r\": 2, \"target_modules\": [\"o_proj\"], "
              "\"peft_type\": \"LORA\"}";
  train.mergeLora = true;
  char tokens[4096];
  snprintf(tokens, sizeof tokens, "%s/tokens.json", dir);
  int64_t steps = tfmTrain(dir, tokens, out, &train, false, &error);
  if (steps != 1)
    return fail("lora train", error);
  printf("lora train: %lld step\n", (long long)steps);
  tfmResultDestroy(baseResult);
  tfmStepDestroy(base);
  tfmModelDestroy(model);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--errors") == 0)
    return printErrors(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "--lora") == 0)
    return runLora(argv[2], argv[3]);
  if (argc != 2) {
    fprintf(stderr, "usage: tfm-capi-test CKPT_DIR | --errors CKPT_DIR OUT_DIR"
                    " | --lora CKPT_DIR OUT_DIR\n");
    return 2;
  }
  printf("version %s\n", tfmVersion());
  return runWithGradients(argv[1]);
}
