//===- tfm-run.cpp - run a compiled training step on an HF checkpoint -----===//
//
// The command line of the engine library (tfm/Engine; usage in docs/cli.md):
// checkpoint mode writes `logits`, `loss` and `grad/<hf-name>`; kernel mode
// (--mlir) runs one function of a .mlir file (or its F_vjp) on `arg<i>`
// tensors and writes `result<i>`. On any error nothing is written.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/AdapterFiles.h"
#include "tfm/Engine/Differentiate.h"
#include "tfm/Engine/TensorFiles.h"
#include "tfm/Engine/TokenDataset.h"
#include "tfm/Engine/Trainer.h"
#include "tfm/Engine/TrainingStep.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/InitAll.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Recompute/RecomputePlanner.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Runtime/HostAllocator.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/OutputPath.h"
#include "tfm/Support/ParserHazards.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

static cl::OptionCategory toolOptions("tfm-run options");
static cl::opt<std::string> checkpointDir(cl::Positional,
                                          cl::desc("<HF checkpoint folder>"),
                                          cl::cat(toolOptions));
static cl::opt<std::string> tokensPath(
    "tokens",
    cl::desc("tokens.json (input_ids, and labels) or a token dataset "
             ".npy/.bin of uint16/uint32 ids, read as tfm-train reads it "
             "(windows of --batch x --seq, each its own labels)"),
    cl::value_desc("file"), cl::cat(toolOptions));
static cl::opt<int64_t> batchSize("batch",
                                  cl::desc("Dataset windows per batch "
                                           "(default: 1)"),
                                  cl::init(1), cl::cat(toolOptions));
static cl::opt<int64_t> seqLen("seq",
                               cl::desc("Tokens per dataset window (default: "
                                        "128)"),
                               cl::init(128), cl::cat(toolOptions));
static cl::opt<std::string> tokenDtype("token-dtype",
                                       cl::desc("Id type of a .bin dataset: "
                                                "uint16 or uint32 (default: "
                                                "uint16)"),
                                       cl::init("uint16"),
                                       cl::cat(toolOptions));
static cl::opt<int64_t> numBatches(
    "batches",
    cl::desc("Evaluate: run this many dataset batches in order and report "
             "the loss over all their counted tokens (default: 1)"),
    cl::init(1), cl::cat(toolOptions));
static cl::opt<bool>
    withGrads("grads",
              cl::desc("Also compute and write grad/<hf-name> for every "
                       "checkpoint tensor (needs labels)"),
              cl::cat(toolOptions));
static cl::opt<std::string> adapterDir(
    "adapter",
    cl::desc("Run the checkpoint with a LoRA adapter folder as PEFT saves it "
             "(adapter_config.json, adapter_model.safetensors); --grads then "
             "writes the adapter's gradients"),
    cl::value_desc("dir"), cl::cat(toolOptions));
static cl::list<std::string>
    outputPaths("output", cl::ZeroOrMore,
                cl::desc("Output .safetensors file(s) (checkpoint mode: "
                         "optional, the summary line is printed either way)"),
                cl::value_desc("file"), cl::cat(toolOptions));
static cl::opt<std::string>
    mlirPath("mlir", cl::desc("Kernel mode: run a function of this .mlir file"),
             cl::value_desc("file"), cl::cat(toolOptions));
static cl::opt<std::string>
    funcName("func", cl::desc("Function to run with --mlir (default: main)"),
             cl::init("main"), cl::cat(toolOptions));
static cl::opt<bool>
    autodiff("autodiff",
             cl::desc("With --mlir: run the vector-Jacobian product F_vjp "
                      "(cotangents of every result follow the arguments)"),
             cl::cat(toolOptions));
static cl::list<std::string>
    inputPaths("inputs",
               cl::desc("With --mlir: arg0, arg1, ... (one per --output)"),
               cl::value_desc("file"), cl::cat(toolOptions));
