//===- TrainRun.cpp - a whole training run, as tfm-train does it ----------===//

#include "tfm/Engine/TrainRun.h"
#include "tfm/Engine/TokenDataset.h"
#include "tfm/Engine/TrainCheckpoint.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Recompute/RecomputePlanner.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::tfm;
namespace fs = llvm::sys::fs;
using json = nlohmann::ordered_json;

/// The settings a resumed run must repeat (named as tfm-train's options).
static json runSettings(const TrainRunOptions &o) {
  return {{"optimizer", o.optimizer.optimizer},
          {"lr", o.lr},
          {"adam_beta1", o.optimizer.beta1},
          {"adam_beta2", o.optimizer.beta2},
          {"adam_eps", o.optimizer.eps},
          {"weight_decay", o.optimizer.weightDecay},
          {"decay", o.optimizer.decay},
          {"momentum", o.optimizer.momentum},
          {"nesterov", o.optimizer.nesterov},
          {"max_grad_norm", o.optimizer.maxGradNorm},
          {"schedule", o.schedule},
          {"warmup_steps", o.warmupSteps},
          {"grad_accum", o.gradAccum},
          {"batch", o.batch},
          {"seq", o.seq},
          {"shuffle_seed", o.shuffleSeed},
          {"tokens", llvm::sys::path::filename(o.tokensPath).str()},
          {"dtype", o.dtype},
          {"freeze", o.freeze},
          {"fusion", o.fusion},
          {"moe_aux_loss", o.moeAuxLoss}};
}

/// `j` as JSON text; strings that are not UTF-8 (a --freeze of raw bytes)
/// print with U+FFFD instead of aborting (nlohmann's default throws, and
/// this code has no exceptions).
static std::string dumpText(const json &j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

static llvm::Expected<json> readJson(llvm::StringRef file) {
  auto buf = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buf)
    return makeError(file + ": cannot read: " + buf.getError().message());
  if (auto e = checkJsonText((*buf)->getBuffer(), file))
    return std::move(e);
  json j = json::parse((*buf)->getBuffer(), nullptr, false);
  if (j.is_discarded())
    return makeError(file + ": not valid JSON");
  return j;
}

/// An error naming the first field where `saved` and `now` differ.
static llvm::Error sameObject(const json &saved, const json &now,
                              const llvm::Twine &what) {
  for (auto &[key, value] : now.items())
    if (!saved.contains(key) || saved[key] != value)
      return makeError(what + ": field '" + key + "' is " +
                       (saved.contains(key) ? dumpText(saved[key]) : "absent") +
                       " there, " + dumpText(value) + " here");
  for (auto &[key, value] : saved.items())
    if (!now.contains(key))
      return makeError(what + ": field '" + key + "' is " + dumpText(value) +
                       " there, absent here");
  return llvm::Error::success();
}

/// OUT exists (created if needed) and takes files; a finished or saved run
/// there is never overwritten without `resume`.
static llvm::Error prepareOutput(const TrainRunOptions &o) {
  if (std::error_code ec = fs::create_directories(o.outputDir))
    return makeError(o.outputDir +
                     ": cannot create the output directory: " + ec.message());
  std::string probe = childPath(o.outputDir, ".tfm-train-probe");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(probe, ec, fs::OF_None);
    if (ec)
      return makeError(
          o.outputDir +
          ": the output directory is not writable: " + ec.message());
  }
  fs::remove(probe);
  if (!o.resume && (fs::exists(childPath(o.outputDir, "config.json")) ||
                    !findLatestCheckpoint(o.outputDir).empty()))
    return makeError(o.outputDir +
                     ": holds a previous run (config.json or a checkpoint-*): "
                     "pass --resume to continue it, or choose another "
                     "--output-dir");
  return llvm::Error::success();
}

static void printUpdate(llvm::raw_ostream &os, const UpdateLog &l,
                        int64_t steps) {
  os << "step " << l.step << "/" << steps << "  loss "
     << llvm::format("%.6f", l.loss) << "  grad_norm "
     << llvm::format("%.4f", l.gradNorm) << "  lr "
     << llvm::format("%.3e", l.lr) << "  "
     << llvm::format("%.0f", l.ms > 0 ? l.tokens / (l.ms / 1e3) : 0)
     << " tok/s\n";
  os.flush();
}

