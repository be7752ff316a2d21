//===- tfm-train.cpp - train an HF checkpoint with the compiled step ------===//
//
// The command line of tfm/Engine's Trainer (usage in docs/cli.md): N updates
// of the compiled training step and optimizer step, a progress line per
// update, saves OUT/checkpoint-<step> (whole or absent, never half
// written), and at the end the trained model in OUT itself, in the input
// checkpoint's layout, with OUT/train_log.json.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/TokenDataset.h"
#include "tfm/Engine/TrainCheckpoint.h"
#include "tfm/Engine/Trainer.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Recompute/RecomputePlanner.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/Error.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;
namespace fs = llvm::sys::fs;
using json = nlohmann::ordered_json;

static cl::OptionCategory toolOptions("tfm-train options");
static cl::opt<std::string> checkpointDir(cl::Positional,
                                          cl::desc("<HF checkpoint folder>"),
                                          cl::cat(toolOptions));
static cl::opt<std::string> tokensPath(
    "tokens",
    cl::desc("tokens.json (every update's batch, split into --grad-accum "
             "micro-batches) or a token dataset "
             ".npy/.bin of uint16/uint32 ids (windows of --batch x --seq)"),
    cl::value_desc("file"), cl::cat(toolOptions));
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("Where the trained model goes"),
                                      cl::value_desc("dir"),
                                      cl::cat(toolOptions));
static cl::opt<int64_t> steps("steps", cl::desc("Optimizer updates to run"),
                              cl::init(20), cl::cat(toolOptions));
static cl::opt<int64_t> batchSize("batch",
                                  cl::desc("Dataset windows per micro-batch"),
                                  cl::init(1), cl::cat(toolOptions));
static cl::opt<int64_t> seqLen("seq", cl::desc("Tokens per dataset window"),
                               cl::init(128), cl::cat(toolOptions));
static cl::opt<int64_t> shuffleSeed(
    "shuffle-seed",
    cl::desc("Visit the dataset's windows in a seeded order (-1: in order)"),
    cl::init(-1), cl::cat(toolOptions));
static cl::opt<std::string> tokenDtype("token-dtype",
                                       cl::desc("Id type of a .bin dataset"),
                                       cl::init("uint16"),
                                       cl::cat(toolOptions));
static cl::opt<std::string> optimizerFlag("optimizer", cl::desc("adamw or sgd"),
                                          cl::init("adamw"),
                                          cl::cat(toolOptions));
static cl::opt<double> lr("lr", cl::desc("Peak learning rate"), cl::init(1e-3),
                          cl::cat(toolOptions));
static cl::opt<double> beta1("adam-beta1", cl::init(0.9), cl::cat(toolOptions));
static cl::opt<double> beta2("adam-beta2", cl::init(0.999),
                             cl::cat(toolOptions));
static cl::opt<double> eps("adam-eps", cl::init(1e-8), cl::cat(toolOptions));
static cl::opt<double> weightDecay("weight-decay", cl::init(0.01),
                                   cl::cat(toolOptions));
static cl::opt<std::string>
    decay("decay",
          cl::desc("Which parameters decay: all (torch's one group) or hf (not "
                   "biases and norm weights, as HF's Trainer)"),
          cl::init("all"), cl::cat(toolOptions));
static cl::opt<double> momentum("momentum", cl::desc("SGD momentum"),
                                cl::init(0.0), cl::cat(toolOptions));
static cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                              cl::cat(toolOptions));
static cl::opt<double>
    maxGradNorm("max-grad-norm",
                cl::desc("Clip the global gradient norm (0: never)"),
                cl::init(1.0), cl::cat(toolOptions));
static cl::opt<int64_t> warmupSteps("warmup-steps",
                                    cl::desc("Linear warm-up updates"),
                                    cl::init(0), cl::cat(toolOptions));
static cl::opt<std::string>
    schedule("schedule", cl::desc("constant, linear or cosine (after warm-up)"),
             cl::init("constant"), cl::cat(toolOptions));
static cl::opt<int64_t> gradAccum("grad-accum",
                                  cl::desc("Micro-batches per update"),
                                  cl::init(1), cl::cat(toolOptions));
