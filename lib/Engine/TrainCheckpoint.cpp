//===- TrainCheckpoint.cpp - saving and resuming a training run -----------===//

#include "tfm/Engine/TrainCheckpoint.h"
#include "tfm/Engine/AdapterFiles.h"
#include "tfm/Support/BFloat16.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::tfm;
using json = nlohmann::ordered_json;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

static constexpr llvm::StringLiteral kCheckpointPrefix = "checkpoint-";
static constexpr llvm::StringLiteral kIndexFile =
    "model.safetensors.index.json";
static constexpr llvm::StringLiteral kOptimizerFile = "optimizer.safetensors";
static constexpr llvm::StringLiteral kStateFile = "trainer_state.json";

/// f32 values as `dtype` bytes (the checkpoint's own dtype).
static std::vector<char> encode(const std::vector<float> &values, DType dtype) {
  std::vector<char> out(values.size() * dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    char *p = out.data() + i * dtypeSize(dtype);
    switch (dtype) {
    case DType::F64: {
      double d = values[i];
      std::memcpy(p, &d, 8);
      break;
    }
    case DType::BF16: {
      uint16_t b = floatToBF16Bits(values[i]);
      std::memcpy(p, &b, 2);
      break;
    }
    case DType::F16: {
      llvm::APFloat f(values[i]);
      bool lost;
      f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      uint16_t b = uint16_t(f.bitcastToAPInt().getZExtValue());
      std::memcpy(p, &b, 2);
      break;
    }
    default:
      std::memcpy(p, &values[i], 4);
    }
  }
  return out;
}

static json evalEntry(const EvalLog &e) {
  return {{"step", e.step},
          {"loss", e.loss},
          {"perplexity", e.perplexity},
          {"tokens", e.tokens}};
}

static json logEntry(const UpdateLog &l) {
  return {{"step", l.step},
          {"loss", l.loss},
          {"grad_norm", l.gradNorm},
          {"lr", l.lr},
          {"tokens_per_s", l.ms > 0 ? double(l.tokens) / (l.ms / 1000.0) : 0.0},
          {"tokens", l.tokens},
          {"counted_tokens", l.countedTokens},
          {"ms", l.ms},
          {"optimizer_ms", l.optimizerMs},
          {"communication_ms", l.communicationMs},
          {"staged_bytes", l.stagedBytes}};
}

llvm::Error mlir::tfm::writeTrainLog(llvm::StringRef file,
                                     llvm::ArrayRef<UpdateLog> log,
                                     llvm::ArrayRef<EvalLog> evals) {
  json steps = json::array();
  for (const UpdateLog &l : log)
    steps.push_back(logEntry(l));
  json root{{"steps", steps}};
  if (!evals.empty()) {
    json held = json::array();
    for (const EvalLog &e : evals)
      held.push_back(evalEntry(e));
    root["eval"] = held;
  }
  return writeFileAtomically(file, root.dump(1) + "\n");
}

/// Whether `name` is one of the files an HF model folder carries besides
/// its weights: the configs and the tokenizer's (not data or logs).
static bool isModelFile(llvm::StringRef name) {
  return name == "config.json" || name == "generation_config.json" ||
         name.starts_with("tokenizer") || name.starts_with("vocab.") ||
         name.starts_with("chat_template") || name.ends_with(".tiktoken") ||
         name == "merges.txt" || name == "special_tokens_map.json" ||
         name == "added_tokens.json";
}

