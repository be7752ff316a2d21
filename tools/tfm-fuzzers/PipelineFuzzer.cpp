//===- PipelineFuzzer.cpp - libFuzzer target: IR -> the train pipelines --===//
//
// tfm-opt's untrusted surface: MLIR text is parsed with every dialect tfm
// registers and verified; IR that verifies goes through a training
// pipeline as tfm-opt --tfm-train-cpu / --tfm-train-gpu-sim would run it
// (fusion, tfm-autodiff of @forward when there is one, recompute, lowering
// to the LLVM dialect; no JIT). Passes may refuse verifier-valid IR with a
// diagnostic; a crash, an LLVM fatal error or a pass that fails without a
// diagnostic is a finding.
//
// The seed corpus is test/**/*.mlir. The pipeline varies with the input:
// the CPU one with save-all or full recompute, or the GPU-simulation one,
// chosen by the input's length so that mutations reach all three.
//
// Creating an MLIRContext, loading dialects into it, building and
// initialising a pipeline cost more than most inputs' own parse and
// compile (a third of the time in a profile of the sanitizer build), so
// one context and its pipelines serve `kInputsPerContext` inputs, as an
// embedding tool reuses them, and are then replaced so that memory the
// context interns stays bounded. Dialects still load lazily, as in
// tfm-opt; but a dialect an earlier input loaded can hide a pass that
// creates its ops without declaring it, which the first input of each
// context still catches. TFM_FUZZ_FRESH_CONTEXT=1 gives every input a
// context of its own (what tfm-opt does), for a finding that reproduces
// only after others.
//
//===----------------------------------------------------------------------===//

#include "FuzzerUtils.h"

#include "tfm/InitAll.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Support/ParserHazards.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr unsigned kInputsPerContext = 64;

/// The three pipelines a module can go through: variant 0 is tfm-train-cpu
/// with save-all, 1 with full recompute, 2 tfm-train-gpu-sim.
constexpr unsigned kVariants = 3;

/// A context with every tfm dialect registered, and the pipelines built on
/// it as inputs ask for them (each with and without autodiff of @forward).
class Session {
public:
  explicit Session(const DialectRegistry &registry)
      : ctx(registry, MLIRContext::Threading::DISABLED) {
    ctx.getDiagEngine().registerHandler([this](Diagnostic &d) {
      diagnosed |= d.getSeverity() == DiagnosticSeverity::Error;
    });
  }

  MLIRContext &context() { return ctx; }

  PassManager &pipeline(unsigned variant, bool autodiff) {
    std::unique_ptr<PassManager> &pm = pipelines[variant][autodiff];
    if (pm)
      return *pm;
    pm = std::make_unique<PassManager>(&ctx);
    std::string func = autodiff ? "forward" : "";
    if (variant == 2) {
      buildTfmTrainGpuSimPipeline(*pm, func);
    } else {
      CpuPipelineOptions options;
      options.autodiffFunc = func;
      options.recompute = variant == 1 ? "full" : "save-all";
      buildTfmTrainCpuPipeline(*pm, options);
    }
    return *pm;
  }

  /// Whether an error was diagnosed since the last call.
  bool takeDiagnosed() { return std::exchange(diagnosed, false); }

  unsigned inputs = 0;

private:
  MLIRContext ctx;
  std::unique_ptr<PassManager> pipelines[kVariants][2];
  bool diagnosed = false;
};

/// The session for the next input: a new one every `kInputsPerContext`
/// inputs (every input with TFM_FUZZ_FRESH_CONTEXT=1).
Session &nextSession() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllTfmDialects(*r);
    return r;
  }();
  static const bool fresh = [] {
    const char *env = std::getenv("TFM_FUZZ_FRESH_CONTEXT");
    return env && *env && StringRef(env) != "0";
  }();
  static std::unique_ptr<Session> session;
  unsigned limit = fresh ? 1 : kInputsPerContext;
  if (!session || session->inputs >= limit)
    session = std::make_unique<Session>(*registry);
  ++session->inputs;
  return *session;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // What tfm-opt and tfm-run refuse before parsing: text MLIR 22's linalg
  // parsers crash on. If the check misses a case, the parser's crash is a
  // finding.
  if (findParserHazard(text))
    return 0;
  Session &session = nextSession();
  // The MLIR lexer needs the NUL after the text that files read by the
  // tools have (MemoryBuffer::getFile); fuzz data has none.
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"), llvm::SMLoc());
  // The parser verifies what it parsed (ParserConfig's default).
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sources, ParserConfig(&session.context()));
  if (!module)
    return 0;
  bool hasForward = bool(module->lookupSymbol<func::FuncOp>("forward"));
  PassManager &pm = session.pipeline(size % kVariants, hasForward);
  session.takeDiagnosed();
  if (failed(pm.run(*module)) && !session.takeDiagnosed())
    fuzz::finding("a pipeline failed without an error diagnostic");
  return 0;
}