/// The run itself, once the output folder is there.
static llvm::Expected<std::vector<UpdateLog>>
train(const TrainRunOptions &o, const ModelSpec &spec, TokenDataset &data,
      Device device, Precision precision, LearningRateSchedule::Kind kind,
      llvm::raw_ostream *progress,
      llvm::function_ref<void(const UpdateLog &)> onUpdate) {
  // A resumed run binds the weights of its last save.
  SavedRun run;
  run.settings = dumpText(runSettings(o));
  std::string weightsDir = o.checkpointDir, latest;
  if (o.resume) {
    latest = findLatestCheckpoint(o.outputDir);
    if (latest.empty())
      return makeError(o.outputDir + ": --resume: no complete save "
                                     "(checkpoint-*) to resume from");
    llvm::Expected<SavedRun> saved = readSavedRun(latest);
    if (!saved)
      return saved.takeError();
    auto savedConfig = readJson(childPath(latest, "config.json"));
    if (!savedConfig)
      return savedConfig.takeError();
    auto config = readJson(childPath(o.checkpointDir, "config.json"));
    if (!config)
      return config.takeError();
    if (auto e = sameObject(*savedConfig, *config,
                            latest + "/config.json holds another model than " +
                                o.checkpointDir + "/config.json"))
      return std::move(e);
    if (auto e = sameObject(
            json::parse(saved->settings), json::parse(dumpText(runSettings(o))),
            "--resume: " + latest + " was trained with other settings"))
      return std::move(e);
    if (saved->step >= o.steps)
      return makeError(latest + ": the save has done " +
                       llvm::Twine(saved->step) +
                       " updates, --steps asks for " + llvm::Twine(o.steps));
    weightsDir = latest;
    run.step = saved->step;
    run.dataPosition = saved->dataPosition;
    run.log = saved->log;
  }
  llvm::Expected<Checkpoint> checkpoint = Checkpoint::open(weightsDir);
  if (!checkpoint)
    return checkpoint.takeError();

  StepOptions options;
  options.compile = {device, /*useBlas=*/true, ""};
  options.precision = precision;
  options.gradients = true;
  options.logits = false;
  options.nameGradients = false;
  options.fuse = o.fusion;
  options.recompute = o.recompute;
  options.freeze = o.freeze;
  auto step = TrainingStep::create(spec, options);
  if (!step)
    return step.takeError();
  if (auto e = (*step)->bind(std::move(*checkpoint)))
    return std::move(e);
  LearningRateSchedule lrSchedule;
  lrSchedule.kind = kind;
  lrSchedule.baseLr = o.lr;
  lrSchedule.warmupSteps = o.warmupSteps;
  lrSchedule.totalSteps = o.steps;
  auto trainer = Trainer::create(**step, o.optimizer, lrSchedule);
  if (!trainer)
    return trainer.takeError();
  if (o.resume) {
    if (auto e = restoreOptimizer(latest, run.step, **step, **trainer))
      return std::move(e);
    data.seek(run.dataPosition);
  }
  if (progress)
    *progress << "tfm-train: " << spec.architecture << ", "
              << (*trainer)->getTrainedArguments().size()
              << " trained parameters, " << o.optimizer.optimizer << " lr "
              << llvm::format("%g", o.lr) << " (" << o.schedule << ", warm-up "
              << o.warmupSteps << "), data " << data.describe() << ", on "
              << deviceName(device) << " (compile "
              << llvm::format("%.0f", (*step)->getCompileMs()) << " ms)"
              << (o.resume ? ", resumed from " + latest : std::string())
              << "\n";

  auto save = [&]() -> llvm::Error {
    run.step = (*trainer)->getStep();
    run.dataPosition = data.getPosition();
    // The input folder gives the other files (tokenizer, ...) and the
    // sharding; the bound checkpoint the names and dtypes.
    return saveTrainingCheckpoint(o.outputDir, o.checkpointDir, **step,
                                  **trainer, run);
  };
  while ((*trainer)->getStep() < o.steps) {
    std::vector<TokenBatch> micro;
    for (int64_t m = 0; m < o.gradAccum; ++m)
      micro.push_back(data.next());
    llvm::Expected<UpdateLog> log = (*trainer)->update(micro);
    if (!log)
      return log.takeError();
    run.log.push_back(*log);
    if (progress)
      printUpdate(*progress, *log, o.steps);
    if (onUpdate)
      onUpdate(*log);
    if (o.saveEvery > 0 && log->step % o.saveEvery == 0 && log->step < o.steps)
      if (auto e = save())
        return std::move(e);
  }
  if (auto e = save())
    return std::move(e);
  std::string last = findLatestCheckpoint(o.outputDir);
  if (auto e = publishCheckpoint(last, o.outputDir))
    return std::move(e);
  if (auto e = writeTrainLog(childPath(o.outputDir, "train_log.json"), run.log))
    return std::move(e);
  if (progress && device == Device::cuda)
    *progress << "cuda: " << cuda::deviceDescription() << ", arena peak "
              << llvm::format("%.1f", cuda::arenaPeakBytes() / 1048576.0)
              << " MiB; the last update copied " << run.log.back().stagedBytes
              << " bytes to the device (weights, gradients and optimizer "
                 "state stay there)\n";
  if (progress)
    *progress << "tfm-train: " << o.steps << " updates, loss "
              << llvm::format("%.6f", run.log.front().loss) << " -> "
              << llvm::format("%.6f", run.log.back().loss) << "; model in "
              << o.outputDir << " (save " << last << ")\n";
  return run.log;
}