/// Copies the model files of `inputDir` (isModelFile) into `dest`.
static llvm::Error copyModelFiles(llvm::StringRef inputDir,
                                  llvm::StringRef dest) {
  std::error_code ec;
  for (fs::directory_iterator it(inputDir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = path::filename(it->path());
    if (it->type() != fs::file_type::regular_file || !isModelFile(name))
      continue;
    if (std::error_code cec = fs::copy_file(it->path(), childPath(dest, name)))
      return makeError(childPath(dest, name) +
                       ": cannot copy: " + cec.message());
  }
  if (ec)
    return makeError(inputDir + ": cannot list: " + ec.message());
  return llvm::Error::success();
}

/// The model's tensors into `dir` in the layout of `step`'s checkpoint.
static llvm::Error writeWeights(llvm::StringRef dir, bool sharded,
                                const TrainingStep &step,
                                std::vector<NamedGradient> &tensors) {
  const Checkpoint &input = step.getCheckpoint();
  std::map<std::string, std::vector<TensorOut>> files;
  std::vector<std::vector<char>> storage;
  storage.reserve(tensors.size());
  json weightMap = json::object();
  uint64_t total = 0;
  for (const NamedGradient &t : tensors) {
    const TensorView *view = input.find(t.name);
    DType dtype = view ? view->dtype : DType::F32;
    std::string file = sharded && view ? path::filename(view->file).str()
                                       : "model.safetensors";
    storage.push_back(encode(t.data, dtype));
    total += storage.back().size();
    files[file].push_back({t.name, dtype, t.shape, storage.back().data()});
    weightMap[t.name] = file;
  }
  for (auto &[file, list] : files)
    if (auto e =
            writeSafetensors(childPath(dir, file), list, {{"format", "pt"}}))
      return e;
  if (!sharded)
    return llvm::Error::success();
  json index = {{"metadata", {{"total_size", total}}},
                {"weight_map", weightMap}};
  return writeFileAtomically(childPath(dir, kIndexFile), index.dump(2) + "\n");
}

/// Whether any tensor of the checkpoint is stored narrower than f32 (then a
/// save keeps the f32 master weights in optimizer.safetensors).
static bool storedNarrow(const Checkpoint &checkpoint) {
  for (const std::string &n : checkpoint.names()) {
    DType d = checkpoint.find(n)->dtype;
    if (d == DType::BF16 || d == DType::F16)
      return true;
  }
  return false;
}

static std::string masterName(const TrainingStep &step, unsigned arg) {
  return "master/" + std::to_string(arg) + "/" +
         step.getParam(arg).getName().str();
}

/// The step of a directory entry that is one of this run's saves: a real
/// folder (never a link) named checkpoint-<step>.
static std::optional<int64_t> saveStepOf(const fs::directory_entry &entry) {
  if (entry.type() != fs::file_type::directory_file)
    return std::nullopt;
  return checkpointStep(entry.path());
}

/// The first NaN or infinity of `values` (values.end() when none): what a
/// save never holds, checked when it is written and when it is read.
static const float *firstNonFinite(llvm::ArrayRef<float> values) {
  return llvm::find_if(values, [](float x) { return !std::isfinite(x); });
}

/// An error naming `what` when `values` holds a NaN or an infinity.
static llvm::Error checkFinite(llvm::ArrayRef<float> values,
                               const llvm::Twine &what, int64_t step) {
  const float *bad = firstNonFinite(values);
  if (bad == values.end())
    return llvm::Error::success();
  return makeError("after update " + llvm::Twine(step) + ", " + what +
                   " holds a non-finite value (" +
                   llvm::Twine(std::isnan(*bad) ? "nan" : "inf") +
                   " at element " + llvm::Twine(bad - values.begin()) +
                   "): not saved; the run diverged");
}

llvm::Error mlir::tfm::saveTrainingCheckpoint(llvm::StringRef outDir,
                                              llvm::StringRef inputDir,
                                              const TrainingStep &step,
                                              Trainer &trainer,
                                              const SavedRun &run) {
  // The trained values are on the device: bring them to the step's host
  // copies, which namedParameters() and getParameter() read.
  trainer.syncParametersToHost();
  std::string name = (kCheckpointPrefix + llvm::Twine(run.step)).str();
  std::string final = childPath(outDir, name);
  std::string partial = childPath(outDir, "." + name + ".partial");
  // Left by a killed run (or planted as a link): removed, never followed,
  // and created anew (not reused) so that nothing in it is a link.
  if (std::error_code ec = removeTreeNoFollow(partial))
    return makeError(partial + ": cannot remove: " + ec.message());
  if (std::error_code ec =
          fs::create_directory(partial, /*IgnoreExisting=*/false))
    return makeError(partial + ": cannot create: " + ec.message());
  auto body = [&]() -> llvm::Error {
    llvm::Expected<std::vector<NamedGradient>> tensors = step.namedParameters();
    if (!tensors)
      return tensors.takeError();
    // A save is always a state to resume from: never non-finite weights.
    for (const NamedGradient &t : *tensors)
      if (auto e = checkFinite(t.data, t.name, run.step))
        return e;
    if (auto e = copyModelFiles(inputDir, partial))
      return e;
    if (const LoraSummary *lora = step.getLoraSummary()) {
      // A LoRA run saves its adapter, as PEFT does; the base stays where
      // it was read.
      if (auto e = saveLoraAdapter(partial, *lora, *tensors))
        return e;
    } else {
      bool sharded = fs::exists(childPath(inputDir, kIndexFile));
      if (auto e = writeWeights(partial, sharded, step, *tensors))
        return e;
    }
    std::vector<TensorOut> optimizer;
    std::vector<std::string> names;
    std::vector<Trainer::StateTensor> state = trainer.getState();
    names.reserve(state.size() + trainer.getTrainedArguments().size());
    for (const Trainer::StateTensor &t : state) {
      if (auto e = checkFinite(t.data, "optimizer state " + t.name, run.step))
        return e;
      optimizer.push_back({t.name, DType::F32, t.shape, t.data.data()});
    }
    if (storedNarrow(step.getCheckpoint()))
      for (unsigned a : trainer.getTrainedArguments()) {
        names.push_back(masterName(step, a));
        optimizer.push_back({names.back(), DType::F32,
                             step.getArgumentShape(a).vec(),
                             step.getParameter(a).data()});
      }
    if (auto e =
            writeSafetensors(childPath(partial, kOptimizerFile), optimizer))
      return e;
    json log = json::array();
    for (const UpdateLog &l : run.log)
      log.push_back(logEntry(l));
    json state_ = {{"step", run.step},
                   {"data_position", run.dataPosition},
                   {"settings", json::parse(run.settings, nullptr, false)},
                   {"log", log}};
    if (!run.evals.empty()) {
      json held = json::array();
      for (const EvalLog &e : run.evals)
        held.push_back(evalEntry(e));
      state_["eval"] = held;
    }
    return writeFileAtomically(childPath(partial, kStateFile),
                               state_.dump(1) + "\n");
  };
  auto discard = [&](llvm::Error e) {
    removeTreeNoFollow(partial);
    return e;
  };
  if (llvm::Error e = body())
    return discard(std::move(e));
  // The save's bytes reach the disk before it replaces anything.
  if (std::error_code ec = syncTree(partial))
    return discard(makeError(partial + ": cannot sync: " + ec.message()));
  if (std::error_code ec = removeTreeNoFollow(final))
    return discard(makeError(final + ": cannot remove: " + ec.message()));
  if (std::error_code ec = fs::rename(partial, final))
    return discard(
        makeError(final + ": cannot rename into place: " + ec.message()));
  // The new save is whole (and on disk): drop the older ones, only what
  // findLatestCheckpoint counts as a save (a real folder holding
  // trainer_state.json; a link, or a folder of the user's that is merely
  // named checkpoint-N, is left alone).
  if (std::error_code ec = syncFolder(outDir))
    return makeError(outDir + ": cannot sync: " + ec.message());
  // Each is first hidden by one rename, so that a process killed while
  // removing it leaves no half save under a checkpoint-N name; what a kill
  // left hidden (a save being removed, or one being written) goes now.
  std::vector<std::string> older, leftovers;
  std::error_code ec;
  for (fs::directory_iterator it(outDir, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec)) {
    std::optional<int64_t> k = saveStepOf(*it);
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (k && *k < run.step && fs::exists(childPath(it->path(), kStateFile)))
      older.push_back(name.str());
    else if (name.starts_with(".checkpoint-") &&
             (name.ends_with(".removing") || name.ends_with(".partial")) &&
             it->type() == fs::file_type::directory_file)
      leftovers.push_back(it->path());
  }
  for (const std::string &name : older) {
    std::string hidden = childPath(outDir, "." + name + ".removing");
    if (!fs::rename(childPath(outDir, name), hidden))
      leftovers.push_back(hidden);
  }
  for (const std::string &path : leftovers)
    removeTreeNoFollow(path);
  return llvm::Error::success();
}

/// W += s·B·A for one adapted weight `w` of shape `shape` (stacked over
/// layers or not), from its adapter values `a` and `b` in tfm's layout
/// (LoraTarget); per expert for a stacked expert weight.
static void addLoraDelta(std::vector<float> &w, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<float> a, llvm::ArrayRef<float> b,
                         const LoraTarget &t) {
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  int64_t out = t.transposed ? cols : rows, in = t.transposed ? rows : cols;
  int64_t r = t.rank, matrices = int64_t(w.size()) / (out * in);
  float s = float(t.scaling);
  std::vector<float> ba(out * in);
  for (int64_t m = 0; m < matrices; ++m) {
    const float *am = a.data() + m * r * in, *bm = b.data() + m * out * r;
    std::fill(ba.begin(), ba.end(), 0.0f);
    for (int64_t o = 0; o < out; ++o)
      for (int64_t k = 0; k < r; ++k)
        for (int64_t i = 0; i < in; ++i)
          ba[o * in + i] += bm[o * r + k] * am[k * in + i];
    float *wm = w.data() + m * out * in;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i)
        wm[t.transposed ? i * out + o : o * in + i] += s * ba[o * in + i];
  }
}

