//===- tfm-run.cpp - run a compiled training step on an HF checkpoint -----===//
//
//   tfm-run DIR --tokens TOKENS.json --output OUT.safetensors
//
// Imports DIR/config.json, binds DIR's safetensors through the weight map,
// compiles the step for the CPU (JIT) and writes f32 `logits` [B, T, V] and,
// when labels are given, `loss`. Errors name the file, field or tensor; on
// any error nothing is written.
//
//===----------------------------------------------------------------------===//

#include "TokenFile.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/Runtime/CpuEngine.h"
#include "tfm/Runtime/Safetensors.h"
#include "tfm/Runtime/WeightBinder.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

static cl::opt<std::string> checkpointDir(cl::Positional,
                                          cl::desc("<HF checkpoint folder>"));
static cl::opt<std::string> tokensPath("tokens",
                                       cl::desc("JSON file with input_ids (and labels)"),
                                       cl::value_desc("file"));
// Kernel mode: run one function of a .mlir file on named inputs.
static cl::opt<std::string> mlirPath("mlir",
                                     cl::desc("Run a function of this tfm .mlir file instead "
                                              "of a checkpoint (inputs from --inputs)"),
                                     cl::value_desc("file"));
static cl::opt<std::string> funcName("func", cl::desc("Function to run with --mlir"),
                                     cl::init("main"));
static cl::opt<std::string> inputsPath("inputs",
                                       cl::desc("safetensors with arg0, arg1, ... for --mlir"),
                                       cl::value_desc("file"));
static cl::opt<std::string> outputPath("output", cl::Required,
                                       cl::desc("Output .safetensors file"),
                                       cl::value_desc("file"));
static cl::opt<std::string> device("device", cl::desc("Where to run (cpu)"),
                                   cl::init("cpu"));
static cl::opt<bool> quiet("quiet", cl::desc("Do not print the summary line"));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Run the step this many times and report the "
                                         "fastest (benchmarks)"),
                                cl::init(1));
static cl::opt<bool> noBlas("no-blas", cl::desc("Compile GEMMs to loops instead of "
                                                "OpenBLAS calls (benchmarks)"));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tfm-run") << message << "\n";
  return 1;
}

