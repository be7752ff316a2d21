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
//===----------------------------------------------------------------------===//

#include "FuzzerUtils.h"

#include "tfm/InitAll.h"
#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Support/ParserHazards.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::tfm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllTfmDialects(*r);
    return r;
  }();
  MLIRContext ctx(*registry, MLIRContext::Threading::DISABLED);
  bool diagnosed = false;
  ctx.getDiagEngine().registerHandler([&](Diagnostic &d) {
    diagnosed |= d.getSeverity() == DiagnosticSeverity::Error;
  });
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // What tfm-opt and tfm-run refuse before parsing: text MLIR 22's linalg
  // parsers crash on. If the check misses a case, the parser's crash is a
  // finding.
  if (findParserHazard(text))
    return 0;
  // The MLIR lexer needs the NUL after the text that files read by the
  // tools have (MemoryBuffer::getFile); fuzz data has none.
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sources, ParserConfig(&ctx));
  if (!module || failed(verify(*module)))
    return 0;
  bool hasForward = bool(module->lookupSymbol<func::FuncOp>("forward"));
  PassManager pm(&ctx);
  switch (size % 3) {
  case 0:
  case 1: {
    CpuPipelineOptions options;
    options.autodiffFunc = hasForward ? "forward" : "";
    options.recompute = size % 3 ? "full" : "save-all";
    buildTfmTrainCpuPipeline(pm, options);
    break;
  }
  case 2:
    buildTfmTrainGpuSimPipeline(pm, hasForward ? "forward" : "");
    break;
  }
  diagnosed = false;
  if (failed(pm.run(*module)) && !diagnosed)
    fuzz::finding("a pipeline failed without an error diagnostic");
  return 0;
}