static cl::opt<std::string> deviceFlag(
    "device",
    cl::desc("Where to run: cpu, cuda (GPU 0; docs/gpu.md) or "
             "gpu-sim (testing: the GPU kernels as CPU loops; default: cpu)"),
    cl::init("cpu"), cl::cat(toolOptions));
static cl::opt<bool> checkAgainstCpu(
    "check-against-cpu",
    cl::desc("With --device cuda (or gpu-sim): also run the step on the CPU "
             "and compare logits, loss and gradients (f32 tolerances; with "
             "--dtype bf16, 1e-2 relative, gradients 5e-2; exit 1 if they "
             "differ)"),
    cl::cat(toolOptions));
static cl::opt<std::string>
    dtypeFlag("dtype",
              cl::desc("Parameter and activation type: f32 or bf16 "
                       "(statistics and the loss stay f32; default: f32)"),
              cl::init("f32"), cl::cat(toolOptions));
static cl::opt<std::string>
    cudaChip("chip",
             cl::desc("With --device cuda: target SM (default: the "
                      "device's own, e.g. sm_90)"),
             cl::init(""), cl::cat(toolOptions));
static cl::opt<bool> quiet("quiet", cl::desc("Do not print the summary line"),
                           cl::cat(toolOptions));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Run this many times, report the fastest (benchmarks; "
                    "default: 1)"),
           cl::init(1), cl::cat(toolOptions));
static cl::opt<std::string> moeAuxLoss(
    "moe-aux-loss", cl::init("auto"), cl::cat(toolOptions),
    cl::desc("Load-balancing loss of MoE models: auto (as HF), on, off "
             "(default: auto)"));
static cl::opt<bool> noBlas("no-blas",
                            cl::desc("Compile GEMMs to loops instead of "
                                     "OpenBLAS calls (benchmarks)"),
                            cl::cat(toolOptions));

static cl::opt<bool>
    noFusion("no-fusion",
             cl::desc("Run the HF-literal IR as imported (no tfm-fuse)"),
             cl::cat(toolOptions));
static cl::opt<bool> noLogits(
    "no-logits",
    cl::desc("The loss-only step: write loss (and gradients), not logits; "
             "the fused LM-head loss never forms [B*T, V] (needs labels)"),
    cl::cat(toolOptions));

static cl::opt<std::string> recompute(
    "recompute", cl::init("save-all"), cl::cat(toolOptions),
    cl::desc("With --grads: what the backward rebuilds instead of saving: "
             "save-all, selective, full, a fraction of save-all (0.5) or a "
             "size per token and layer (68KiB); results are the same "
             "(default: save-all)"));

static cl::extrahelp example(R"(
Example:
  tfm-run my-checkpoint --tokens batch.json --output out.safetensors --grads
)");

static int fail(const llvm::Twine &message) {
  return reportToolError("tfm-run", message);
}

/// Outputs written so far: a run that fails later (a later --inputs in
/// kernel mode, stdout) removes them, so that no partial output is left.
static std::vector<std::string> writtenOutputs;

/// Calls `run` --repeat times and keeps the last result; `bestMs` is the
/// least `timeOf` a result.
template <typename Run, typename TimeOf>
static auto bestOf(Run run, TimeOf timeOf, double &bestMs) -> decltype(run()) {
  bestMs = 1e30;
  for (unsigned r = 0;; ++r) {
    auto result = run();
    if (!result)
      return result;
    bestMs = std::min(bestMs, timeOf(*result));
    if (r + 1 >= std::max(1u, unsigned(repeat)))
      return result;
  }
}