/// --mlir mode: arguments "arg<i>" from --inputs, results "result<i>".
static int runKernel() {
  llvm::Expected<std::unique_ptr<SafetensorsFile>> inputs = SafetensorsFile::open(inputsPath);
  if (!inputs)
    return fail(llvm::toString(inputs.takeError()));
  DialectRegistry registry;
  registerCpuRuntimeDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(mlirPath, &ctx);
  if (!module)
    return fail(mlirPath + ": cannot parse");
  auto func = module->lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return fail(mlirPath + ": no function @" + funcName);
  std::vector<std::vector<char>> storage;
  std::vector<CpuModel::Arg> args;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = "arg" + std::to_string(i);
    auto it = (*inputs)->tensors().find(name);
    if (it == (*inputs)->tensors().end())
      return fail(inputsPath + ": no tensor '" + name + "'");
    const TensorView &view = it->second;
    Type elem = cast<RankedTensorType>(func.getArgumentTypes()[i]).getElementType();
    bool ok = (elem.isF32() && view.dtype == DType::F32) ||
              (elem.isF64() && view.dtype == DType::F64) ||
              (elem.isInteger(64) && view.dtype == DType::I64) ||
              (elem.isInteger(32) && view.dtype == DType::I32);
    if (!ok)
      return fail(inputsPath + ": tensor '" + name + "' has dtype " + dtypeName(view.dtype) +
                  ", argument #" + llvm::Twine(i) + " is not of that type");
    storage.emplace_back(view.data, view.data + view.numBytes); // aligned copy
    args.push_back({storage.back().data(), view.shape});
  }
  CpuPipelineOptions options;
  options.useBlas = !noBlas;
  auto model = CpuModel::compile(*module, funcName, options);
  if (!model)
    return fail(llvm::toString(model.takeError()));
  double best = 1e30;
  llvm::Expected<std::vector<HostArray>> results = std::vector<HostArray>();
  for (unsigned r = 0; r < std::max(1u, unsigned(repeat)); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    results = (*model)->run(args);
    if (!results)
      return fail(llvm::toString(results.takeError()));
    best = std::min(best, std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - t0).count());
  }
  if (!quiet)
    llvm::outs() << "@" << funcName << ": run " << llvm::format("%.3f", best) << " ms\n";
  std::vector<TensorOut> outputs;
  for (size_t i = 0; i < results->size(); ++i)
    outputs.push_back({"result" + std::to_string(i), DType::F32, (*results)[i].shape,
                       (*results)[i].f32.data()});
  if (auto e = writeSafetensors(outputPath, outputs))
    return fail(llvm::toString(std::move(e)));
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "Run a tfm-compiled step on an HF checkpoint\n");
  if (device != "cpu")
    return fail("--device " + device + " is not available in this build (supported: cpu)");
  if (!mlirPath.empty()) {
    if (inputsPath.empty())
      return fail("--mlir needs --inputs");
    return runKernel();
  }
  if (checkpointDir.empty() || tokensPath.empty())
    return fail("expected a checkpoint folder and --tokens (or --mlir FILE --inputs FILE)");
  if (!llvm::sys::fs::is_directory(checkpointDir))
    return fail(checkpointDir + ": not a checkpoint folder");

  llvm::Expected<ModelSpec> spec = readHFConfig(checkpointDir);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  llvm::Expected<TokenBatch> tokens = readTokenFile(tokensPath, spec->vocabSize);
  if (!tokens)
    return fail(llvm::toString(tokens.takeError()));
  llvm::Expected<Checkpoint> checkpoint = Checkpoint::open(checkpointDir);
  if (!checkpoint)
    return fail(llvm::toString(checkpoint.takeError()));

  DialectRegistry registry;
  registerCpuRuntimeDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = buildModel(ctx, *spec, Float32Type::get(&ctx));
  auto forward = module->lookupSymbol<func::FuncOp>(kForwardFuncName);
  auto params = bindParameters(forward, *checkpoint);
  if (!params)
    return fail(llvm::toString(params.takeError()));

  // Compilation rewrites the function; take the parameter shapes first.
  std::vector<std::vector<int64_t>> argShapes;
  for (Type t : forward.getArgumentTypes())
    argShapes.emplace_back(cast<RankedTensorType>(t).getShape());

  auto start = std::chrono::steady_clock::now();
  CpuPipelineOptions options;
  options.useBlas = !noBlas;
  auto model = CpuModel::compile(*module, kForwardFuncName, options);
  if (!model)
    return fail(llvm::toString(model.takeError()));
  auto compiled = std::chrono::steady_clock::now();

  int64_t B = tokens->batch, T = tokens->seq;
  std::vector<int64_t> positions(B * T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      positions[b * T + t] = t;
  bool hasLabels = !tokens->labels.empty();
  std::vector<int64_t> labels = hasLabels ? tokens->labels : std::vector<int64_t>(B * T, -100);

  std::vector<CpuModel::Arg> args = {{tokens->inputIds.data(), {B, T}},
                                     {positions.data(), {B, T}},
                                     {labels.data(), {B, T}}};
  for (size_t i = 3; i < params->size(); ++i)
    args.push_back({(*params)[i].data(), argShapes[i]});
  // With --repeat, report the fastest run.
  llvm::Expected<std::vector<HostArray>> results = std::vector<HostArray>();
  double runMs = 1e30;
  for (unsigned r = 0; r < std::max(1u, unsigned(repeat)); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    results = (*model)->run(args);
    if (!results)
      return fail(llvm::toString(results.takeError()));
    runMs = std::min(runMs, std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - t0).count());
  }

  HostArray &logits = (*results)[0];
  HostArray &loss = (*results)[1];
  std::vector<TensorOut> outputs = {{"logits", DType::F32, logits.shape, logits.f32.data()}};
  if (hasLabels)
    outputs.push_back({"loss", DType::F32, {}, loss.f32.data()});
  if (auto e = writeSafetensors(outputPath, outputs))
    return fail(llvm::toString(std::move(e)));

  if (!quiet) {
    auto ms = [](auto a, auto b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    llvm::outs() << spec->architecture << ": " << B << "x" << T << " tokens, logits ["
                 << B << ", " << T << ", " << spec->vocabSize << "]";
    if (hasLabels)
      llvm::outs() << ", loss " << llvm::format("%.6f", loss.f32[0]);
    llvm::outs() << " (compile " << llvm::format("%.0f", ms(start, compiled)) << " ms, run "
                 << llvm::format("%.1f", runMs) << " ms) -> " << outputPath << "\n";
  }
  return 0;
}