llvm::Error mlir::tfm::saveMergedModel(llvm::StringRef dir,
                                       llvm::StringRef inputDir,
                                       const TrainingStep &step) {
  const LoraSummary *lora = step.getLoraSummary();
  if (!lora)
    return makeError("--merge-lora: the run trained no LoRA adapter");
  // Merged in the HF-literal model's layout (as PEFT's merge, in f32 from
  // an f32 model), whatever tfm-fuse packed; its weight map then writes
  // each tensor as the checkpoint stores it (stacked, or per expert).
  llvm::Expected<TrainingStep::LiteralParameters> literal =
      step.literalParameters();
  if (!literal)
    return literal.takeError();
  auto forward = literal->model->lookupSymbol<func::FuncOp>("forward");
  unsigned n = forward.getNumArguments();
  std::vector<ParamAttr> params(n);
  std::vector<std::vector<int64_t>> shapes(n);
  std::vector<std::vector<float>> &values = literal->values;
  // By name template and first HF layer: a weight split over scans is one
  // argument per scan under the same template.
  std::map<std::pair<std::string, int64_t>, unsigned> argOf;
  for (unsigned i = 0; i < n; ++i) {
    params[i] = forward.getArgAttrOfType<ParamAttr>(i, kParamAttrName);
    if (!params[i])
      continue;
    shapes[i] = cast<RankedTensorType>(forward.getArgument(i).getType())
                    .getShape()
                    .vec();
    argOf[{params[i].getName().str(),
           params[i].getStacked() ? params[i].hfLayer(0) : -1}] = i;
  }
  for (const LoraTarget &t : lora->targets) {
    auto w = argOf.find({t.weight, t.firstLayer}),
         a = argOf.find({t.a, t.firstLayer}),
         b = argOf.find({t.b, t.firstLayer});
    if (w == argOf.end() || a == argOf.end() || b == argOf.end())
      return makeError("--merge-lora: no parameters for the adapter of '" +
                       t.weight + "'");
    addLoraDelta(values[w->second], shapes[w->second], values[a->second],
                 values[b->second], t);
  }
  std::vector<const float *> byArg(n, nullptr);
  for (unsigned i = 0; i < n; ++i)
    if (params[i] && params[i].getKind() != kLoraAKind &&
        params[i].getKind() != kLoraBKind)
      byArg[i] = values[i].data();
  llvm::Expected<std::vector<NamedGradient>> merged =
      unbindGradients(params, shapes, byArg, step.getCheckpoint());
  if (!merged)
    return merged.takeError();
  std::vector<NamedGradient> &model = *merged;
  for (const NamedGradient &t : model)
    if (auto e = checkFinite(t.data, t.name, 0))
      return e;
  if (std::error_code ec = fs::create_directory(dir, /*IgnoreExisting=*/false))
    return makeError(dir + ": cannot create: " + ec.message());
  auto body = [&]() -> llvm::Error {
    if (auto e = copyModelFiles(inputDir, dir))
      return e;
    bool sharded = fs::exists(childPath(inputDir, kIndexFile));
    return writeWeights(dir, sharded, step, model);
  };
  if (llvm::Error e = body()) {
    removeTreeNoFollow(dir);
    return e;
  }
  return llvm::Error::success();
}

