//===- tfm-train.cpp - train an HF checkpoint with the compiled step ------===//
//
// The command line of tfm/Engine's runTraining (TrainRun.h; usage in
// docs/cli.md): N updates of the compiled training step and optimizer step,
// a progress line per update, saves OUT/checkpoint-<step> (whole or absent,
// never half written), and at the end the trained model in OUT itself, in
// the input checkpoint's layout, with OUT/train_log.json.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/TrainRun.h"
#include "tfm/Runtime/HostAllocator.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/Error.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <atomic>
#include <csignal>
#include <unistd.h>

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

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
static cl::opt<std::string> dataPath(
    "data",
    cl::desc("A corpus prepared by python -m tfm.data prepare: its documents "
             "packed into --seq windows, positions restarting at each "
             "document (docs/data.md)"),
    cl::value_desc("dir"), cl::cat(toolOptions));
static cl::opt<bool> noPacking(
    "no-packing",
    cl::desc("With --data: one document per window, padded, instead of "
             "packing"),
    cl::cat(toolOptions));
static cl::opt<std::string> evalData(
    "eval-data",
    cl::desc("Held-out data (read like --data or --tokens): its loss and "
             "perplexity in the log, train_log.json and OUT/loss.svg"),
    cl::value_desc("path"), cl::cat(toolOptions));
static cl::opt<int64_t> evalEvery(
    "eval-every",
    cl::desc("Evaluate every K updates (default: 0, at the end only)"),
    cl::init(0), cl::cat(toolOptions));
static cl::opt<int64_t> evalBatches(
    "eval-batches",
    cl::desc("Held-out micro-batches per evaluation, the same ones each time "
             "(default: 8)"),
    cl::init(8), cl::cat(toolOptions));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Where the saves and the trained model go (a folder "
                       "this run holds alone)"),
              cl::value_desc("dir"), cl::cat(toolOptions));
static cl::opt<int64_t>
    steps("steps", cl::desc("Optimizer updates to run (default: 20)"),
          cl::init(20), cl::cat(toolOptions));
static cl::opt<int64_t>
    batchSize("batch", cl::desc("Dataset windows per micro-batch (default: 1)"),
              cl::init(1), cl::cat(toolOptions));
static cl::opt<int64_t>
    seqLen("seq", cl::desc("Tokens per dataset window (default: 128)"),
           cl::init(128), cl::cat(toolOptions));
static cl::opt<int64_t> shuffleSeed(
    "shuffle-seed",
    cl::desc("Visit the dataset's windows in a seeded order, a new one "
             "each pass (default: in order)"),
    cl::init(-1), cl::cat(toolOptions));
static cl::opt<std::string>
    tokenDtype("token-dtype",
               cl::desc("Id type of a .bin dataset: uint16 or "
                        "uint32 (default: uint16)"),
               cl::init("uint16"), cl::cat(toolOptions));
static cl::opt<std::string>
    optimizerFlag("optimizer", cl::desc("adamw or sgd (default: adamw)"),
                  cl::init("adamw"), cl::cat(toolOptions));
static cl::opt<double> lr("lr",
                          cl::desc("Peak learning rate, finite and >= 0 "
                                   "(default: 1e-3)"),
                          cl::init(1e-3), cl::cat(toolOptions));
static cl::opt<double> beta1("adam-beta1",
                             cl::desc("AdamW beta1, in [0, 1) (default: 0.9)"),
                             cl::init(0.9), cl::cat(toolOptions));
static cl::opt<double>
    beta2("adam-beta2", cl::desc("AdamW beta2, in [0, 1) (default: 0.999)"),
          cl::init(0.999), cl::cat(toolOptions));
static cl::opt<double> eps("adam-eps",
                           cl::desc("AdamW epsilon (default: 1e-8)"),
                           cl::init(1e-8), cl::cat(toolOptions));
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("Decoupled weight decay "
                                            "(default: 0.01)"),
                                   cl::init(0.01), cl::cat(toolOptions));
static cl::opt<std::string>
    decay("decay",
          cl::desc("Which parameters decay: all (torch's one group) or hf (not "
                   "biases and norm weights, as HF's Trainer; default: all)"),
          cl::init("all"), cl::cat(toolOptions));
static cl::opt<double> momentum("momentum",
                                cl::desc("SGD momentum (default: 0)"),
                                cl::init(0.0), cl::cat(toolOptions));
static cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                              cl::cat(toolOptions));
static cl::opt<double>
    maxGradNorm("max-grad-norm",
                cl::desc("Clip the global gradient norm (0: never; "
                         "default: 1.0)"),
                cl::init(1.0), cl::cat(toolOptions));
static cl::opt<int64_t>
    warmupSteps("warmup-steps", cl::desc("Linear warm-up updates (default: 0)"),
                cl::init(0), cl::cat(toolOptions));
static cl::opt<std::string>
    schedule("schedule",
             cl::desc("constant, linear or cosine (after warm-up; "
                      "default: constant)"),
             cl::init("constant"), cl::cat(toolOptions));
