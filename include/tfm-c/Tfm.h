/*===-- tfm-c/Tfm.h - C API of the tfm compiler and engine --------*- C -*-===*\
|*                                                                            *|
|* The C interface to tfm, in the style of MLIR's C API: opaque handles      *|
|* (structs holding one pointer, tested with the *IsNull functions), an      *|
|* explicit destroy for each, and no C++ exception or abort across the       *|
|* boundary. A function that can fail takes `char **error`: on failure it    *|
|* returns a null handle (or false) and, when `error` is not NULL, stores a  *|
|* message naming the file, field or op at fault, which the caller frees     *|
|* with tfmFree. On success `*error` is set to NULL.                         *|
|*                                                                            *|
|*   char *err;                                                               *|
|*   tfmModel m = tfmImportHF("ckpt", &err);                                 *|
|*   tfmStepOptions o; tfmStepOptionsInit(&o); o.gradients = true;           *|
|*   tfmStep s = tfmCompile(m, &o, &err);                                    *|
|*   tfmStepBind(s, "ckpt", &err);                                           *|
|*   tfmResult r = tfmStepRun(s, 1, 8, ids, ids, &err);                      *|
|*   float loss = tfmResultLoss(r);                                          *|
|*   tfmResultDestroy(r); tfmStepDestroy(s); tfmModelDestroy(m);             *|
|*                                                                            *|
|* Accessors take the null handle a failed call returns and give a neutral *|
|* value (0, "", NULL; *rank 0), as the *Destroy calls accept it; their     *|
|* `rank` and `shape` out-parameters may be NULL.                            *|
|* Tensors are row-major f32 (bf16 steps' results widened); shapes int64.    *|
|* Pointers a result hands out stay valid until the result is destroyed.    *|
|* A step must not outlive the model it was compiled from; handles are not   *|
|* thread-safe (one thread per step at a time).                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TFM_C_TFM_H
#define TFM_C_TFM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFM_DEFINE_C_API_STRUCT(name)                                          \
  typedef struct name {                                                        \
    void *ptr;                                                                 \
  } name

/// An imported HF model (config and IR).
TFM_DEFINE_C_API_STRUCT(tfmModel);
/// A compiled training step of a model, with its bound checkpoint.
TFM_DEFINE_C_API_STRUCT(tfmStep);
/// What one run of a step returned.
TFM_DEFINE_C_API_STRUCT(tfmResult);
/// Named f32 tensors (a step's parameters).
TFM_DEFINE_C_API_STRUCT(tfmTensors);

#undef TFM_DEFINE_C_API_STRUCT

/// Frees a string the API returned (error messages, JSON, MLIR text).
void tfmFree(void *ptr);

/// The library's version, "MAJOR.MINOR.PATCH".
const char *tfmVersion(void);

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

/// Imports a config.json, or a checkpoint folder holding one.
tfmModel tfmImportHF(const char *path, char **error);
static inline bool tfmModelIsNull(tfmModel model) { return !model.ptr; }
void tfmModelDestroy(tfmModel model);
/// HF's num_parameters() (buffers are not parameters).
int64_t tfmModelNumParameters(tfmModel model);
/// The architecture ("LlamaForCausalLM") and model_type ("llama"); owned by
/// the model.
const char *tfmModelArchitecture(tfmModel model);
const char *tfmModelType(tfmModel model);
/// The vocabulary size (ids must lie in [0, vocab)).
int64_t tfmModelVocabSize(tfmModel model);
/// tfm-import-hf --summary's JSON object; free with tfmFree.
char *tfmModelSummaryJson(tfmModel model);
/// The imported module as MLIR text; free with tfmFree.
char *tfmModelMLIR(tfmModel model);

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// How to compile a step (tfm-run's options). Strings are borrowed for the
/// call only.
typedef struct tfmStepOptions {
  const char *device;     /// "cpu", "cuda" or "gpu-sim"
  const char *dtype;      /// "f32" or "bf16"
  bool fusion;            /// run tfm-fuse
  bool gradients;         /// derive the backward: gradients of the loss
  bool logits;            /// return logits (false: the loss-only step)
  const char *recompute;  /// "save-all", "selective", "full", "0.5", "68KiB"
  const char *freeze;     /// regex of HF names to freeze, or ""
  const char *moeAuxLoss; /// "auto", "on" or "off"
  /// LoRA (NULL: none): a PEFT LoraConfig as JSON (adapter_config.json's
  /// fields, or LoraConfig.to_dict()). The base is frozen; gradients are
  /// the adapter's.
  const char *lora;
  /// An adapter folder as PEFT saves it (NULL: fresh adapters, A drawn
  /// from `loraSeed`, B zero): its tensors are bound with the checkpoint,
  /// and its adapter_config.json is the configuration when `lora` is NULL.
  const char *adapter;
  int64_t loraSeed;
} tfmStepOptions;

/// cpu, f32, fusion on, no gradients, logits, save-all, nothing frozen,
/// moeAuxLoss auto, no LoRA.
void tfmStepOptionsInit(tfmStepOptions *options);

/// Imports the model's step for `options` (nothing is compiled until the
/// first run, so binding can be checked first).
tfmStep tfmCompile(tfmModel model, const tfmStepOptions *options, char **error);
static inline bool tfmStepIsNull(tfmStep step) { return !step.ptr; }
void tfmStepDestroy(tfmStep step);
/// Binds the weights of a checkpoint folder through the weight map.
bool tfmStepBind(tfmStep step, const char *checkpointDir, char **error);
/// A tensor the caller holds: row-major f32 `data` of `shape`.
typedef struct tfmTensor {
  const char *name;
  const float *data;
  int64_t rank;
  const int64_t *shape;
} tfmTensor;
/// Binds `count` tensors by checkpoint name (as a checkpoint folder would
/// hold them), copied during the call: an embedder's own weights (the
/// Python package's torch parameters).
bool tfmStepBindTensors(tfmStep step, const tfmTensor *tensors, int64_t count,
                        char **error);
/// The bound parameters and buffers under their checkpoint names (split per
/// layer, unfused), in name order; a null handle before binding.
tfmTensors tfmStepParameters(tfmStep step, char **error);
/// Runs [batch, seq] `inputIds` (and `labels`, NULL for none; -100 is not
/// counted). Needs labels for gradients or a loss-only step.
tfmResult tfmStepRun(tfmStep step, int64_t batch, int64_t seq,
                     const int64_t *inputIds, const int64_t *labels,
                     char **error);
/// One batch with HF's optional fields, each [batch, seq] or NULL.
typedef struct {
  int64_t batch, seq;
  const int64_t *inputIds;
  /// -100 is not counted.
  const int64_t *labels;
  /// Positions restarting at 0 mark packed documents (HF's flattened-batch
  /// convention); NULL: 0..seq-1 in every row.
  const int64_t *positionIds;
  /// 0/1; 0 marks right padding (its labels are not counted); padding
  /// before a token is an error.
  const int64_t *attentionMask;
} tfmTokenBatch;
/// tfmStepRun with position ids and an attention mask.
tfmResult tfmStepRunBatch(tfmStep step, const tfmTokenBatch *tokens,
                          char **error);

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

static inline bool tfmResultIsNull(tfmResult result) { return !result.ptr; }
void tfmResultDestroy(tfmResult result);
bool tfmResultHasLoss(tfmResult result);
float tfmResultLoss(tfmResult result);
/// Wall time of the compiled step itself.
double tfmResultStepMs(tfmResult result);
/// The [batch, seq, vocab] logits: returns the data (NULL for a loss-only
/// step) and sets `*rank` and `*shape` (owned by the result).
const float *tfmResultLogits(tfmResult result, int64_t *rank,
                             const int64_t **shape);
/// Gradients under checkpoint names, in name order.
int64_t tfmResultNumGradients(tfmResult result);
const char *tfmResultGradientName(tfmResult result, int64_t index);
const float *tfmResultGradient(tfmResult result, int64_t index, int64_t *rank,
                               const int64_t **shape);
/// The gradient of HF tensor `name`, or NULL when the result has none.
const float *tfmResultGradientByName(tfmResult result, const char *name,
                                     int64_t *rank, const int64_t **shape);

static inline bool tfmTensorsIsNull(tfmTensors t) { return !t.ptr; }
void tfmTensorsDestroy(tfmTensors tensors);
int64_t tfmTensorsSize(tfmTensors tensors);
/// Tensor `index`'s name and data (NULL out of range), with its shape.
const char *tfmTensorsName(tfmTensors tensors, int64_t index);
const float *tfmTensorsData(tfmTensors tensors, int64_t index, int64_t *rank,
                            const int64_t **shape);

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

/// What one update did, as tfm-train's progress line shows it.
typedef struct tfmUpdateLog {
  int64_t step;    /// 1-based: updates done after this one
  int64_t steps;   /// the run's total (--steps)
  double loss;     /// the update's batch loss, before the update
  double gradNorm; /// before clipping
  double lr;
  double tokensPerS; /// this update's
  double ms;         /// wall time of the update
} tfmUpdateLog;

/// tfm-train's options (docs/cli.md); strings borrowed for the call.
typedef struct tfmTrainOptions {
  int64_t steps, batch, seq, gradAccum, warmupSteps, saveEvery, shuffleSeed;
  int64_t logEvery; /// a progress line every K updates (and first, last)
  double lr, beta1, beta2, eps, weightDecay, momentum, maxGradNorm;
  bool nesterov, fusion, resume;
  const char *optimizer; /// "adamw" or "sgd"
  const char *decay;     /// "all" or "hf"
  const char *schedule;  /// "constant", "linear" or "cosine"
  const char *device, *dtype, *recompute, *freeze, *moeAuxLoss, *tokenDtype;
  /// LoRA, as tfm-train's --lora-config (a PEFT LoraConfig as JSON text;
  /// NULL: none), --lora-init (an adapter folder; NULL: none), --lora-seed
  /// and --merge-lora.
  const char *lora, *loraInit;
  int64_t loraSeed;
  bool mergeLora;
  /// A prepared corpus (`tokens` a folder) packed into rows (true, the
  /// default) or one document per padded row; held-out data (NULL: none)
  /// evaluated every `evalEvery` updates (0: at the end) over its first
  /// `evalBatches` micro-batches (tfm-train's --no-packing, --eval-data,
  /// --eval-every, --eval-batches).
  bool packing;
  const char *evalData;
  int64_t evalEvery, evalBatches;
  /// Optional (NULL: none). `onProgress` gets each progress line (without
  /// its newline) instead of stdout; `onUpdate` sees each update as it
  /// ends, and returning true stops the run as SIGINT stops tfm-train: the
  /// update is saved and tfmTrain fails with "interrupted at step N, saved
  /// in OUT/checkpoint-N". Both are called on tfmTrain's thread.
  void (*onProgress)(const char *line, void *userData);
  bool (*onUpdate)(const tfmUpdateLog *update, void *userData);
  void *userData;
  /// Under mpirun.mpich every rank calls tfmTrain with the same options
  /// (docs/distributed.md); 1: ZeRO-1, the optimizer state sharded over the
  /// ranks (tfm-train's --zero), 0: whole on every rank.
  int64_t zero;
} tfmTrainOptions;

/// tfm-train's defaults.
void tfmTrainOptionsInit(tfmTrainOptions *options);
/// Trains `checkpointDir` on `tokens` into `outputDir` (the trained model,
/// its saves and train_log.json). `progress`: print tfm-train's lines to
/// stdout. Returns the number of updates the run ends at, or -1 on error.
int64_t tfmTrain(const char *checkpointDir, const char *tokens,
                 const char *outputDir, const tfmTrainOptions *options,
                 bool progress, char **error);

#ifdef __cplusplus
}
#endif

#endif // TFM_C_TFM_H