static cl::opt<std::string> freeze(
    "freeze",
    cl::desc("Regular expression of HF tensor names to freeze (no update)"),
    cl::init(""), cl::cat(toolOptions));
static cl::opt<std::string> deviceFlag("device",
                                       cl::desc("cpu, cuda or gpu-sim"),
                                       cl::init("cpu"), cl::cat(toolOptions));
static cl::opt<std::string> dtypeFlag("dtype", cl::desc("f32 or bf16"),
                                      cl::init("f32"), cl::cat(toolOptions));
static cl::opt<std::string> recompute(
    "recompute", cl::init("save-all"), cl::cat(toolOptions),
    cl::desc("What the backward rebuilds (save-all, selective, full, 0.5, "
             "68KiB)"));
static cl::opt<std::string> moeAuxLoss("moe-aux-loss", cl::init("auto"),
                                       cl::cat(toolOptions),
                                       cl::desc("auto (as HF), on or off"));
static cl::opt<bool> noFusion("no-fusion",
                              cl::desc("Train the HF-literal IR (no tfm-fuse)"),
                              cl::cat(toolOptions));
static cl::opt<int64_t> saveEvery("save-every",
                                  cl::desc("Save every K updates (0: at the "
                                           "end only)"),
                                  cl::init(0), cl::cat(toolOptions));
static cl::opt<bool> resume(
    "resume",
    cl::desc("Continue the run saved in --output-dir from its last save"),
    cl::cat(toolOptions));
static cl::opt<bool> quiet("quiet", cl::desc("No progress lines"),
                           cl::cat(toolOptions));

static int fail(const llvm::Twine &message) {
  return reportToolError("tfm-train", message);
}

static std::string childPath(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> p(a);
  llvm::sys::path::append(p, b);
  return p.str().str();
}

/// The settings a resumed run must repeat.
static json runSettings() {
  return {{"optimizer", optimizerFlag.getValue()},
          {"lr", lr.getValue()},
          {"adam_beta1", beta1.getValue()},
          {"adam_beta2", beta2.getValue()},
          {"adam_eps", eps.getValue()},
          {"weight_decay", weightDecay.getValue()},
          {"decay", decay.getValue()},
          {"momentum", momentum.getValue()},
          {"nesterov", nesterov.getValue()},
          {"max_grad_norm", maxGradNorm.getValue()},
          {"schedule", schedule.getValue()},
          {"warmup_steps", warmupSteps.getValue()},
          {"grad_accum", gradAccum.getValue()},
          {"batch", batchSize.getValue()},
          {"seq", seqLen.getValue()},
          {"shuffle_seed", shuffleSeed.getValue()},
          {"tokens", llvm::sys::path::filename(tokensPath).str()},
          {"dtype", dtypeFlag.getValue()},
          {"freeze", freeze.getValue()},
          {"fusion", !noFusion},
          {"moe_aux_loss", moeAuxLoss.getValue()}};
}

static llvm::Expected<json> readJson(llvm::StringRef file) {
  auto buf = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buf)
    return makeError(file + ": cannot read: " + buf.getError().message());
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
                       (saved.contains(key) ? saved[key].dump() : "absent") +
                       " there, " + value.dump() + " here");
  for (auto &[key, value] : saved.items())
    if (!now.contains(key))
      return makeError(what + ": field '" + key + "' is " + value.dump() +
                       " there, absent here");
  return llvm::Error::success();
}

/// OUT exists (created if needed) and takes files; a finished or saved run
/// there is never overwritten without --resume.
/// Whether this run made the output directory (removed again, if still
/// empty, when the run fails).
static bool createdOutput = false;

static llvm::Error prepareOutput() {
  createdOutput = !fs::exists(outputDir);
  if (std::error_code ec = fs::create_directories(outputDir))
    return makeError(outputDir +
                     ": cannot create the output directory: " + ec.message());
  std::string probe = childPath(outputDir, ".tfm-train-probe");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(probe, ec, fs::OF_None);
    if (ec)
      return makeError(outputDir + ": the output directory is not writable: " +
                       ec.message());
  }
  fs::remove(probe);
  if (!resume && (fs::exists(childPath(outputDir, "config.json")) ||
                  !findLatestCheckpoint(outputDir).empty()))
    return makeError(outputDir +
                     ": holds a previous run (config.json or a checkpoint-*): "
                     "pass --resume to continue it, or choose another "
                     "--output-dir");
  return llvm::Error::success();
}

