//===- tfm-run.cpp - run a compiled training step on an HF checkpoint -----===//
//
//   tfm-run DIR --tokens TOKENS.json --output OUT.safetensors [--grads]
//
// Imports DIR/config.json, binds DIR's safetensors through the weight map,
// compiles the step for the CPU (JIT) and writes f32 `logits` [B, T, V],
// `loss` when labels are given and, with --grads, `grad/<hf-name>` for every
// checkpoint tensor. Errors name the file, field or tensor; on any error
// nothing is written.
//
//   tfm-run --mlir FILE --func F [--autodiff] --inputs IN --output OUT ...
//
// Kernel mode: runs one function of a tfm .mlir file (or, with --autodiff,
// its vector-Jacobian product F_vjp) on arg0, arg1, ... of each --inputs
// file, writing result0, result1, ... to the matching --output.
//
//===----------------------------------------------------------------------===//

#include "TokenFile.h"

#include "tfm/Autodiff/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/Runtime/CudaRuntime.h"
#include "tfm/Runtime/JitEngine.h"
#include "tfm/Runtime/Safetensors.h"
#include "tfm/Runtime/WeightBinder.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <cstring>

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

static cl::opt<std::string> checkpointDir(cl::Positional,
                                          cl::desc("<HF checkpoint folder>"));
static cl::opt<std::string> tokensPath("tokens",
                                       cl::desc("JSON file with input_ids (and labels)"),
                                       cl::value_desc("file"));
static cl::opt<bool> withGrads("grads",
                               cl::desc("Also compute and write grad/<hf-name> for every "
                                        "checkpoint tensor (needs labels)"));
static cl::list<std::string> outputPaths("output", cl::OneOrMore,
                                         cl::desc("Output .safetensors file(s)"),
                                         cl::value_desc("file"));
static cl::opt<std::string> mlirPath("mlir",
                                     cl::desc("Kernel mode: run a function of this tfm .mlir "
                                              "file on --inputs"),
                                     cl::value_desc("file"));
static cl::opt<std::string> funcName("func", cl::desc("Function to run with --mlir"),
                                     cl::init("main"));
static cl::opt<bool> autodiff("autodiff",
                              cl::desc("With --mlir: run the vector-Jacobian product F_vjp "
                                       "(cotangents of every result follow the arguments)"));
static cl::list<std::string> inputPaths("inputs",
                                        cl::desc("With --mlir: safetensors with arg0, arg1, "
                                                 "...; one per --output"),
                                        cl::value_desc("file"));
static cl::opt<std::string> device("device",
                                   cl::desc("Where to run: cpu, or cuda (GPU 0 through the "
                                            "CUDA driver and cuBLASLt; docs/gpu.md); "
                                            "gpu-sim (testing) runs the GPU path's kernels "
                                            "as CPU loops"),
                                   cl::init("cpu"));
static cl::opt<bool> checkAgainstCpu(
    "check-against-cpu",
    cl::desc("With --device cuda (or gpu-sim): also run the step on the CPU and compare "
             "logits, loss and gradients (f32 tolerances; with --dtype bf16, 1e-2 "
             "relative, gradients 5e-2; exit 1 if they differ)"));
static cl::opt<std::string> modelDtype("dtype",
                                       cl::desc("Parameter and activation type of the "
                                                "compiled model: f32 or bf16 (statistics "
                                                "and the loss stay f32)"),
                                       cl::init("f32"));
static cl::opt<std::string> cudaChip("chip",
                                     cl::desc("With --device cuda: target SM (default: the "
                                              "device's own, e.g. sm_90)"),
                                     cl::init(""));
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

/// Adds F_vjp to the module (tfm-autodiff).
static LogicalResult differentiate(ModuleOp module, StringRef func, bool seedAll,
                                   std::string &diagnostics) {
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  PassManager pm(module.getContext());
  TfmAutodiffPassOptions options;
  options.funcName = func.str();
  options.seedAllResults = seedAll;
  pm.addPass(createTfmAutodiffPass(options));
  return pm.run(module);
}