static int runKernel(CompileOptions compile) {
  if (inputPaths.empty() || inputPaths.size() != outputPaths.size())
    return fail("--mlir needs one --inputs per --output");
  DialectRegistry registry;
  registerAllTfmDialects(registry);
  MLIRContext ctx(registry);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFileOrSTDIN(mlirPath, /*IsText=*/true);
  if (!text)
    return fail(mlirPath + ": " + text.getError().message());
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(*text), llvm::SMLoc());
  if (failed(refuseParserHazards(sources)))
    return fail(mlirPath + ": cannot parse");
  SourceMgrDiagnosticHandler diagnostics(sources, &ctx);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sources, ParserConfig(&ctx));
  if (!module)
    return fail(mlirPath + ": cannot parse");
  std::string entry = funcName;
  if (autodiff) {
    llvm::Expected<std::string> vjp =
        differentiate(*module, funcName, /*seedAllResults=*/true);
    if (!vjp)
      return fail(mlirPath + ": " + llvm::toString(vjp.takeError()));
    entry = *vjp;
  }
  if (!module->lookupSymbol<func::FuncOp>(entry))
    return fail(mlirPath + ": no function @" + entry);
  auto compiled = CompiledFunction::compile(*module, entry, compile);
  if (!compiled)
    return fail(llvm::toString(compiled.takeError()));
  for (size_t i = 0; i < inputPaths.size(); ++i) {
    ArgumentStorage storage;
    auto args =
        readArguments(inputPaths[i], (*compiled)->getArgumentTypes(), storage);
    if (!args)
      return fail(llvm::toString(args.takeError()));
    double ms;
    auto results =
        bestOf([&] { return (*compiled)->run(*args); },
               [&](auto &) { return (*compiled)->getLastRunMs(); }, ms);
    if (!results)
      return fail(llvm::toString(results.takeError()));
    if (auto e = writeResults(outputPaths[i], *results))
      return fail(llvm::toString(std::move(e)));
    writtenOutputs.push_back(outputPaths[i]);
    if (!quiet)
      llvm::outs() << "@" << entry << ": run " << llvm::format("%.3f", ms)
                   << " ms\n";
  }
  return 0;
}

/// What `tokensPath` gives: a tokens.json batch, or a token dataset read
/// in order (TokenDataset, as tfm-train reads it) whose first --batches
/// batches an evaluation runs.
struct Batches {
  TokenBatch first;
  std::unique_ptr<TokenDataset> dataset;
};

static llvm::Expected<Batches> readBatches(int64_t vocab) {
  if (numBatches < 1)
    return makeError("--batches " + llvm::Twine(numBatches) +
                     ": expected at least 1");
  bool dataset = !llvm::StringRef(tokensPath).ends_with(".json");
  if (!dataset && numBatches != 1)
    return makeError("--batches " + llvm::Twine(numBatches) + ": " +
                     tokensPath +
                     " is one batch (a token dataset .npy/.bin "
                     "has many)");
  if (!dataset) {
    llvm::Expected<TokenBatch> tokens = readTokenFile(tokensPath, vocab);
    if (!tokens)
      return tokens.takeError();
    return Batches{std::move(*tokens), nullptr};
  }
  auto data = TokenDataset::open(tokensPath, vocab, batchSize, seqLen,
                                 std::nullopt, tokenDtype);
  if (!data)
    return data.takeError();
  // Each window once: an evaluation never wraps around the data.
  int64_t windows;
  if (llvm::MulOverflow(int64_t(numBatches), int64_t(batchSize), windows) ||
      windows > (*data)->getNumWindows())
    return makeError("--batches " + llvm::Twine(numBatches) + " x --batch " +
                     llvm::Twine(batchSize) + ": " + tokensPath + " has " +
                     llvm::Twine((*data)->getNumWindows()) + " windows of " +
                     llvm::Twine(seqLen) + " tokens");
  TokenBatch first = (*data)->next();
  return Batches{std::move(first), std::move(*data)};
}

/// Runs the first --batches batches of the dataset (`first` and the next
/// ones, one at a time) and returns the loss over all their counted tokens
/// (each batch's mean loss weighted by its count, as one large batch would
/// give it).
static llvm::Expected<StepResult> evaluate(TrainingStep &step, Batches &data,
                                           int64_t &counted, double &ms) {
  double weighted = 0;
  ms = 0;
  counted = 0;
  for (int64_t i = 0; i < numBatches; ++i) {
    TokenBatch b = i == 0 ? data.first : data.dataset->next();
    auto result = step.run(b);
    if (!result)
      return result.takeError();
    int64_t n = countedTokens(b);
    weighted += double(n) * result->loss.value_or(0.0f);
    counted += n;
    ms += result->stepMs;
  }
  if (counted == 0)
    return makeError(tokensPath + ": the batches count no target token");
  StepResult total;
  total.loss = float(weighted / double(counted));
  total.stepMs = ms;
  return total;
}

