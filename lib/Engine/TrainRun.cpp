//===- TrainRun.cpp - a whole training run, as tfm-train does it ----------===//

#include "tfm/Engine/TrainRun.h"
#include "tfm/Engine/AdapterFiles.h"
#include "tfm/Engine/Evaluation.h"
#include "tfm/Engine/LossCurves.h"
#include "tfm/Engine/RunFolder.h"
#include "tfm/Engine/TokenDataset.h"
#include "tfm/Engine/TrainCheckpoint.h"
#include "tfm/Engine/TrainProgress.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/Recompute/RecomputePlanner.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <thread>

using namespace mlir;
using namespace mlir::tfm;
namespace fs = llvm::sys::fs;
using json = nlohmann::ordered_json;

/// The settings a resumed run must repeat (named as tfm-train's options).
static json runSettings(const TrainRunOptions &o,
                        const TokenDataset::Identity &data, int ranks) {
  // The data by content, not by name: a resume reads on in the same ids.
  json dataJson = {{"bytes", data.bytes},
                   {"xxh3", llvm::utohexstr(data.xxh3, /*LowerCase=*/true)},
                   {"ids", data.idType}};
  json settings = {{"data", dataJson},
                   {"optimizer", o.optimizer.optimizer},
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
                   {"dtype", o.dtype},
                   {"freeze", o.freeze},
                   {"fusion", o.fusion},
                   {"moe_aux_loss", o.moeAuxLoss}};
  // Only data-parallel and LoRA runs record these, so earlier saves still
  // resume.
  if (ranks > 1)
    settings["ranks"] = ranks;
  if (o.lora)
    settings["lora"] = json::parse(writeLoraConfig(*o.lora), nullptr, false);
  return settings;
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

/// OUT exists (created if needed), takes files and is this run's alone
/// (the returned lock); a finished or saved run there is never overwritten
/// without `resume`.
static llvm::Expected<std::unique_ptr<RunFolderLock>>
prepareOutput(const TrainRunOptions &o) {
  if (std::error_code ec = fs::create_directories(o.outputDir))
    return makeError(o.outputDir +
                     ": cannot create the output directory: " + ec.message());
  auto lock = RunFolderLock::acquire(o.outputDir);
  if (!lock)
    return lock.takeError();
  if (!o.resume && (fs::exists(childPath(o.outputDir, "config.json")) ||
                    !findLatestCheckpoint(o.outputDir).empty()))
    return makeError(o.outputDir +
                     ": holds a previous run (config.json or a checkpoint-*): "
                     "pass --resume to continue it, or choose another "
                     "--output-dir");
  return lock;
}

/// `n` with thousands separators: 820,352.
static std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

/// What the run trains, counted as the checkpoint names it (not as the
/// compiled step stacks and packs it): "38 tensors, 820,352 parameters
/// trained" (each parameter once, a tied one too).
static llvm::Expected<std::string> describeTrained(const TrainingStep &step,
                                                   const Trainer &trainer) {
  llvm::Expected<std::vector<NamedGradient>> tensors =
      step.namedParametersOf(trainer.getTrainedArguments());
  if (!tensors)
    return tensors.takeError();
  int64_t parameters = 0;
  for (unsigned a : trainer.getTrainedArguments()) {
    int64_t n = 1;
    for (int64_t d : step.getArgumentShape(a))
      n *= d;
    parameters += n;
  }
  return withThousands(int64_t(tensors->size())) + " tensors, " +
         withThousands(parameters) + " parameters trained";
}

/// An error when update `l` made the run diverge: a non-finite loss or
/// gradient norm poisons the weights, so the run stops there and never
/// saves them (the last save, if any, stays).
static llvm::Error checkDivergence(const UpdateLog &l,
                                   llvm::StringRef outputDir) {
  if (std::isfinite(l.loss) && std::isfinite(l.gradNorm))
    return llvm::Error::success();
  std::string last = findLatestCheckpoint(outputDir);
  auto text = [](double v) { return std::isnan(v) ? "nan" : "inf"; };
  std::string what = std::isfinite(l.loss)
                         ? std::string("gradient norm is ") + text(l.gradNorm)
                         : std::string("loss is ") + text(l.loss);
  return makeError(
      "update " + llvm::Twine(l.step) + ": the " + what +
      "; the run diverged and stops without saving (" +
      (last.empty() ? "no earlier save" : "the last save is " + last) +
      "; try a lower --lr or --max-grad-norm)");
}

/// The run itself, once the output folder is there.
/// Micro-batches per update over all ranks, as a save's settings give them
/// (runs before data parallelism record no "ranks").
static int64_t microBatchesPerUpdate(const json &settings) {
  int64_t accum = settings.value("grad_accum", int64_t(1));
  return accum * settings.value("ranks", int64_t(1));
}

/// What every rank must agree on before training: the model as compiled,
/// the run's settings and data, and the options that decide when ranks
/// meet (steps, saves, evaluations).
static uint64_t runFingerprint(const TrainRunOptions &o, const json &settings,
                               TrainingStep &step) {
  json all = settings;
  all["steps"] = o.steps;
  all["save_every"] = o.saveEvery;
  all["output_dir"] = o.outputDir;
  all["eval"] = {o.evalPath, o.evalEvery, o.evalBatches};
  all["resume"] = o.resume;
  all["device"] = o.device;
  all["recompute"] = o.recompute;
  all["zero"] = o.zero;
  std::string text = dumpText(all);
  llvm::raw_string_ostream os(text);
  step.getModel().print(os);
  return llvm::xxh3_64bits(text);
}

/// ", 2 ranks (MPI (MPICH 4.0.2)), global batch 2 x 1 x 4 rows of 64
/// tokens" (ranks x micro-batches per rank x rows).
static std::string describeRanks(const TrainRunOptions &o,
                                 const TokenDataset &data,
                                 const Communicator &comm) {
  auto [rows, seq] = data.getMicroBatchShape();
  return (", " + llvm::Twine(comm.getSize()) + " ranks (" + comm.describe() +
          "), global batch " + llvm::Twine(comm.getSize()) + " x " +
          llvm::Twine(o.gradAccum) + " x " + llvm::Twine(rows) + " rows of " +
          llvm::Twine(seq) + " tokens")
      .str();
}

static llvm::Expected<std::vector<UpdateLog>>
train(const TrainRunOptions &o, const ModelSpec &spec, TokenDataset &data,
      Device device, Precision precision, LearningRateSchedule::Kind kind,
      Communicator &comm, llvm::raw_ostream *progress,
      llvm::function_ref<void(const UpdateLog &)> onUpdate) {
  // Rank 0 alone writes OUT; the others wait for its saves.
  bool writer = comm.getRank() == 0;
  int64_t ranks = comm.getSize();
  int64_t perUpdate = o.gradAccum * ranks;
  // A resumed run binds the weights of its last save.
  SavedRun run;
  json settings = runSettings(o, data.getIdentity(), int(ranks));
  run.settings = dumpText(settings);
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
    json savedSettings = json::parse(saved->settings);
    json now = json::parse(run.settings);
    // Other ranks x --grad-accum giving the same micro-batches per update
    // continue the same run exactly: the ranks only share its work.
    if (microBatchesPerUpdate(savedSettings) == perUpdate) {
      for (const char *key : {"grad_accum", "ranks"}) {
        now.erase(key);
        if (savedSettings.contains(key))
          now[key] = savedSettings[key];
      }
    } else if (savedSettings.value("ranks", int64_t(1)) != ranks) {
      return makeError(
          "--resume: " + latest + " was trained with " +
          llvm::Twine(microBatchesPerUpdate(savedSettings)) +
          " micro-batches per update (ranks x --grad-accum), this run has " +
          llvm::Twine(ranks) + " x " + llvm::Twine(o.gradAccum) +
          ": choose --grad-accum so that the product is the same");
    }
    // Saves from before data was recorded by content name the file: they
    // resume with that older, weaker check.
    if (!savedSettings.contains("data") && savedSettings.contains("tokens")) {
      now.erase("data");
      now["tokens"] = llvm::sys::path::filename(o.tokensPath).str();
    }
    if (auto e = sameObject(savedSettings, now,
                            "--resume: " + latest +
                                " was trained with other settings or data"))
      return std::move(e);
    if (saved->step > o.steps)
      return makeError(latest + ": the save has done " +
                       llvm::Twine(saved->step) +
                       " updates, --steps asks for " + llvm::Twine(o.steps));
    // Every update reads ranks x --grad-accum micro-batches.
    if (saved->dataPosition != saved->step * perUpdate)
      return makeError(latest +
                       "/trainer_state.json: field 'data_position' "
                       "is " +
                       llvm::Twine(saved->dataPosition) + ", " +
                       llvm::Twine(saved->step) + " updates of " +
                       (ranks > 1 ? "ranks x --grad-accum " : "--grad-accum ") +
                       llvm::Twine(perUpdate) + " read " +
                       llvm::Twine(saved->step * perUpdate));
    if (saved->step == o.steps) {
      // The run ended (killed between its last save and publishing it):
      // publish that save.
      if (writer) {
        if (auto e = publishCheckpoint(latest, o.outputDir))
          return std::move(e);
        if (auto e = writeTrainLog(childPath(o.outputDir, "train_log.json"),
                                   saved->log, saved->evals))
          return std::move(e);
      }
      if (auto e = comm.barrier())
        return std::move(e);
      if (progress)
        *progress << "tfm-train: " << latest << " is the run's last save ("
                  << o.steps << " updates); model in " << o.outputDir << "\n";
      return saved->log;
    }
    weightsDir = latest;
    run.step = saved->step;
    run.dataPosition = saved->dataPosition;
    run.log = saved->log;
    run.evals = saved->evals;
  }
  // A LoRA run's saves hold only the adapter: the base comes from the input.
  if (o.lora)
    weightsDir = o.checkpointDir;
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
  options.lora = o.lora;
  auto step = TrainingStep::create(spec, options);
  if (!step)
    return step.takeError();
  if (ranks > 1)
    if (auto e = checkSameOnEveryRank(comm, runFingerprint(o, settings, **step),
                                      "its compiled model, options or data"))
      return std::move(e);
  if (o.lora) {
    // The adapter: the last save's, --lora-init's, or a fresh one.
    std::string from = o.resume ? latest : o.loraInit;
    if (auto e = addLoraAdapter(*checkpoint, *(*step)->getLoraSummary(), from,
                                o.loraSeed))
      return std::move(e);
  }
  if (auto e = (*step)->bind(std::move(*checkpoint)))
    return std::move(e);
  LearningRateSchedule lrSchedule;
  lrSchedule.kind = kind;
  lrSchedule.baseLr = o.lr;
  lrSchedule.warmupSteps = o.warmupSteps;
  lrSchedule.totalSteps = o.steps;
  auto trainer =
      Trainer::create(**step, o.optimizer, lrSchedule, &comm, o.zero == 1);
  if (!trainer)
    return trainer.takeError();
  if (o.resume) {
    if (auto e = restoreOptimizer(latest, run.step, **step, **trainer))
      return std::move(e);
    data.seek(run.dataPosition);
  }
  if (progress) {
    if (const LoraSummary *lora = (*step)->getLoraSummary())
      *progress << "tfm-train: " << lora->describe() << "\n";
    // Counted only for this line (it copies the trained values once).
    auto trained = describeTrained(**step, **trainer);
    if (!trained)
      return trained.takeError();
    *progress << "tfm-train: " << spec.architecture << ", " << *trained << ", "
              << o.optimizer.optimizer << " lr " << llvm::format("%g", o.lr)
              << " (" << o.schedule << ", warm-up " << o.warmupSteps
              << "), data " << data.describe() << ", on " << deviceName(device)
              << (ranks > 1 ? describeRanks(o, data, comm) : std::string())
              << ", optimizer state "
              << llvm::format("%.1f",
                              (*trainer)->getOptimizerBytes() / 1048576.0)
              << " MiB" << (ranks > 1 ? " per rank" : "")
              << (o.zero ? " (ZeRO-1)" : "") << " (compile "
              << llvm::format("%.0f", (*step)->getCompileMs()) << " ms)"
              << (o.resume ? ", resumed from " + latest : std::string())
              << "\n";
  }

  // Held-out data: a loss-only step beside the training one.
  // (Rank 0's alone: the others wait for it in the next update.)
  std::unique_ptr<Evaluator> evaluator;
  std::vector<EvalLog> &evals = run.evals; // restored on a resume
  if (!o.evalPath.empty() && writer) {
    auto held = TokenDataset::open(o.evalPath, spec.vocabSize, o.batch, o.seq,
                                   std::nullopt, o.tokenDtype, 1, o.packing,
                                   o.checkpointDir);
    if (!held)
      return held.takeError();
    // Not more micro-batches than the held-out windows fill.
    int64_t batches = o.evalBatches;
    if ((*held)->getNumWindows())
      batches = std::min(batches, (*held)->getNumWindows() / o.batch);
    auto made = Evaluator::create(spec, options, std::move(*held), batches);
    if (!made)
      return made.takeError();
    evaluator = std::move(*made);
    if (progress)
      *progress << "tfm-train: held-out " << evaluator->describe() << "\n";
  }
  // Every rank calls it (ZeRO-1 gathers the shards first); rank 0
  // evaluates.
  int64_t lastEval = evals.empty() ? -1 : evals.back().step;
  auto evaluate = [&]() -> llvm::Error {
    lastEval = (*trainer)->getStep();
    if (auto e = (*trainer)->gatherShards())
      return e;
    if (!evaluator)
      return llvm::Error::success();
    auto e = evaluator->evaluate(**step, **trainer);
    if (!e)
      return e.takeError();
    evals.push_back(*e);
    if (progress)
      *progress << "eval step " << e->step << "  loss "
                << llvm::format("%.6f", e->loss) << "  ppl "
                << llvm::format("%.3f", e->perplexity) << "  (" << e->tokens
                << " tokens)\n";
    return llvm::Error::success();
  };
  auto writeCurves = [&]() {
    return writeFileAtomically(childPath(o.outputDir, "loss.svg"),
                               lossCurvesSvg(run.log, evals));
  };
  auto save = [&]() -> llvm::Error {
    run.step = (*trainer)->getStep();
    run.dataPosition = data.getPosition();
    if (auto e = (*trainer)->gatherShards())
      return e;
    if (writer) {
      if (auto e = writeCurves())
        return e;
      // The input folder gives the other files (tokenizer, ...) and the
      // sharding; the bound checkpoint the names and dtypes.
      if (auto e = saveTrainingCheckpoint(o.outputDir, o.checkpointDir, **step,
                                          **trainer, run))
        return e;
    }
    // No rank goes on before the save is whole on disk.
    return comm.barrier();
  };
  TrainProgress lines(progress, o.steps, o.logEvery);
  while ((*trainer)->getStep() < o.steps) {
    // This rank's micro-batches of the update's perUpdate ones.
    int64_t first = data.getPosition();
    data.seek(first + comm.getRank() * o.gradAccum);
    std::vector<TokenBatch> micro;
    for (int64_t m = 0; m < o.gradAccum; ++m)
      micro.push_back(data.next());
    data.seek(first + perUpdate);
    llvm::Expected<UpdateLog> log = (*trainer)->update(micro);
    if (!log)
      return log.takeError();
    lines.update(*log);
    if (auto e = checkDivergence(*log, o.outputDir))
      return std::move(e);
    run.log.push_back(*log);
    if (onUpdate)
      onUpdate(*log);
    // A signal may reach the ranks at different updates: all stop at the
    // first update any of them saw it.
    int64_t stop = o.interrupted && o.interrupted->load();
    if (ranks > 1)
      if (auto e = comm.allReduceSum(&stop, 1))
        return std::move(e);
    if (stop) {
      if (auto e = save())
        return std::move(e);
      return makeError("interrupted at step " + llvm::Twine(log->step) +
                       ", saved in " + findLatestCheckpoint(o.outputDir) +
                       " (continue it with --resume)");
    }
    if (!o.evalPath.empty() && o.evalEvery > 0 && log->step % o.evalEvery == 0)
      if (auto e = evaluate())
        return std::move(e);
    if (o.saveEvery > 0 && log->step % o.saveEvery == 0 && log->step < o.steps)
      if (auto e = save())
        return std::move(e);
  }
  if (!o.evalPath.empty() && lastEval != o.steps)
    if (auto e = evaluate())
      return std::move(e);
  if (auto e = save())
    return std::move(e);
  std::string last = findLatestCheckpoint(o.outputDir);
  if (writer) {
    if (auto e = publishCheckpoint(last, o.outputDir))
      return std::move(e);
    if (o.mergeLora)
      if (auto e = saveMergedModel(childPath(o.outputDir, "merged"),
                                   o.checkpointDir, **step))
        return std::move(e);
    if (auto e = writeTrainLog(childPath(o.outputDir, "train_log.json"),
                               run.log, evals))
      return std::move(e);
  }
  if (auto e = comm.barrier())
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

/// Refuses what torch.optim and HF's Trainer refuse (a learning rate that
/// is negative or not finite, betas outside [0, 1), ...) and counts whose
/// products overflow the data position, naming the option.
static llvm::Error checkOptions(const TrainRunOptions &o) {
  if (o.steps < 1 || o.gradAccum < 1 || o.saveEvery < 0 || o.warmupSteps < 0 ||
      o.logEvery < 1)
    return makeError("--steps, --grad-accum and --log-every must be >= 1, "
                     "--save-every and --warmup-steps >= 0");
  auto finiteAtLeast = [](double v, double low, const char *flag,
                          const char *what) -> llvm::Error {
    if (std::isfinite(v) && v >= low)
      return llvm::Error::success();
    return makeError(llvm::Twine(flag) + " " + formatOptionNumber(v) +
                     ": expected " + what);
  };
  const OptimizerOptions &opt = o.optimizer;
  if (auto e = finiteAtLeast(o.lr, 0, "--lr", "a finite value >= 0"))
    return e;
  if (auto e = finiteAtLeast(opt.eps, 0, "--adam-eps", "a finite value >= 0"))
    return e;
  if (auto e = finiteAtLeast(opt.weightDecay, 0, "--weight-decay",
                             "a finite value >= 0"))
    return e;
  if (auto e =
          finiteAtLeast(opt.momentum, 0, "--momentum", "a finite value >= 0"))
    return e;
  if (auto e = finiteAtLeast(opt.maxGradNorm, 0, "--max-grad-norm",
                             "a finite value >= 0 (0: no clipping)"))
    return e;
  for (auto [beta, flag] : {std::pair{opt.beta1, "--adam-beta1"},
                            std::pair{opt.beta2, "--adam-beta2"}})
    if (!(beta >= 0 && beta < 1))
      return makeError(llvm::Twine(flag) + " " + formatOptionNumber(beta) +
                       ": expected a value in [0, 1)");
  if (o.shuffleSeed < -1)
    return makeError("--shuffle-seed " + llvm::Twine(o.shuffleSeed) +
                     ": expected a seed >= 0 (or none: in order)");
  if (o.evalEvery < 0)
    return makeError("--eval-every " + llvm::Twine(o.evalEvery) +
                     ": expected a number of updates >= 0");
  if (o.zero != 0 && o.zero != 1)
    return makeError("--zero " + llvm::Twine(o.zero) +
                     ": expected 0 or 1 (ZeRO-1: sharded optimizer state)");
  if (o.evalBatches < 1)
    return makeError("--eval-batches " + llvm::Twine(o.evalBatches) +
                     ": expected at least 1");
  // The last window a run reads is steps x grad-accum x batch.
  int64_t microBatches, windows;
  if (llvm::MulOverflow(o.steps, o.gradAccum, microBatches) ||
      llvm::MulOverflow(microBatches, std::max<int64_t>(o.batch, 1), windows) ||
      llvm::MulOverflow(windows, std::max<int64_t>(o.seq, 1), windows))
    return makeError("--steps x --grad-accum x --batch x --seq is beyond "
                     "2^63 tokens");
  return llvm::Error::success();
}

static llvm::Expected<std::vector<UpdateLog>>
runTrainingOn(const TrainRunOptions &given, Communicator &comm,
              llvm::raw_ostream *progress,
              llvm::function_ref<void(const UpdateLog &)> onUpdate) {
  if (given.checkpointDir.empty() || given.tokensPath.empty() ||
      given.outputDir.empty())
    return makeError("expected a checkpoint folder, --tokens FILE (or --data "
                     "DIR) and --output-dir DIR");
  // Every path is made absolute once: a run's files stay where it began
  // when the process changes directory meanwhile (a Python callback, a
  // notebook's %cd).
  TrainRunOptions o = given;
  for (std::string *p :
       {&o.checkpointDir, &o.tokensPath, &o.outputDir, &o.evalPath}) {
    if (p->empty())
      continue;
    llvm::SmallString<256> absolute(*p);
    if (std::error_code ec = fs::make_absolute(absolute))
      return makeError(*p + ": cannot make absolute: " + ec.message());
    *p = std::string(absolute);
  }
  if (!fs::is_directory(o.checkpointDir))
    return makeError(o.checkpointDir + ": not a checkpoint folder");
  if (auto e = checkOptions(o))
    return std::move(e);
  if (!o.loraInit.empty() && !o.lora) {
    // Continuing an adapter: its own configuration, as PEFT loads it.
    llvm::Expected<LoraConfig> config = readLoraConfig(o.loraInit);
    if (!config)
      return config.takeError();
    o.lora = std::move(*config);
  }
  if (o.lora) {
    if (auto e = checkLoraConfig(*o.lora))
      return std::move(e);
    // As PEFT records it: where the base model was read.
    if (o.lora->baseModel.empty())
      o.lora->baseModel = given.checkpointDir;
  }
  if (o.mergeLora && !o.lora)
    return makeError("--merge-lora merges a LoRA adapter: give --lora-r "
                     "and targets, --lora-config or --lora-init");
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
  auto data = TokenDataset::open(
      o.tokensPath, spec->vocabSize, o.batch, o.seq,
      o.shuffleSeed >= 0 ? std::optional<uint64_t>(o.shuffleSeed)
                         : std::nullopt,
      o.tokenDtype, o.gradAccum * comm.getSize(), o.packing, o.checkpointDir);
  if (!data)
    return data.takeError();
  if (comm.getRank() != 0) // rank 0 holds OUT
    return train(o, *spec, **data, *device, *precision, *kind, comm, progress,
                 onUpdate);
  bool createdOutput = !fs::exists(o.outputDir);
  auto lock = prepareOutput(o);
  auto log = !lock ? llvm::Expected<std::vector<UpdateLog>>(lock.takeError())
                   : train(o, *spec, **data, *device, *precision, *kind, comm,
                           progress, onUpdate);
  if (lock)
    lock->reset(); // removes the lock file
  if (!log && createdOutput)
    fs::remove(o.outputDir); // only if empty: a complete save stays
  return log;
}

llvm::Expected<std::vector<UpdateLog>>
mlir::tfm::runTraining(const TrainRunOptions &given,
                       llvm::raw_ostream *progress,
                       llvm::function_ref<void(const UpdateLog &)> onUpdate) {
  Communicator *comm = given.comm;
  if (!comm) {
    llvm::Expected<Communicator &> world = getWorldCommunicator();
    if (!world)
      return world.takeError();
    comm = &*world;
  }
  auto log = runTrainingOn(given, *comm,
                           comm->getRank() == 0 ? progress : nullptr, onUpdate);
  if (log || comm->getSize() == 1)
    return log;
  // The other ranks would wait for this one in their next collective: one
  // line naming the rank and the cause, and every rank ends. Rank 0 first:
  // when the error is every rank's (ranks started differently), its line
  // alone is printed and it removes the output folder it made before the
  // others end it.
  if (comm->getRank() != 0)
    std::this_thread::sleep_for(std::chrono::seconds(5));
  // One write: a rank ended meanwhile by another's abort prints no half line.
  std::string line = ("tfm-train: rank " + llvm::Twine(comm->getRank()) +
                      " of " + llvm::Twine(comm->getSize()) + ": " +
                      llvm::toString(log.takeError()) + "\n")
                         .str();
  llvm::errs() << line;
  llvm::errs().flush();
  comm->abortAll(1);
  llvm_unreachable("abortAll returns not");
}