/// Runs `model` `repeat` times, keeping the results of the last run and the
/// fastest time.
static llvm::Expected<std::vector<HostArray>>
timedRun(JitModel &model, ArrayRef<JitModel::Arg> args, double &bestMs) {
  llvm::Expected<std::vector<HostArray>> results = std::vector<HostArray>();
  bestMs = 1e30;
  for (unsigned r = 0; r < std::max(1u, unsigned(repeat)); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    results = model.run(args);
    if (!results)
      return results.takeError();
    bestMs = std::min(bestMs, std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - t0)
                                  .count());
  }
  return results;
}

/// Compiles `entry` of `module` (in place) for "cpu" or "cuda".
static llvm::Expected<std::unique_ptr<JitModel>> compileFor(StringRef where, ModuleOp module,
                                                            StringRef entry) {
  if (where == "cuda") {
    CudaPipelineOptions options;
    options.chip = cudaChip;
    return JitModel::compileForCuda(module, entry, options);
  }
  if (where == "gpu-sim")
    return JitModel::compileWithPipeline(module, entry, [](OpPassManager &pm) {
      buildTfmTrainGpuSimPipeline(pm, /*autodiffFunc=*/"");
    });
  CpuPipelineOptions options;
  options.useBlas = !noBlas;
  return JitModel::compile(module, entry, options);
}

static TensorOut resultTensor(const std::string &name, const HostArray &a) {
  return {name, a.isF64() ? DType::F64 : DType::F32, a.shape, a.data()};
}

//===----------------------------------------------------------------------===//
// Kernel mode
//===----------------------------------------------------------------------===//

static int runKernel() {
  if (inputPaths.size() != outputPaths.size())
    return fail("--mlir needs one --inputs per --output");
  DialectRegistry registry;
  registerRuntimeDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(mlirPath, &ctx);
  if (!module)
    return fail(mlirPath + ": cannot parse");
  std::string entry = funcName;
  if (autodiff) {
    std::string diagnostics;
    if (failed(differentiate(*module, funcName, /*seedAll=*/true, diagnostics)))
      return fail(mlirPath + ": tfm-autodiff failed: " + diagnostics);
    entry = funcName + "_vjp";
  }
  auto func = module->lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return fail(mlirPath + ": no function @" + entry);
  SmallVector<Type> argTypes(func.getArgumentTypes());

  auto model = compileFor(device, *module, entry);
  if (!model)
    return fail(llvm::toString(model.takeError()));

  for (size_t run = 0; run < inputPaths.size(); ++run) {
    auto inputs = SafetensorsFile::open(inputPaths[run]);
    if (!inputs)
      return fail(llvm::toString(inputs.takeError()));
    std::vector<std::vector<char>> storage;
    std::vector<JitModel::Arg> args;
    for (unsigned i = 0; i < argTypes.size(); ++i) {
      std::string name = "arg" + std::to_string(i);
      auto it = (*inputs)->tensors().find(name);
      if (it == (*inputs)->tensors().end())
        return fail(inputPaths[run] + ": no tensor '" + name + "'");
      const TensorView &view = it->second;
      Type elem = cast<RankedTensorType>(argTypes[i]).getElementType();
      bool ok = (elem.isF32() && view.dtype == DType::F32) ||
                (elem.isF64() && view.dtype == DType::F64) ||
                (elem.isBF16() && view.dtype == DType::BF16) ||
                (elem.isInteger(64) && view.dtype == DType::I64) ||
                (elem.isInteger(32) && view.dtype == DType::I32);
      if (!ok)
        return fail(inputPaths[run] + ": tensor '" + name + "' has dtype " +
                    dtypeName(view.dtype) + ", argument #" + llvm::Twine(i) +
                    " is not of that type");
      storage.emplace_back(view.data, view.data + view.numBytes); // aligned copy
      args.push_back({storage.back().data(), view.shape});
    }
    double ms;
    auto results = timedRun(**model, args, ms);
    if (!results)
      return fail(llvm::toString(results.takeError()));
    std::vector<TensorOut> outputs;
    for (size_t i = 0; i < results->size(); ++i)
      outputs.push_back(resultTensor("result" + std::to_string(i), (*results)[i]));
    if (auto e = writeSafetensors(outputPaths[run], outputs))
      return fail(llvm::toString(std::move(e)));
    if (!quiet)
      llvm::outs() << "@" << entry << ": run " << llvm::format("%.3f", ms) << " ms\n";
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Checkpoint mode
//===----------------------------------------------------------------------===//

/// f32 -> bf16, round to nearest even (NaN stays NaN).
static std::vector<uint16_t> roundToBF16(const std::vector<float> &values) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    if ((bits & 0x7fffffff) > 0x7f800000)
      out[i] = uint16_t((bits >> 16) | 0x40);
    else
      out[i] = uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
  }
  return out;
}