llvm::Expected<std::vector<UpdateLog>>
mlir::tfm::runTraining(const TrainRunOptions &o, llvm::raw_ostream *progress,
                       llvm::function_ref<void(const UpdateLog &)> onUpdate) {
  if (o.checkpointDir.empty() || o.tokensPath.empty() || o.outputDir.empty())
    return makeError("expected a checkpoint folder, --tokens FILE and "
                     "--output-dir DIR");
  if (!fs::is_directory(o.checkpointDir))
    return makeError(o.checkpointDir + ": not a checkpoint folder");
  if (o.steps < 1 || o.gradAccum < 1 || o.saveEvery < 0 || o.warmupSteps < 0)
    return makeError("--steps and --grad-accum must be >= 1, --save-every "
                     "and --warmup-steps >= 0");
  llvm::Expected<Device> device = parseDevice(o.device);
  if (!device)
    return device.takeError();
  llvm::Expected<Precision> precision = parsePrecision(o.dtype);
  if (!precision)
    return precision.takeError();
  llvm::Expected<LearningRateSchedule::Kind> kind = parseSchedule(o.schedule);
  if (!kind)
    return kind.takeError();
  if (auto budget = RecomputeBudget::parse(o.recompute); !budget)
    return makeError("--recompute: " + llvm::toString(budget.takeError()));
  llvm::Expected<ModelSpec> spec = readHFConfig(o.checkpointDir);
  if (!spec)
    return spec.takeError();
  if (llvm::Error e = setMoeAuxLoss(*spec, o.moeAuxLoss))
    return std::move(e);
  auto data = TokenDataset::open(o.tokensPath, spec->vocabSize, o.batch, o.seq,
                                 o.shuffleSeed >= 0
                                     ? std::optional<uint64_t>(o.shuffleSeed)
                                     : std::nullopt,
                                 o.tokenDtype, o.gradAccum);
  if (!data)
    return data.takeError();
  bool createdOutput = !fs::exists(o.outputDir);
  llvm::Error ready = prepareOutput(o);
  auto log = ready ? llvm::Expected<std::vector<UpdateLog>>(std::move(ready))
                   : train(o, *spec, **data, *device, *precision, *kind,
                           progress, onUpdate);
  if (!log && createdOutput)
    fs::remove(o.outputDir); // only if empty: a complete save stays
  return log;
}