static int runCheckpoint(StepOptions options) {
  if (outputPaths.size() > 1)
    return fail("expected at most one --output");
  std::string outputPath = outputPaths.empty() ? "" : outputPaths.front();
  if (!llvm::sys::fs::is_directory(checkpointDir))
    return fail(checkpointDir + ": not a checkpoint folder");
  llvm::Expected<ModelSpec> spec = readHFConfig(checkpointDir);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  if (llvm::Error e = setMoeAuxLoss(*spec, moeAuxLoss))
    return fail(llvm::toString(std::move(e)));
  llvm::Expected<Batches> batches = readBatches(spec->vocabSize);
  if (!batches)
    return fail(llvm::toString(batches.takeError()));
  const TokenBatch *tokens = &batches->first;
  bool evaluation = numBatches > 1;
  if (evaluation && (withGrads || checkAgainstCpu))
    return fail("--batches evaluates the loss: it takes no --grads or "
                "--check-against-cpu");
  if (noLogits && tokens->labels.empty())
    return fail(tokensPath + ": field 'labels': --no-logits computes only the "
                             "loss, which needs labels");
  if (withGrads && tokens->labels.empty())
    return fail(
        tokensPath +
        ": field 'labels': --grads needs labels (the loss to differentiate)");
  llvm::Expected<Checkpoint> checkpoint = Checkpoint::open(checkpointDir);
  if (!checkpoint)
    return fail(llvm::toString(checkpoint.takeError()));
  if (checkAgainstCpu && options.compile.device == Device::cpu)
    return fail("--check-against-cpu compares a --device cuda (or gpu-sim) run "
                "with the CPU");
  llvm::Expected<Precision> precision = parsePrecision(dtypeFlag);
  if (!precision)
    return fail(llvm::toString(precision.takeError()));
  options.precision = *precision;
  options.gradients = withGrads;
  options.fuse = !noFusion;
  // An evaluation writes the loss alone: the loss-only step.
  options.logits = !noLogits && !evaluation;
  options.recompute = recompute;
  if (recompute != "save-all") {
    if (!withGrads)
      return fail("--recompute plans the backward: it needs --grads");
    if (auto budget = RecomputeBudget::parse(recompute); !budget)
      return fail("--recompute: " + llvm::toString(budget.takeError()));
  }

  if (!adapterDir.empty()) {
    llvm::Expected<LoraConfig> lora = readLoraConfig(adapterDir);
    if (!lora)
      return fail(llvm::toString(lora.takeError()));
    options.lora = std::move(*lora);
  }

  auto step = TrainingStep::create(*spec, options);
  if (!step)
    return fail(llvm::toString(step.takeError()));
  if (!adapterDir.empty()) {
    // The adapter's tensors join the base's; the weight map binds both.
    if (auto e = addLoraAdapter(*checkpoint, *(*step)->getLoraSummary(),
                                adapterDir, /*seed=*/0))
      return fail(llvm::toString(std::move(e)));
    if (!quiet)
      llvm::outs() << (*step)->getLoraSummary()->describe() << "\n";
  }
  if (auto e = (*step)->bind(std::move(*checkpoint)))
    return fail(llvm::toString(std::move(e)));
  if (auto e = (*step)->compile())
    return fail(llvm::toString(std::move(e)));
  if (evaluation) {
    int64_t counted;
    double ms;
    auto result = evaluate(**step, *batches, counted, ms);
    if (!result)
      return fail(llvm::toString(result.takeError()));
    if (!outputPath.empty()) {
      if (auto e = writeStepResult(outputPath, *result))
        return fail(llvm::toString(std::move(e)));
      writtenOutputs.push_back(outputPath);
    }
    if (!quiet)
      llvm::outs() << spec->architecture << ": loss "
                   << llvm::format("%.6f", *result->loss) << " over "
                   << numBatches << " batches of " << tokens->batch << "x"
                   << tokens->seq << " (" << counted << " counted tokens) on "
                   << deviceName(options.compile.device) << " (compile "
                   << llvm::format("%.0f", (*step)->getCompileMs())
                   << " ms, run " << llvm::format("%.1f", ms) << " ms)"
                   << (outputPath.empty() ? "" : " -> ") << outputPath << "\n";
    return 0;
  }
  double ms;
  auto result = bestOf([&] { return (*step)->run(*tokens); },
                       [](const StepResult &r) { return r.stepMs; }, ms);
  if (!result)
    return fail(llvm::toString(result.takeError()));
  std::string comparison;
  if (checkAgainstCpu) {
    auto compared = compareWithCpu(**step, *tokens, *result);
    if (!compared)
      return fail(llvm::toString(compared.takeError()));
    comparison = compared->summary();
    if (!compared->ok())
      return fail("GPU and CPU results differ: " + comparison);
  }
  if (!outputPath.empty()) {
    if (auto e = writeStepResult(outputPath, *result))
      return fail(llvm::toString(std::move(e)));
    writtenOutputs.push_back(outputPath);
  }
  if (quiet)
    return 0;
  llvm::outs() << describeStep(**step, *tokens, *result, ms)
               << (outputPath.empty() ? "" : " -> ") << outputPath << "\n";
  if (options.compile.device == Device::cuda)
    llvm::outs() << "cuda: " << cuda::deviceDescription() << ", arena peak "
                 << llvm::format("%.1f", cuda::arenaPeakBytes() / 1048576.0)
                 << " MiB, " << cuda::arenaBytesInUse()
                 << " bytes still allocated after the step\n";
  if (checkAgainstCpu)
    llvm::outs() << "check against cpu: " << comparison << "\n";
  return 0;
}