/// Worst |a - b| / (atol + rtol |b|) over two arrays (<= 1 passes); a NaN
/// on either side (unless on both) or a size mismatch is infinitely bad.
static double worstRatio(const std::vector<float> &a, const std::vector<float> &b, double atol,
                         double rtol) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (a.size() != b.size())
    return kInf;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i]))
        return kInf;
      continue;
    }
    double ratio = std::abs(double(a[i]) - b[i]) / (atol + rtol * std::abs(b[i]));
    if (!(ratio <= worst))
      worst = std::isnan(ratio) ? kInf : ratio; // inf - inf is NaN
  }
  return worst;
}

/// The largest |x|.
static double maxAbs(const std::vector<float> &a) {
  double m = 0;
  for (float v : a)
    m = std::max(m, double(std::abs(v)));
  return m;
}

/// Device results against the CPU's, with the tolerances of the HF numerics
/// tests in f32: logits 1e-4 + 1e-4 |ref|, loss 1e-5, each gradient
/// max|d| <= 1e-4 max|ref|. In bf16 (the paths round at different points):
/// logits max|d| <= 1e-2 max|ref|, loss 1e-2 |ref|, and each gradient
/// max|d| <= 5e-2 max|ref| (either path's bf16 gradients are 2-3% from the
/// f32 ones on the tiny Llama). Sets `ok`; returns a one-line report.
static std::string compareResults(const std::vector<HostArray> &gpu,
                                  const std::vector<HostArray> &cpu,
                                  ArrayRef<std::pair<unsigned, unsigned>> gradResults,
                                  bool bf16, bool &ok) {
  if (gpu.size() != cpu.size()) {
    ok = false;
    return "different numbers of results";
  }
  for (size_t r = 0; r < gpu.size(); ++r)
    if (gpu[r].shape != cpu[r].shape) {
      ok = false;
      return "result #" + std::to_string(r) + " has different shapes";
    }
  double logits = bf16 ? worstRatio(gpu[0].f32, cpu[0].f32, 1e-2 * maxAbs(cpu[0].f32), 0)
                       : worstRatio(gpu[0].f32, cpu[0].f32, 1e-4, 1e-4);
  double loss = bf16 ? worstRatio(gpu[1].f32, cpu[1].f32, 0, 1e-2)
                     : worstRatio(gpu[1].f32, cpu[1].f32, 1e-5, 0);
  double rel = bf16 ? 5e-2 : 1e-4;
  double grads = 0;
  for (auto [r, a] : gradResults) {
    (void)a;
    grads = std::max(grads,
                     worstRatio(gpu[r].f32, cpu[r].f32, rel * maxAbs(cpu[r].f32) + 1e-30, 0));
  }
  ok = logits <= 1 && loss <= 1 && grads <= 1;
  std::string report;
  llvm::raw_string_ostream os(report);
  os << "logits " << llvm::format("%.3g", logits) << ", loss " << llvm::format("%.3g", loss)
     << ", gradients " << llvm::format("%.3g", grads) << " of the tolerance"
     << (ok ? " (ok)" : " (FAILED)");
  return report;
}