static void printUpdate(const UpdateLog &l) {
  llvm::outs() << "step " << l.step << "/" << steps << "  loss "
               << llvm::format("%.6f", l.loss) << "  grad_norm "
               << llvm::format("%.4f", l.gradNorm) << "  lr "
               << llvm::format("%.3e", l.lr) << "  "
               << llvm::format("%.0f", l.ms > 0 ? l.tokens / (l.ms / 1e3) : 0)
               << " tok/s\n";
  llvm::outs().flush();
}

static int train() {
  if (checkpointDir.empty() || tokensPath.empty() || outputDir.empty())
    return fail("expected a checkpoint folder, --tokens FILE and "
                "--output-dir DIR");
  if (!fs::is_directory(checkpointDir))
    return fail(checkpointDir + ": not a checkpoint folder");
  if (steps < 1 || gradAccum < 1 || saveEvery < 0 || warmupSteps < 0)
    return fail("--steps and --grad-accum must be >= 1, --save-every and "
                "--warmup-steps >= 0");
  llvm::Expected<Device> device = parseDevice(deviceFlag);
  if (!device)
    return fail(llvm::toString(device.takeError()));
  llvm::Expected<Precision> precision = parsePrecision(dtypeFlag);
  if (!precision)
    return fail(llvm::toString(precision.takeError()));
  llvm::Expected<LearningRateSchedule::Kind> kind = parseSchedule(schedule);
  if (!kind)
    return fail(llvm::toString(kind.takeError()));
  if (auto budget = RecomputeBudget::parse(recompute); !budget)
    return fail("--recompute: " + llvm::toString(budget.takeError()));
  llvm::Expected<ModelSpec> spec = readHFConfig(checkpointDir);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  if (llvm::Error e = setMoeAuxLoss(*spec, moeAuxLoss))
    return fail(llvm::toString(std::move(e)));
  auto data = TokenDataset::open(
      tokensPath, spec->vocabSize, batchSize, seqLen,
      shuffleSeed >= 0 ? std::optional<uint64_t>(shuffleSeed) : std::nullopt,
      tokenDtype, gradAccum);
  if (!data)
    return fail(llvm::toString(data.takeError()));
  if (llvm::Error e = prepareOutput())
    return fail(llvm::toString(std::move(e)));

  // A resumed run binds the weights of its last save.
  SavedRun run;
  run.settings = runSettings().dump();
  std::string weightsDir = checkpointDir, latest;
  if (resume) {
    latest = findLatestCheckpoint(outputDir);
    if (latest.empty())
      return fail(outputDir + ": --resume: no complete save (checkpoint-*) "
                              "to resume from");
    llvm::Expected<SavedRun> saved = readSavedRun(latest);
    if (!saved)
      return fail(llvm::toString(saved.takeError()));
    auto savedConfig = readJson(childPath(latest, "config.json"));
    auto config = readJson(childPath(checkpointDir, "config.json"));
    if (!savedConfig || !config)
      return fail(llvm::toString(savedConfig ? config.takeError()
                                             : savedConfig.takeError()));
    if (auto e = sameObject(*savedConfig, *config,
                            latest + "/config.json holds another model than " +
                                checkpointDir + "/config.json"))
      return fail(llvm::toString(std::move(e)));
    if (auto e = sameObject(json::parse(saved->settings), runSettings(),
                            "--resume: " + latest +
                                " was trained with other settings"))
      return fail(llvm::toString(std::move(e)));
    if (saved->step >= steps)
      return fail(latest + ": the save has done " + llvm::Twine(saved->step) +
                  " updates, --steps asks for " + llvm::Twine(steps));
    weightsDir = latest;
    run.step = saved->step;
    run.dataPosition = saved->dataPosition;
    run.log = saved->log;
  }
  llvm::Expected<Checkpoint> checkpoint = Checkpoint::open(weightsDir);
  if (!checkpoint)
    return fail(llvm::toString(checkpoint.takeError()));

  StepOptions options;
  options.compile = {*device, /*useBlas=*/true, ""};
  options.precision = *precision;
  options.gradients = true;
  options.logits = false;
  options.nameGradients = false;
  options.fuse = !noFusion;
  options.recompute = recompute;
  options.freeze = freeze;
  auto step = TrainingStep::create(*spec, options);
  if (!step)
    return fail(llvm::toString(step.takeError()));
  if (auto e = (*step)->bind(std::move(*checkpoint)))
    return fail(llvm::toString(std::move(e)));
  OptimizerOptions optimizer;
  optimizer.optimizer = optimizerFlag;
  optimizer.beta1 = beta1;
  optimizer.beta2 = beta2;
  optimizer.eps = eps;
  optimizer.weightDecay = weightDecay;
  optimizer.decay = decay;
  optimizer.momentum = momentum;
  optimizer.nesterov = nesterov;
  optimizer.maxGradNorm = maxGradNorm;
  LearningRateSchedule lrSchedule;
  lrSchedule.kind = *kind;
  lrSchedule.baseLr = lr;
  lrSchedule.warmupSteps = warmupSteps;
  lrSchedule.totalSteps = steps;
  auto trainer = Trainer::create(**step, optimizer, lrSchedule);
  if (!trainer)
    return fail(llvm::toString(trainer.takeError()));
  if (resume) {
    if (auto e = restoreOptimizer(latest, run.step, **step, **trainer))
      return fail(llvm::toString(std::move(e)));
    (*data)->seek(run.dataPosition);
  }
  if (!quiet)
    llvm::outs() << "tfm-train: " << spec->architecture << ", "
                 << (*trainer)->getTrainedArguments().size()
                 << " trained parameters, " << optimizerFlag << " lr "
                 << llvm::format("%g", lr.getValue()) << " (" << schedule
                 << ", warm-up " << warmupSteps << "), data "
                 << (*data)->describe() << ", on " << deviceName(*device)
                 << " (compile "
                 << llvm::format("%.0f", (*step)->getCompileMs()) << " ms)"
                 << (resume ? ", resumed from " + latest : std::string())
                 << "\n";

  auto save = [&]() -> llvm::Error {
    run.step = (*trainer)->getStep();
    run.dataPosition = (*data)->getPosition();
    // The input folder gives the other files (tokenizer, ...) and the
    // sharding; the bound checkpoint the names and dtypes.
    return saveTrainingCheckpoint(outputDir, checkpointDir, **step, **trainer,
                                  run);
  };
  while ((*trainer)->getStep() < steps) {
    std::vector<TokenBatch> micro;
    for (int64_t m = 0; m < gradAccum; ++m)
      micro.push_back((*data)->next());
    llvm::Expected<UpdateLog> log = (*trainer)->update(micro);
    if (!log)
      return fail(llvm::toString(log.takeError()));
    run.log.push_back(*log);
    if (!quiet)
      printUpdate(*log);
    if (saveEvery > 0 && log->step % saveEvery == 0 && log->step < steps)
      if (auto e = save())
        return fail(llvm::toString(std::move(e)));
  }
  if (auto e = save())
    return fail(llvm::toString(std::move(e)));
  std::string last = findLatestCheckpoint(outputDir);
  if (auto e = publishCheckpoint(last, outputDir))
    return fail(llvm::toString(std::move(e)));
  if (auto e = writeTrainLog(childPath(outputDir, "train_log.json"), run.log))
    return fail(llvm::toString(std::move(e)));
  if (!quiet && *device == Device::cuda)
    llvm::outs() << "cuda: " << cuda::deviceDescription() << ", arena peak "
                 << llvm::format("%.1f", cuda::arenaPeakBytes() / 1048576.0)
                 << " MiB; the last update copied "
                 << run.log.back().stagedBytes
                 << " bytes to the device (weights, gradients and optimizer "
                    "state stay there)\n";
  if (!quiet)
    llvm::outs() << "tfm-train: " << steps << " updates, loss "
                 << llvm::format("%.6f", run.log.front().loss) << " -> "
                 << llvm::format("%.6f", run.log.back().loss) << "; model in "
                 << outputDir << " (save " << last << ")\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Train an HF checkpoint with the tfm-compiled step and optimizer\n");
  int status = train();
  if (status != 0 && createdOutput)
    fs::remove(outputDir); // only if empty: a complete save stays
  return status;
}