static cl::opt<int64_t>
    gradAccum("grad-accum",
              cl::desc("Micro-batches per update, on each rank under mpirun "
                       "(default: 1)"),
              cl::init(1), cl::cat(toolOptions));
static cl::opt<int> zeroStage(
    "zero",
    cl::desc("1: ZeRO-1, each rank keeps the optimizer state of a dim-0 "
             "shard of every trained tensor (default: 0, whole on every "
             "rank)"),
    cl::init(0), cl::cat(toolOptions));
static cl::opt<std::string> freeze(
    "freeze",
    cl::desc("Regular expression of HF tensor names to freeze (no update)"),
    cl::init(""), cl::cat(toolOptions));
static cl::opt<std::string>
    deviceFlag("device", cl::desc("cpu, cuda or gpu-sim (default: cpu)"),
               cl::init("cpu"), cl::cat(toolOptions));
static cl::opt<std::string> dtypeFlag("dtype",
                                      cl::desc("f32 or bf16 (default: f32)"),
                                      cl::init("f32"), cl::cat(toolOptions));
static cl::opt<std::string> recompute(
    "recompute", cl::init("save-all"), cl::cat(toolOptions),
    cl::desc("What the backward rebuilds (save-all, selective, full, 0.5, "
             "68KiB; default: save-all)"));
static cl::opt<std::string>
    moeAuxLoss("moe-aux-loss", cl::init("auto"), cl::cat(toolOptions),
               cl::desc("auto (as HF), on or off (default: auto)"));
static cl::opt<bool> noFusion("no-fusion",
                              cl::desc("Train the HF-literal IR (no tfm-fuse)"),
                              cl::cat(toolOptions));
static cl::opt<int64_t> saveEvery("save-every",
                                  cl::desc("Save every K updates (0: at the "
                                           "end only; default: 0)"),
                                  cl::init(0), cl::cat(toolOptions));
static cl::opt<int64_t>
    logEvery("log-every",
             cl::desc("A progress line every K updates, and the first and "
                      "last (default: 1)"),
             cl::init(1), cl::cat(toolOptions));
static cl::opt<bool> resume(
    "resume",
    cl::desc("Continue the run saved in --output-dir from its last save"),
    cl::cat(toolOptions));
static cl::opt<bool> quiet("quiet", cl::desc("No progress lines"),
                           cl::cat(toolOptions));

static cl::OptionCategory loraOptions("LoRA (PEFT's LoraConfig)");
static cl::opt<int64_t> loraR("lora-r",
                              cl::desc("Train LoRA adapters of rank r (default "
                                       "with other LoRA options: 8)"),
                              cl::init(8), cl::cat(loraOptions));
static cl::opt<double> loraAlpha("lora-alpha",
                                 cl::desc("lora_alpha (default: 8)"),
                                 cl::init(8), cl::cat(loraOptions));
static cl::opt<std::string> loraTargetModules(
    "lora-target-modules",
    cl::desc("Modules to adapt: names, comma-separated (q_proj,v_proj), "
             "all-linear, or a regular expression over whole module names"),
    cl::init(""), cl::cat(loraOptions));
static cl::opt<std::string> loraTargetParameters(
    "lora-target-parameters",
    cl::desc("Stacked parameters to adapt (mlp.experts.gate_up_proj,...)"),
    cl::init(""), cl::cat(loraOptions));
static cl::opt<bool> useRslora("use-rslora",
                               cl::desc("Scale by alpha/sqrt(r) (rsLoRA)"),
                               cl::cat(loraOptions));
static cl::opt<std::string>
    loraConfig("lora-config",
               cl::desc("An adapter_config.json as PEFT writes it"),
               cl::init(""), cl::cat(loraOptions));
static cl::opt<std::string>
    loraInit("lora-init",
             cl::desc("Continue the adapter in this folder (PEFT's layout)"),
             cl::init(""), cl::cat(loraOptions));
static cl::opt<uint64_t> loraSeed("lora-seed",
                                  cl::desc("Seed of fresh adapters (default: "
                                           "0)"),
                                  cl::init(0), cl::cat(loraOptions));
static cl::opt<bool>
    mergeLora("merge-lora",
              cl::desc("Also write OUT/merged: the model with the adapter "
                       "merged in (loads without PEFT)"),
              cl::cat(loraOptions));

static cl::extrahelp example(R"(
Defaults are torch.optim.AdamW's and HF's; docs/cli.md has the details.

Example:
  tfm-train my-checkpoint --tokens train.npy --batch 8 --seq 64 --steps 20 \
      --lr 1e-2 --warmup-steps 2 --schedule cosine --output-dir trained
)");

static int fail(const llvm::Twine &message) {
  return reportToolError("tfm-train", message);
}

/// Set by the first SIGINT or SIGTERM: the run finishes its update, saves
/// and stops. The second signal ends the process at once.
static std::atomic<bool> interrupted{false};

static void onInterrupt(int sig) {
  if (interrupted.exchange(true)) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  static const char message[] =
      "tfm-train: interrupted: finishing this update, then saving (signal "
      "again to stop at once)\n";
  ssize_t ignored = ::write(2, message, sizeof(message) - 1);
  (void)ignored;
}