static int removeOutputsOnFailure(int status) {
  if (status != 0)
    for (const std::string &path : writtenOutputs)
      removeWrittenOutput(path);
  return status;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // Steps allocate and free the same memory again and again.
  rt::keepFreedHostMemory();
  cl::HideUnrelatedOptions(toolOptions);
  setToolVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv,
                              "Run a tfm-compiled step on an HF checkpoint\n");
  llvm::Expected<Device> device = parseDevice(deviceFlag);
  if (!device)
    return fail(llvm::toString(device.takeError()));
  if (!cudaChip.empty() && *device != Device::cuda)
    return fail("--chip " + cudaChip +
                ": a GPU target, for --device cuda "
                "(this run is on " +
                deviceFlag + ")");
  if (!cudaChip.empty() && !isSmName(cudaChip))
    return fail("--chip " + cudaChip +
                ": expected sm_<major><minor>[a|f], sm_50 or later (sm_90a)");
  // Outputs that cannot be written are refused before anything runs.
  for (const std::string &path : outputPaths)
    if (llvm::Expected<OutputTarget> target = resolveOutputPath(path); !target)
      return fail("--output: " + llvm::toString(target.takeError()));
  StepOptions options;
  options.compile = {*device, /*useBlas=*/!noBlas, cudaChip};
  if (!mlirPath.empty()) {
    if (checkAgainstCpu || withGrads || dtypeFlag != "f32" ||
        !checkpointDir.empty() || noFusion || noLogits ||
        recompute != "save-all" || !adapterDir.empty())
      return fail("--mlir (kernel mode) takes no checkpoint, --grads, "
                  "--dtype, --check-against-cpu, --no-fusion, --no-logits, "
                  "--recompute or --adapter");
    return removeOutputsOnFailure(
        finishToolOutput("tfm-run", runKernel(options.compile)));
  }
  if (checkpointDir.empty() || tokensPath.empty())
    return fail("expected a checkpoint folder and --tokens (or --mlir FILE "
                "--inputs FILE)");
  return removeOutputsOnFailure(
      finishToolOutput("tfm-run", runCheckpoint(options)));
}
