//===- Tfm.cpp - C API of the tfm compiler and engine ---------------------===//
//
// Thin wrappers over tfm/Engine: each entry point converts llvm::Error (how
// the engine reports every failure) to the caller's `char **error`, and
// catches the C++ exceptions this file's own code may throw (an allocation
// failure, say), so that none crosses into C.
//
//===----------------------------------------------------------------------===//

#include "tfm-c/Tfm.h"
#include "tfm/Engine/AdapterFiles.h"
#include "tfm/Engine/ImportedModel.h"
#include "tfm/Engine/TrainRun.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/Support/CommandLine.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct StepHandle {
  std::unique_ptr<TrainingStep> step;
  bool bound = false;
  /// With LoRA: the adapter folder bound with every checkpoint (empty:
  /// fresh adapters from `loraSeed`).
  std::string adapter;
  uint64_t loraSeed = 0;
};
struct ResultHandle {
  StepResult result;
  std::map<std::string, size_t, std::less<>> byName;
};
} // namespace

static ImportedModel *unwrap(tfmModel m) {
  return static_cast<ImportedModel *>(m.ptr);
}
static StepHandle *unwrap(tfmStep s) {
  return static_cast<StepHandle *>(s.ptr);
}
static ResultHandle *unwrap(tfmResult r) {
  return static_cast<ResultHandle *>(r.ptr);
}
static std::vector<NamedGradient> *unwrap(tfmTensors t) {
  return static_cast<std::vector<NamedGradient> *>(t.ptr);
}

static char *copyString(llvm::StringRef s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (!out)
    return nullptr;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = 0;
  return out;
}

static void setError(char **error, llvm::StringRef message) {
  if (error)
    *error = copyString(message);
}
static void clearError(char **error) {
  if (error)
    *error = nullptr;
}

/// Runs `body`, turning an llvm::Error it returns (or an exception it
/// throws) into `*error` and `failed`.
template <typename T, typename Body>
static T guarded(char **error, T failed, Body body) {
  clearError(error);
  try {
    llvm::Expected<T> value = body();
    if (value)
      return *value;
    setError(error, llvm::toString(value.takeError()));
  } catch (const std::exception &e) {
    setError(error, std::string("internal error: ") + e.what());
  } catch (...) {
    setError(error, "internal error: unknown exception");
  }
  return failed;
}

/// Hands each complete line written to it to `callback` (without its
/// newline): tfmTrain's progress for embedders that print their own way
/// (Python's sys.stdout).
class LineCallbackStream : public llvm::raw_ostream {
public:
  LineCallbackStream(void (*callback)(const char *, void *), void *userData)
      : callback(callback), userData(userData) {
    SetUnbuffered();
  }
  ~LineCallbackStream() override { flush(); }

private:
  void write_impl(const char *ptr, size_t size) override {
    written += size;
    for (size_t i = 0; i < size; ++i) {
      if (ptr[i] != '\n') {
        pending += ptr[i];
        continue;
      }
      if (callback)
        callback(pending.c_str(), userData);
      pending.clear();
    }
  }
  uint64_t current_pos() const override { return written; }

  void (*callback)(const char *, void *);
  void *userData;
  std::string pending;
  uint64_t written = 0;
};

static std::string orDefault(const char *s, const char *fallback) {
  return s ? s : fallback;
}

