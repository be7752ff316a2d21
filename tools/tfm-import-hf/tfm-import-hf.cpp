//===- tfm-import-hf.cpp - HF config.json to tfm IR -----------------------===//
//
//   tfm-import-hf PATH [-o OUT.mlir] [--summary] [--dtype f32|bf16]
//
// PATH is a config.json or a checkpoint folder holding one. Errors are one
// line naming the file and the field, exit status 1, and no output file.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/Import/ParamSummary.h"
#include "tfm/InitAll.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/Error.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

static cl::OptionCategory toolOptions("tfm-import-hf options");
static cl::opt<std::string>
    inputPath(cl::Positional, cl::Required,
              cl::desc("<config.json | checkpoint dir>"), cl::cat(toolOptions));
static cl::opt<std::string> outputPath("o", cl::desc("Output .mlir file"),
                                       cl::value_desc("file"),
                                       cl::cat(toolOptions));
static cl::opt<bool>
    printSummary("summary",
                 cl::desc("Print a JSON summary (parameter counts) to stdout"),
                 cl::cat(toolOptions));
static cl::opt<std::string> dtype("dtype",
                                  cl::desc("Parameter and activation type"),
                                  cl::value_desc("f32|bf16"), cl::init("f32"),
                                  cl::cat(toolOptions));

static cl::opt<bool> noLogits(
    "no-logits",
    cl::desc("@forward returns the loss only (tfm-fuse then computes it as "
             "tfm.fused_lm_head_loss, never forming [B*T, V] logits)"),
    cl::cat(toolOptions));

static int fail(const llvm::Twine &message) {
  return reportToolError("tfm-import-hf", message);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv, "Import a Hugging Face causal-LM config as tfm IR\n");
  if (dtype != "f32" && dtype != "bf16")
    return fail("--dtype must be f32 or bf16, got '" + dtype + "'");

  llvm::Expected<ModelSpec> spec = readHFConfig(inputPath);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));

  DialectRegistry registry;
  registerAllTfmDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadDialect<TfmDialect, func::FuncDialect>();
  DiagnosticCollector diagnostics(&ctx);
  Type elem = dtype == "bf16" ? Type(BFloat16Type::get(&ctx))
                              : Type(Float32Type::get(&ctx));
  OwningOpRef<ModuleOp> module = buildModel(ctx, *spec, elem, !noLogits);

  // The output must verify and its weight map must be consistent; a failure
  // here is an importer bug, reported rather than written out.
  PassManager pm(&ctx);
  pm.addPass(createTfmCheckWeightMapPass());
  if (failed(verify(*module)) || failed(pm.run(*module)))
    return fail(inputPath + ": internal error, the imported IR is invalid: " +
                diagnostics.str());

  FailureOr<ParamSummary> summary = summarizeParams(*module, kForwardFuncName);
  if (failed(summary))
    return fail(inputPath + ": " + diagnostics.str());

  if (!outputPath.empty() || !printSummary) {
    std::string target = outputPath.empty() ? "-" : outputPath.getValue();
    std::error_code ec;
    // ToolOutputFile deletes the file unless keep() is reached.
    auto out = std::make_unique<llvm::ToolOutputFile>(target, ec,
                                                      llvm::sys::fs::OF_Text);
    if (ec)
      return fail(target + ": cannot write: " + ec.message());
    module->print(out->os());
    out->os() << "\n";
    out->os().flush();
    if (out->os().has_error())
      return fail(target + ": write failed");
    out->keep();
  }
  if (printSummary)
    llvm::outs() << formatSummaryJson(*module, *summary) << "\n";
  return 0;
}
