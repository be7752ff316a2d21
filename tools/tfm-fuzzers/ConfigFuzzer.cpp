//===- ConfigFuzzer.cpp - libFuzzer target: config.json -> tfm IR ---------===//
//
// The importer's whole untrusted surface, as tfm-import-hf runs it: the
// config.json text is parsed as HF would, and a config that parses becomes
// the model in IR, which must verify, pass the weight-map check and give
// its parameter summary. Refusal with a message naming config.json is fine;
// a crash, a hang, an LLVM fatal error or invalid IR is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzerUtils.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/Import/ParamSummary.h"
#include "tfm/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::tfm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<ModelSpec> spec = parseHFConfig(text, "config.json");
  if (!spec) {
    fuzz::expectMessage(spec.takeError(), "config.json");
    return 0;
  }
  DialectRegistry registry;
  registerAllTfmDialects(registry);
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ctx.loadDialect<TfmDialect, func::FuncDialect>();
  fuzz::SilenceDiagnostics silence(ctx);
  for (bool logits : {true, false}) {
    OwningOpRef<ModuleOp> module =
        buildModel(ctx, *spec, Float32Type::get(&ctx), logits);
    PassManager pm(&ctx);
    pm.addPass(createTfmCheckWeightMapPass());
    if (!module || failed(verify(*module)) || failed(pm.run(*module)))
      fuzz::finding("config.json parsed, but the imported module is invalid");
    // Fails (diagnosed) only when a count overflows int64.
    FailureOr<ParamSummary> summary =
        summarizeParams(*module, kForwardFuncName);
    if (succeeded(summary))
      (void)formatSummaryJson(*module, *summary);
  }
  return 0;
}