extern "C" {

void tfmFree(void *ptr) { std::free(ptr); }

const char *tfmVersion(void) { return getTfmVersion().data(); }

tfmModel tfmImportHF(const char *path, char **error) {
  return guarded<tfmModel>(error, {nullptr}, [&]() -> llvm::Expected<tfmModel> {
    if (!path)
      return llvm::createStringError("tfmImportHF: path is NULL");
    auto model = ImportedModel::import(path);
    if (!model)
      return model.takeError();
    return tfmModel{model->release()};
  });
}

void tfmModelDestroy(tfmModel model) { delete unwrap(model); }

// Accessors take the null handle every failed call returns and give a
// neutral value (0, "", NULL), as the *Destroy calls accept it.
int64_t tfmModelNumParameters(tfmModel model) {
  return model.ptr ? unwrap(model)->getNumParameters() : 0;
}
const char *tfmModelArchitecture(tfmModel model) {
  return model.ptr ? unwrap(model)->getSpec().architecture.c_str() : "";
}
const char *tfmModelType(tfmModel model) {
  return model.ptr ? unwrap(model)->getSpec().modelType.c_str() : "";
}
int64_t tfmModelVocabSize(tfmModel model) {
  return model.ptr ? unwrap(model)->getSpec().vocabSize : 0;
}
char *tfmModelSummaryJson(tfmModel model) {
  return model.ptr ? copyString(unwrap(model)->getSummaryJson()) : nullptr;
}
char *tfmModelMLIR(tfmModel model) {
  return model.ptr ? copyString(unwrap(model)->getMLIR()) : nullptr;
}

void tfmStepOptionsInit(tfmStepOptions *o) {
  *o = tfmStepOptions{"cpu", "f32",  true,    false,   true, "save-all",
                      "",    "auto", nullptr, nullptr, 0};
}

tfmStep tfmCompile(tfmModel model, const tfmStepOptions *o, char **error) {
  return guarded<tfmStep>(error, {nullptr}, [&]() -> llvm::Expected<tfmStep> {
    if (!model.ptr || !o)
      return llvm::createStringError("tfmCompile: model or options is NULL");
    llvm::Expected<Device> device = parseDevice(orDefault(o->device, "cpu"));
    if (!device)
      return device.takeError();
    llvm::Expected<Precision> precision =
        parsePrecision(orDefault(o->dtype, "f32"));
    if (!precision)
      return precision.takeError();
    StepOptions options;
    options.compile = {*device, /*useBlas=*/true, ""};
    options.precision = *precision;
    options.gradients = o->gradients;
    options.fuse = o->fusion;
    options.logits = o->logits;
    options.recompute = orDefault(o->recompute, "save-all");
    options.freeze = orDefault(o->freeze, "");
    if (o->lora) {
      llvm::Expected<LoraConfig> lora = parseLoraConfig(o->lora, "lora");
      if (!lora)
        return lora.takeError();
      options.lora = std::move(*lora);
    } else if (o->adapter) {
      llvm::Expected<LoraConfig> lora = readLoraConfig(o->adapter);
      if (!lora)
        return lora.takeError();
      options.lora = std::move(*lora);
    }
    auto step =
        unwrap(model)->createStep(options, orDefault(o->moeAuxLoss, "auto"));
    if (!step)
      return step.takeError();
    return tfmStep{new StepHandle{std::move(*step), false,
                                  orDefault(o->adapter, ""),
                                  uint64_t(o->loraSeed)}};
  });
}

void tfmStepDestroy(tfmStep step) { delete unwrap(step); }

/// Binds `checkpoint` (or passes on why there is none).
static llvm::Expected<bool>
bindCheckpoint(tfmStep step, llvm::Expected<Checkpoint> checkpoint) {
  if (!checkpoint)
    return checkpoint.takeError();
  StepHandle &h = *unwrap(step);
  if (h.step->getLoraSummary())
    if (llvm::Error e = addLoraAdapter(*checkpoint, *h.step->getLoraSummary(),
                                       h.adapter, h.loraSeed))
      return std::move(e);
  if (llvm::Error e = unwrap(step)->step->bind(std::move(*checkpoint)))
    return std::move(e);
  unwrap(step)->bound = true;
  return true;
}

bool tfmStepBind(tfmStep step, const char *checkpointDir, char **error) {
  return guarded<bool>(error, false, [&]() -> llvm::Expected<bool> {
    if (!step.ptr || !checkpointDir)
      return llvm::createStringError("tfmStepBind: step or folder is NULL");
    return bindCheckpoint(step, Checkpoint::open(checkpointDir));
  });
}

bool tfmStepBindTensors(tfmStep step, const tfmTensor *tensors, int64_t count,
                        char **error) {
  return guarded<bool>(error, false, [&]() -> llvm::Expected<bool> {
    if (!step.ptr || (count && !tensors) || count < 0)
      return llvm::createStringError(
          "tfmStepBindTensors: step or tensors is NULL");
    // One owned copy of every tensor, which the checkpoint keeps alive.
    auto storage = std::make_shared<std::vector<std::vector<float>>>(count);
    std::vector<TensorView> views;
    for (int64_t i = 0; i < count; ++i) {
      const tfmTensor &t = tensors[i];
      if (!t.name || t.rank < 0 || (t.rank && !t.shape))
        return llvm::createStringError("tfmStepBindTensors: tensor " +
                                       std::to_string(i) +
                                       " has no name or shape");
      TensorView view;
      view.name = t.name;
      view.dtype = DType::F32;
      view.shape.assign(t.shape, t.shape + t.rank);
      view.file = "<tensor " + view.name + ">";
      int64_t n = 1;
      for (int64_t d : view.shape) {
        if (d < 0 || (d && n > (int64_t(1) << 40) / d))
          return llvm::createStringError("tfmStepBindTensors: tensor '" +
                                         view.name + "' has a bad shape");
        n *= d;
      }
      if (n && !t.data)
        return llvm::createStringError("tfmStepBindTensors: tensor '" +
                                       view.name + "' has no data");
      (*storage)[i].assign(t.data, t.data + n);
      view.data = reinterpret_cast<const char *>((*storage)[i].data());
      view.numBytes = n * sizeof(float);
      views.push_back(std::move(view));
    }
    return bindCheckpoint(step,
                          Checkpoint::fromTensors(std::move(views), storage));
  });
}

tfmTensors tfmStepParameters(tfmStep step, char **error) {
  return guarded<tfmTensors>(
      error, {nullptr}, [&]() -> llvm::Expected<tfmTensors> {
        if (!step.ptr || !unwrap(step)->bound)
          return llvm::createStringError(
              "tfmStepParameters: the step has no parameters: bind a "
              "checkpoint first");
        auto named = unwrap(step)->step->namedParameters();
        if (!named)
          return named.takeError();
        return tfmTensors{new std::vector<NamedGradient>(std::move(*named))};
      });
}

void tfmTensorsDestroy(tfmTensors tensors) { delete unwrap(tensors); }
int64_t tfmTensorsSize(tfmTensors tensors) {
  return tensors.ptr ? unwrap(tensors)->size() : 0;
}
/// Sets the optional out-parameters of a tensor accessor.
static void setShape(int64_t *rank, const int64_t **shape,
                     const std::vector<int64_t> *dims) {
  if (rank)
    *rank = dims ? dims->size() : 0;
  if (shape)
    *shape = dims ? dims->data() : nullptr;
}
const char *tfmTensorsName(tfmTensors tensors, int64_t index) {
  if (index < 0 || index >= tfmTensorsSize(tensors))
    return nullptr;
  return (*unwrap(tensors))[index].name.c_str();
}
const float *tfmTensorsData(tfmTensors tensors, int64_t index, int64_t *rank,
                            const int64_t **shape) {
  setShape(rank, shape, nullptr);
  if (index < 0 || index >= tfmTensorsSize(tensors))
    return nullptr;
  const NamedGradient &t = (*unwrap(tensors))[index];
  setShape(rank, shape, &t.shape);
  return t.data.data();
}

tfmResult tfmStepRun(tfmStep step, int64_t batch, int64_t seq,
                     const int64_t *inputIds, const int64_t *labels,
                     char **error) {
  tfmTokenBatch tokens{batch, seq, inputIds, labels, nullptr, nullptr};
  return tfmStepRunBatch(step, &tokens, error);
}

tfmResult tfmStepRunBatch(tfmStep step, const tfmTokenBatch *in, char **error) {
  return guarded<tfmResult>(
      error, {nullptr}, [&]() -> llvm::Expected<tfmResult> {
        if (!step.ptr || !in || !in->inputIds)
          return llvm::createStringError("tfmStepRun: step or ids is NULL");
        int64_t batch = in->batch, seq = in->seq;
        if (batch < 1 || seq < 1 || batch > (int64_t(1) << 40) / seq)
          return llvm::createStringError(
              "tfmStepRun: batch and seq must be >= 1 (got " +
              std::to_string(batch) + " x " + std::to_string(seq) + ")");
        TokenBatch tokens;
        tokens.batch = batch;
        tokens.seq = seq;
        auto copy = [&](const int64_t *from, std::vector<int64_t> &to) {
          if (from)
            to.assign(from, from + batch * seq);
        };
        copy(in->inputIds, tokens.inputIds);
        copy(in->labels, tokens.labels);
        copy(in->positionIds, tokens.positionIds);
        if (in->attentionMask)
          if (llvm::Error e = applyAttentionMask(
                  tokens, llvm::ArrayRef(in->attentionMask, batch * seq),
                  "attention_mask"))
            return std::move(e);
        auto result = unwrap(step)->step->run(tokens);
        if (!result)
          return result.takeError();
        auto handle = std::make_unique<ResultHandle>();
        handle->result = std::move(*result);
        for (size_t i = 0; i < handle->result.gradients.size(); ++i)
          handle->byName.emplace(handle->result.gradients[i].name, i);
        return tfmResult{handle.release()};
      });
}

void tfmResultDestroy(tfmResult result) { delete unwrap(result); }

bool tfmResultHasLoss(tfmResult result) {
  return result.ptr && unwrap(result)->result.loss.has_value();
}
float tfmResultLoss(tfmResult result) {
  return result.ptr ? unwrap(result)->result.loss.value_or(0.0f) : 0.0f;
}
double tfmResultStepMs(tfmResult result) {
  return result.ptr ? unwrap(result)->result.stepMs : 0.0;
}

const float *tfmResultLogits(tfmResult result, int64_t *rank,
                             const int64_t **shape) {
  setShape(rank, shape, nullptr);
  if (!result.ptr)
    return nullptr;
  const HostArray &logits = unwrap(result)->result.logits;
  setShape(rank, shape, &logits.shape);
  return logits.f32.empty() ? nullptr : logits.f32.data();
}

int64_t tfmResultNumGradients(tfmResult result) {
  return result.ptr ? unwrap(result)->result.gradients.size() : 0;
}
const char *tfmResultGradientName(tfmResult result, int64_t index) {
  if (index < 0 || index >= tfmResultNumGradients(result))
    return nullptr;
  return unwrap(result)->result.gradients[index].name.c_str();
}
const float *tfmResultGradient(tfmResult result, int64_t index, int64_t *rank,
                               const int64_t **shape) {
  setShape(rank, shape, nullptr);
  if (index < 0 || index >= tfmResultNumGradients(result))
    return nullptr;
  const NamedGradient &g = unwrap(result)->result.gradients[index];
  setShape(rank, shape, &g.shape);
  return g.data.data();
}
const float *tfmResultGradientByName(tfmResult result, const char *name,
                                     int64_t *rank, const int64_t **shape) {
  setShape(rank, shape, nullptr);
  if (!result.ptr || !name)
    return nullptr;
  auto &byName = unwrap(result)->byName;
  auto it = byName.find(llvm::StringRef(name));
  if (it == byName.end())
    return nullptr;
  return tfmResultGradient(result, it->second, rank, shape);
}

void tfmTrainOptionsInit(tfmTrainOptions *o) {
  TrainRunOptions d;
  *o = tfmTrainOptions{};
  o->steps = d.steps;
  o->batch = d.batch;
  o->seq = d.seq;
  o->gradAccum = d.gradAccum;
  o->warmupSteps = d.warmupSteps;
  o->saveEvery = d.saveEvery;
  o->logEvery = d.logEvery;
  o->shuffleSeed = d.shuffleSeed;
  o->lr = d.lr;
  o->beta1 = d.optimizer.beta1;
  o->beta2 = d.optimizer.beta2;
  o->eps = d.optimizer.eps;
  o->weightDecay = d.optimizer.weightDecay;
  o->momentum = d.optimizer.momentum;
  o->maxGradNorm = d.optimizer.maxGradNorm;
  o->nesterov = d.optimizer.nesterov;
  o->fusion = d.fusion;
  o->resume = d.resume;
  // String literals, so the defaults outlive this call.
  o->optimizer = "adamw";
  o->decay = "all";
  o->schedule = "constant";
  o->device = "cpu";
  o->dtype = "f32";
  o->recompute = "save-all";
  o->freeze = "";
  o->moeAuxLoss = "auto";
  o->tokenDtype = "uint16";
  o->lora = nullptr;
  o->loraInit = nullptr;
  o->loraSeed = 0;
  o->mergeLora = false;
  o->packing = d.packing;
  o->evalData = nullptr;
  o->evalEvery = d.evalEvery;
  o->evalBatches = d.evalBatches;
  o->zero = d.zero;
}

int64_t tfmTrain(const char *checkpointDir, const char *tokens,
                 const char *outputDir, const tfmTrainOptions *o, bool progress,
                 char **error) {
  return guarded<int64_t>(error, -1, [&]() -> llvm::Expected<int64_t> {
    if (!checkpointDir || !tokens || !outputDir || !o)
      return llvm::createStringError("tfmTrain: an argument is NULL");
    TrainRunOptions r;
    r.checkpointDir = checkpointDir;
    r.tokensPath = tokens;
    r.outputDir = outputDir;
    r.steps = o->steps;
    r.batch = o->batch;
    r.seq = o->seq;
    r.gradAccum = o->gradAccum;
    r.warmupSteps = o->warmupSteps;
    r.saveEvery = o->saveEvery;
    r.logEvery = o->logEvery;
    r.shuffleSeed = o->shuffleSeed;
    r.lr = o->lr;
    r.optimizer.optimizer = orDefault(o->optimizer, "adamw");
    r.optimizer.beta1 = o->beta1;
    r.optimizer.beta2 = o->beta2;
    r.optimizer.eps = o->eps;
    r.optimizer.weightDecay = o->weightDecay;
    r.optimizer.decay = orDefault(o->decay, "all");
    r.optimizer.momentum = o->momentum;
    r.optimizer.nesterov = o->nesterov;
    r.optimizer.maxGradNorm = o->maxGradNorm;
    r.schedule = orDefault(o->schedule, "constant");
    r.fusion = o->fusion;
    r.resume = o->resume;
    r.device = orDefault(o->device, "cpu");
    r.dtype = orDefault(o->dtype, "f32");
    r.recompute = orDefault(o->recompute, "save-all");
    r.freeze = orDefault(o->freeze, "");
    r.moeAuxLoss = orDefault(o->moeAuxLoss, "auto");
    r.tokenDtype = orDefault(o->tokenDtype, "uint16");
    r.packing = o->packing;
    r.evalPath = o->evalData ? o->evalData : "";
    r.evalEvery = o->evalEvery;
    r.evalBatches = o->evalBatches;
    r.zero = int(o->zero);
    if (o->lora) {
      llvm::Expected<LoraConfig> lora = parseLoraConfig(o->lora, "lora");
      if (!lora)
        return lora.takeError();
      r.lora = std::move(*lora);
    }
    r.loraInit = orDefault(o->loraInit, "");
    r.loraSeed = uint64_t(o->loraSeed);
    r.mergeLora = o->mergeLora;
    LineCallbackStream lines(o->onProgress, o->userData);
    llvm::raw_ostream *progressStream = nullptr;
    if (o->onProgress)
      progressStream = &lines;
    else if (progress)
      progressStream = &llvm::outs();
    std::atomic<bool> stop{false};
    r.interrupted = &stop;
    auto onUpdate = [&](const UpdateLog &l) {
      if (!o->onUpdate)
        return;
      tfmUpdateLog c{l.step, r.steps,
                     l.loss, l.gradNorm,
                     l.lr,   l.ms > 0 ? l.tokens / (l.ms / 1e3) : 0,
                     l.ms};
      if (o->onUpdate(&c, o->userData))
        stop = true;
    };
    auto log = runTraining(r, progressStream, onUpdate);
    lines.flush();
    // A closed or full stdout must not become LLVM's fatal "IO failure"
    // when the embedding process exits: progress is best effort.
    llvm::outs().flush();
    if (llvm::outs().has_error())
      llvm::outs().clear_error();
    if (!log)
      return log.takeError();
    return log->empty() ? int64_t(0) : log->back().step;
  });
}

} // extern "C"