/// Replaces LLVM's handlers for these two (which would remove the files
/// being written and exit) after InitLLVM installed them.
static void installInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  // System calls the signal interrupts (a write of a save) go on.
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM})
    ::sigaction(sig, &action, nullptr);
}

static TrainRunOptions optionsFromCommandLine() {
  TrainRunOptions o;
  o.checkpointDir = checkpointDir;
  o.tokensPath = dataPath.getNumOccurrences() ? dataPath : tokensPath;
  o.packing = !noPacking;
  o.evalPath = evalData;
  o.evalEvery = evalEvery;
  o.evalBatches = evalBatches;
  o.outputDir = outputDir;
  o.steps = steps;
  o.batch = batchSize;
  o.seq = seqLen;
  o.shuffleSeed = shuffleSeed;
  o.tokenDtype = tokenDtype;
  o.optimizer.optimizer = optimizerFlag;
  o.optimizer.beta1 = beta1;
  o.optimizer.beta2 = beta2;
  o.optimizer.eps = eps;
  o.optimizer.weightDecay = weightDecay;
  o.optimizer.decay = decay;
  o.optimizer.momentum = momentum;
  o.optimizer.nesterov = nesterov;
  o.optimizer.maxGradNorm = maxGradNorm;
  o.lr = lr;
  o.warmupSteps = warmupSteps;
  o.schedule = schedule;
  o.gradAccum = gradAccum;
  o.zero = zeroStage;
  o.freeze = freeze;
  o.device = deviceFlag;
  o.dtype = dtypeFlag;
  o.recompute = recompute;
  o.moeAuxLoss = moeAuxLoss;
  o.fusion = !noFusion;
  o.saveEvery = saveEvery;
  o.logEvery = logEvery;
  o.resume = resume;
  o.interrupted = &interrupted;
  o.loraInit = loraInit;
  o.loraSeed = loraSeed;
  o.mergeLora = mergeLora;
  return o;
}

static llvm::SmallVector<std::string> commaList(llvm::StringRef s) {
  llvm::SmallVector<llvm::StringRef> parts;
  s.split(parts, ',', -1, /*KeepEmpty=*/false);
  llvm::SmallVector<std::string> out;
  for (llvm::StringRef p : parts)
    out.push_back(p.trim().str());
  return out;
}

/// The LoRA configuration the flags give, if any: --lora-config's file, or
/// the --lora-* flags. Both at once is an error.
static llvm::Expected<std::optional<LoraConfig>> loraFromCommandLine() {
  bool flags = loraR.getNumOccurrences() || loraAlpha.getNumOccurrences() ||
               loraTargetModules.getNumOccurrences() ||
               loraTargetParameters.getNumOccurrences() ||
               useRslora.getNumOccurrences();
  if (!loraConfig.empty()) {
    if (flags)
      return makeError("--lora-config gives the whole configuration: leave "
                       "out --lora-r, --lora-alpha, --lora-target-* and "
                       "--use-rslora");
    llvm::Expected<LoraConfig> c = readLoraConfig(loraConfig);
    if (!c)
      return c.takeError();
    return std::optional<LoraConfig>(std::move(*c));
  }
  if (!flags)
    return std::optional<LoraConfig>();
  LoraConfig c;
  c.r = loraR;
  c.alpha = loraAlpha;
  c.useRslora = useRslora;
  llvm::StringRef targets = loraTargetModules;
  // Module names never hold these: a value that does is a regular
  // expression (PEFT's string form).
  if (targets.find_first_of("*()[]\\|^$?+{}") != llvm::StringRef::npos)
    c.targetRegex = targets.str();
  else
    c.setTargetModules(commaList(targets));
  for (const std::string &t : commaList(loraTargetParameters))
    c.targetParameters.push_back(t);
  return std::optional<LoraConfig>(std::move(c));
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // Steps allocate and free the same memory again and again.
  rt::keepFreedHostMemory();
  cl::HideUnrelatedOptions({&toolOptions, &loraOptions});
  setToolVersionPrinter();
  cl::ParseCommandLineOptions(
      argc, argv,
      "Train an HF checkpoint with the tfm-compiled step and optimizer\n");
  if (dataPath.getNumOccurrences() && tokensPath.getNumOccurrences())
    return fail("give --tokens or --data, not both");
  if (noPacking && !dataPath.getNumOccurrences())
    return fail("--no-packing applies to --data");
  if (shuffleSeed.getNumOccurrences() && shuffleSeed < 0)
    return fail("--shuffle-seed " + llvm::Twine(shuffleSeed) +
                ": expected a seed >= 0 (leave it out to read in order)");
  installInterruptHandler();
  TrainRunOptions options = optionsFromCommandLine();
  auto lora = loraFromCommandLine();
  if (!lora)
    return fail(llvm::toString(lora.takeError()));
  options.lora = std::move(*lora);
  auto log = runTraining(options, quiet ? nullptr : &llvm::outs());
  if (!log)
    return fail(llvm::toString(log.takeError()));
  return finishToolOutput("tfm-train", 0);
}