llvm::Error mlir::tfm::publishCheckpoint(llvm::StringRef checkpointDir,
                                         llvm::StringRef outDir) {
  std::error_code ec;
  for (fs::directory_iterator it(checkpointDir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef n = path::filename(it->path());
    if (n == kStateFile || n == kOptimizerFile)
      continue; // the save keeps them; OUT is the model
    std::string dest = childPath(outDir, n), tmp = dest + ".tmp";
    fs::remove(tmp);
    if (std::error_code lec = fs::create_hard_link(it->path(), tmp))
      if (std::error_code cec = fs::copy_file(it->path(), tmp))
        return makeError(dest + ": cannot write: " + cec.message());
    if (std::error_code rec = fs::rename(tmp, dest)) {
      fs::remove(tmp);
      return makeError(dest + ": cannot rename into place: " + rec.message());
    }
  }
  if (ec)
    return makeError(checkpointDir + ": cannot list: " + ec.message());
  return llvm::Error::success();
}

std::string mlir::tfm::findLatestCheckpoint(llvm::StringRef outDir) {
  std::string best;
  int64_t bestStep = -1;
  std::error_code ec;
  for (fs::directory_iterator it(outDir, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec)) {
    std::optional<int64_t> k = saveStepOf(*it);
    if (k && *k > bestStep && fs::exists(childPath(it->path(), kStateFile))) {
      bestStep = *k;
      best = it->path();
    }
  }
  return best;
}

std::optional<int64_t> mlir::tfm::checkpointStep(llvm::StringRef dir) {
  llvm::StringRef n = path::filename(dir);
  int64_t k;
  if (!n.consume_front(kCheckpointPrefix) || n.getAsInteger(10, k) || k < 1 ||
      n != std::to_string(k))
    return std::nullopt;
  return k;
}

llvm::Expected<SavedRun> mlir::tfm::readSavedRun(llvm::StringRef dir) {
  std::string file = childPath(dir, kStateFile);
  auto buf = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buf)
    return makeError(file + ": cannot read: " + buf.getError().message());
  if (auto e = checkJsonText((*buf)->getBuffer(), file))
    return std::move(e);
  json root = json::parse((*buf)->getBuffer(), nullptr,
                          /*allow_exceptions=*/false);
  auto integer = [](const json &object, const char *key) {
    auto it = object.find(key);
    return it != object.end() && it->is_number_integer()
               ? std::optional<int64_t>(it->get<int64_t>())
               : std::nullopt;
  };
  // A field a save may lack (older saves): 0 then; present, it must be a
  // number.
  auto number = [](const json &object, const char *key,
                   bool required) -> std::optional<double> {
    auto it = object.find(key);
    if (it == object.end())
      return required ? std::nullopt : std::optional<double>(0.0);
    return it->is_number() ? std::optional<double>(it->get<double>())
                           : std::nullopt;
  };
  std::optional<int64_t> step, position;
  if (root.is_object()) {
    step = integer(root, "step");
    position = integer(root, "data_position");
  }
  if (!step || !position || !root["settings"].is_object() ||
      !root["log"].is_array())
    return makeError(file + ": not a tfm-train state (fields step, "
                            "data_position, settings, log)");
  SavedRun run;
  run.step = *step;
  run.dataPosition = *position;
  run.settings =
      root["settings"].dump(-1, ' ', false, json::error_handler_t::replace);
  for (const json &e : root["log"]) {
    std::optional<int64_t> entryStep, tokens, counted, staged;
    std::optional<double> loss, gradNorm, lr, ms, optimizerMs, commMs;
    if (e.is_object()) {
      entryStep = integer(e, "step");
      loss = number(e, "loss", true);
      gradNorm = number(e, "grad_norm", true);
      lr = number(e, "lr", true);
      tokens = e.contains("tokens") ? integer(e, "tokens") : 0;
      counted = e.contains("counted_tokens") ? integer(e, "counted_tokens") : 0;
      staged = e.contains("staged_bytes") ? integer(e, "staged_bytes") : 0;
      ms = number(e, "ms", false);
      optimizerMs = number(e, "optimizer_ms", false);
      commMs = number(e, "communication_ms", false);
    }
    if (!entryStep || !loss || !gradNorm || !lr || !tokens || !counted ||
        !staged || !ms || !optimizerMs || !commMs)
      return makeError(file + ": field 'log': malformed entry " +
                       llvm::Twine(run.log.size()) +
                       " (step, loss, grad_norm and lr are numbers; "
                       "tokens, counted_tokens and staged_bytes integers)");
    UpdateLog l;
    l.step = *entryStep;
    l.loss = *loss;
    l.gradNorm = *gradNorm;
    l.lr = *lr;
    l.tokens = *tokens;
    l.countedTokens = *counted;
    l.ms = *ms;
    l.optimizerMs = *optimizerMs;
    l.communicationMs = *commMs;
    l.stagedBytes = size_t(*staged);
    if (l.step != int64_t(run.log.size()) + 1)
      return makeError(file + ": field 'log': entry " +
                       llvm::Twine(run.log.size()) + " is step " +
                       llvm::Twine(l.step) + ", expected " +
                       llvm::Twine(run.log.size() + 1));
    run.log.push_back(l);
  }
  if (root.contains("eval")) {
    if (!root["eval"].is_array())
      return makeError(file + ": field 'eval': must be a list");
    for (const json &e : root["eval"]) {
      std::optional<int64_t> at, tokens;
      std::optional<double> loss, ppl;
      if (e.is_object()) {
        at = integer(e, "step");
        tokens = integer(e, "tokens");
        loss = number(e, "loss", true);
        ppl = number(e, "perplexity", true);
      }
      if (!at || !tokens || !loss || !ppl || *at < 1 || *at > run.step)
        return makeError(file + ": field 'eval': malformed entry " +
                         llvm::Twine(run.evals.size()) +
                         " (step within the run, loss, perplexity, tokens)");
      run.evals.push_back({*at, *loss, *ppl, *tokens});
    }
  }
  // Cross-checks: the folder's name, the step and the log agree.
  std::optional<int64_t> named = checkpointStep(dir);
  if (run.step < 1 || !named || *named != run.step)
    return makeError(file + ": field 'step' is " + llvm::Twine(run.step) +
                     ", the folder is " + path::filename(dir));
  if (int64_t(run.log.size()) != run.step)
    return makeError(file + ": field 'log' has " + llvm::Twine(run.log.size()) +
                     " entries for step " + llvm::Twine(run.step));
  if (run.dataPosition < 0)
    return makeError(file + ": field 'data_position' is negative (" +
                     llvm::Twine(run.dataPosition) + ")");
  return run;
}

