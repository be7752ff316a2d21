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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::tfm;

/// Whether `text` starts with a list of integers the way MLIR prints one,
/// `[` (`-`? digits (`,` `-`? digits)*)? `]` with spaces between tokens,
/// each integer short enough for i64.
static bool startsWithIntegerList(llvm::StringRef text) {
  if (!text.consume_front("["))
    return false;
  text = text.ltrim();
  if (text.consume_front("]"))
    return true;
  while (true) {
    text.consume_front("-");
    size_t digits = text.find_first_not_of("0123456789");
    if (digits == 0 || digits == llvm::StringRef::npos || digits > 18)
      return false;
    text = text.drop_front(digits).ltrim();
    if (text.consume_front("]"))
      return true;
    if (!text.consume_front(","))
      return false;
    text = text.ltrim();
  }
}

/// MLIR 22's custom parsers of linalg.transpose, linalg.broadcast and
/// linalg.reduce store a null attribute, and crash in NamedAttrList::set,
/// when the array after `permutation =` or `dimensions =` does not parse
/// (their error is already reported): no `[`, or a `[` whose list is
/// malformed (`[0, nc @f(`, found by this target in CI). The crash is in
/// libMLIR, which tfm cannot change, so inputs that may reach it are
/// dropped: any `permutation =` or `dimensions =` not followed by a plain
/// integer list. Dropping also the generic `<{permutation = array<...>}>`
/// form, or a list with comments inside, only costs coverage.
static bool reachesUpstreamArrayParserCrash(llvm::StringRef text) {
  for (llvm::StringRef key : {"permutation", "dimensions"}) {
    for (size_t at = text.find(key); at != llvm::StringRef::npos;
         at = text.find(key, at + key.size())) {
      llvm::StringRef rest = text.drop_front(at + key.size()).ltrim();
      if (rest.consume_front("=") && !startsWithIntegerList(rest.ltrim()))
        return true;
    }
  }
  return false;
}

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
  if (reachesUpstreamArrayParserCrash(text))
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