static int runCheckpoint() {
  if (outputPaths.size() != 1)
    return fail("expected one --output");
  StringRef outputPath = outputPaths.front();
  if (!llvm::sys::fs::is_directory(checkpointDir))
    return fail(checkpointDir + ": not a checkpoint folder");

  llvm::Expected<ModelSpec> spec = readHFConfig(checkpointDir);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  llvm::Expected<TokenBatch> tokens = readTokenFile(tokensPath, spec->vocabSize);
  if (!tokens)
    return fail(llvm::toString(tokens.takeError()));
  bool hasLabels = !tokens->labels.empty();
  if (withGrads && !hasLabels)
    return fail(tokensPath + ": field 'labels': --grads needs labels (the loss to differentiate)");
  llvm::Expected<Checkpoint> checkpoint = Checkpoint::open(checkpointDir);
  if (!checkpoint)
    return fail(llvm::toString(checkpoint.takeError()));

  if (checkAgainstCpu && device == "cpu")
    return fail("--check-against-cpu compares a --device cuda (or gpu-sim) run with the CPU");
  if (modelDtype != "f32" && modelDtype != "bf16")
    return fail("--dtype " + modelDtype + ": expected f32 or bf16");

  DialectRegistry registry;
  registerRuntimeDialects(registry);
  MLIRContext ctx(registry);
  Type elementType =
      modelDtype == "bf16" ? Type(BFloat16Type::get(&ctx)) : Type(Float32Type::get(&ctx));
  // The parameters, bound once through the weight map of @forward.
  std::vector<std::vector<int64_t>> argShapes;
  std::vector<ParamAttr> argParams;
  std::vector<std::vector<float>> params;
  {
    OwningOpRef<ModuleOp> module = buildModel(ctx, *spec, elementType);
    auto forward = module->lookupSymbol<func::FuncOp>(kForwardFuncName);
    auto bound = bindParameters(forward, *checkpoint);
    if (!bound)
      return fail(llvm::toString(bound.takeError()));
    params = std::move(*bound);
    for (BlockArgument arg : forward.getArguments()) {
      argShapes.emplace_back(cast<RankedTensorType>(arg.getType()).getShape());
      argParams.push_back(
          forward.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName));
    }
  }
  // With --dtype bf16 the parameters are passed rounded to bf16.
  std::vector<std::vector<uint16_t>> bf16Params(params.size());
  if (modelDtype == "bf16")
    for (size_t i = 3; i < params.size(); ++i)
      bf16Params[i] = roundToBF16(params[i]);

  int64_t B = tokens->batch, T = tokens->seq;
  std::vector<int64_t> positions(B * T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      positions[b * T + t] = t;
  std::vector<int64_t> labels = hasLabels ? tokens->labels : std::vector<int64_t>(B * T, -100);
  float seed = 1.0f; // d loss / d loss (the loss is f32 in every dtype)
  std::vector<JitModel::Arg> args = {{tokens->inputIds.data(), {B, T}},
                                     {positions.data(), {B, T}},
                                     {labels.data(), {B, T}}};
  for (size_t i = 3; i < params.size(); ++i)
    args.push_back({modelDtype == "bf16" ? static_cast<const void *>(bf16Params[i].data())
                                         : params[i].data(),
                    argShapes[i]});
  if (withGrads)
    args.push_back({&seed, {}});

  // Gradient results of forward_vjp: result index -> forward argument index.
  std::vector<std::pair<unsigned, unsigned>> gradResults;
  std::string entry = kForwardFuncName.str();
  struct StepRun {
    std::vector<HostArray> results;
    double compileMs, runMs;
  };
  // Builds the step (forward, and forward_vjp with --grads) afresh, since
  // compilation rewrites it, then compiles and runs it on `where`.
  auto runOn = [&](StringRef where) -> llvm::Expected<StepRun> {
    OwningOpRef<ModuleOp> module = buildModel(ctx, *spec, elementType);
    if (withGrads) {
      std::string diagnostics;
      if (failed(differentiate(*module, kForwardFuncName, /*seedAll=*/false, diagnostics)))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "tfm-autodiff failed: " + diagnostics);
      entry = (kForwardFuncName + "_vjp").str();
      auto vjp = module->lookupSymbol<func::FuncOp>(entry);
      gradResults.clear();
      for (unsigned r = 0; r < vjp.getNumResults(); ++r)
        if (auto of = vjp.getResultAttrOfType<IntegerAttr>(r, kGradOfAttrName))
          gradResults.push_back({r, unsigned(of.getInt())});
    }
    StepRun run;
    auto start = std::chrono::steady_clock::now();
    auto model = compileFor(where, *module, entry);
    if (!model)
      return model.takeError();
    run.compileMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    auto results = timedRun(**model, args, run.runMs);
    if (!results)
      return results.takeError();
    run.results = std::move(*results);
    return run;
  };

  auto step = runOn(device);
  if (!step)
    return fail(llvm::toString(step.takeError()));
  std::vector<HostArray> *results = &step->results;
  std::string comparison;
  if (checkAgainstCpu) {
    auto reference = runOn("cpu");
    if (!reference)
      return fail("CPU reference: " + llvm::toString(reference.takeError()));
    bool ok = true;
    comparison =
        compareResults(*results, reference->results, gradResults, modelDtype == "bf16", ok);
    if (!ok)
      return fail("GPU and CPU results differ: " + comparison);
  }

  HostArray &logits = (*results)[0];
  HostArray &loss = (*results)[1];
  std::vector<TensorOut> outputs = {resultTensor("logits", logits)};
  if (hasLabels)
    outputs.push_back(resultTensor("loss", loss));
  std::vector<NamedGradient> grads;
  if (withGrads) {
    std::vector<const float *> byArg(argShapes.size(), nullptr);
    for (auto [r, a] : gradResults)
      byArg[a] = (*results)[r].f32.data();
    auto named = unbindGradients(argParams, argShapes, byArg, *checkpoint);
    if (!named)
      return fail(llvm::toString(named.takeError()));
    grads = std::move(*named);
    for (const NamedGradient &g : grads)
      outputs.push_back({"grad/" + g.name, DType::F32, g.shape, g.data.data()});
  }
  if (auto e = writeSafetensors(outputPath, outputs))
    return fail(llvm::toString(std::move(e)));

  if (!quiet) {
    llvm::outs() << spec->architecture << ": " << B << "x" << T << " tokens, logits [" << B
                 << ", " << T << ", " << spec->vocabSize << "]";
    if (hasLabels)
      llvm::outs() << ", loss " << llvm::format("%.6f", loss.f32[0]);
    if (withGrads)
      llvm::outs() << ", " << grads.size() << " gradients";
    llvm::outs() << " on " << device << " (compile " << llvm::format("%.0f", step->compileMs)
                 << " ms, "
                 << (withGrads ? "step " : "run ") << llvm::format("%.1f", step->runMs) << " ms) -> "
                 << outputPath << "\n";
    if (device == "cuda")
      llvm::outs() << "cuda: " << cuda::deviceDescription() << ", arena peak "
                   << llvm::format("%.1f", cuda::arenaPeakBytes() / 1048576.0) << " MiB, "
                   << cuda::arenaBytesInUse() << " bytes still allocated after the step\n";
    if (checkAgainstCpu)
      llvm::outs() << "check against cpu: " << comparison << "\n";
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "Run a tfm-compiled step on an HF checkpoint\n");
  if (device != "cpu" && device != "cuda" && device != "gpu-sim")
    return fail("--device " + device + ": expected cpu, cuda or gpu-sim");
  if (!mlirPath.empty()) {
    if (checkAgainstCpu || withGrads || modelDtype != "f32" || !checkpointDir.empty())
      return fail("--mlir (kernel mode) takes no checkpoint, --grads, --dtype or "
                  "--check-against-cpu");
    return runKernel();
  }
  if (checkpointDir.empty() || tokensPath.empty())
    return fail("expected a checkpoint folder and --tokens (or --mlir FILE --inputs FILE)");
  return runCheckpoint();
}