llvm::Error mlir::tfm::restoreOptimizer(llvm::StringRef dir, int64_t steps,
                                        TrainingStep &step, Trainer &trainer) {
  std::string file = childPath(dir, kOptimizerFile);
  auto opened = SafetensorsFile::open(file);
  if (!opened)
    return opened.takeError();
  const auto &tensors = (*opened)->tensors();
  auto lookup =
      [&](llvm::StringRef name,
          llvm::ArrayRef<int64_t> shape) -> llvm::Expected<std::vector<float>> {
    auto it = tensors.find(name.str());
    if (it == tensors.end())
      return makeError(file + ": tensor '" + name +
                       "' is missing (a save of another model or optimizer?)");
    if (it->second.shape != shape.vec() || it->second.dtype != DType::F32)
      return makeError(file + ": tensor '" + name +
                       "' has another shape or dtype than this model's");
    std::vector<float> v(it->second.numElements());
    if (auto e = it->second.readAsF32(v.data()))
      return std::move(e);
    // No save this tool writes holds a NaN or an infinity (checkFinite).
    if (firstNonFinite(v) != v.data() + v.size())
      return makeError(file + ": tensor '" + name +
                       "' holds a non-finite value");
    return v;
  };
  if (auto e = trainer.setState(steps, lookup))
    return e;
  size_t expected = trainer.getNumStateTensors();
  llvm::ArrayRef<unsigned> trained = trainer.getTrainedArguments();
  for (size_t i = 0; i < trained.size(); ++i) {
    std::string name = masterName(step, trained[i]);
    if (!tensors.count(name))
      continue;
    ++expected;
    llvm::Expected<std::vector<float>> master =
        lookup(name, step.getArgumentShape(trained[i]));
    if (!master)
      return master.takeError();
    trainer.setMaster(i, std::move(*master));
  }
  if (tensors.size() != expected)
    return makeError(file + ": holds " + llvm::Twine(tensors.size()) +
                     " tensors, this model's optimizer " +
                     llvm::Twine(expected) +
                     " (a save of another model or optimizer?)");
  return llvm::Error::success();
}
