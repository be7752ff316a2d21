//===- tfm-import-hf.cpp - HF config.json to tfm IR -----------------------===//
//
//   tfm-import-hf PATH [-o OUT.mlir] [--summary] [--dtype f32|bf16]
//
// PATH is a config.json or a checkpoint folder holding one. Errors are one
// line naming the file and the field, exit status 1, and no output file.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/ImportedModel.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/OutputPath.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"

using namespace mlir;
using namespace mlir::tfm;
namespace cl = llvm::cl;

static cl::OptionCategory toolOptions("tfm-import-hf options");
static cl::opt<std::string>
    inputPath(cl::Positional, cl::Required,
              cl::desc("<config.json | checkpoint dir>"), cl::cat(toolOptions));
static cl::opt<std::string>
    outputPath("o", cl::desc("Output .mlir file (default: stdout)"),
               cl::value_desc("file"), cl::cat(toolOptions));
static cl::opt<bool>
    printSummary("summary",
                 cl::desc("Print a JSON summary (parameter counts) to stdout"),
                 cl::cat(toolOptions));
static cl::opt<std::string>
    dtype("dtype", cl::desc("Parameter and activation type (default: f32)"),
          cl::value_desc("f32|bf16"), cl::init("f32"), cl::cat(toolOptions));

static cl::opt<bool> noLogits(
    "no-logits",
    cl::desc("@forward returns the loss only (tfm-fuse then computes it as "
             "tfm.fused_lm_head_loss, never forming [B*T, V] logits)"),
    cl::cat(toolOptions));

static cl::extrahelp example(R"(
Example:
  tfm-import-hf my-checkpoint --summary
  tfm-import-hf my-checkpoint/config.json -o model.mlir
)");

static int fail(const llvm::Twine &message) {
  return reportToolError("tfm-import-hf", message);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  setToolVersionPrinter();
  cl::ParseCommandLineOptions(
      argc, argv, "Import a Hugging Face causal-LM config as tfm IR\n");
  if (dtype != "f32" && dtype != "bf16")
    return fail("--dtype must be f32 or bf16, got '" + dtype + "'");

  bool toFile = !outputPath.empty() && outputPath != "-";
  if (outputPath.getNumOccurrences() && outputPath.empty())
    return fail("-o: the output path is empty");
  if (toFile)
    if (auto target = resolveOutputPath(outputPath); !target)
      return fail(llvm::toString(target.takeError()));

  auto model = ImportedModel::import(
      inputPath, dtype == "bf16" ? Precision::bf16 : Precision::f32, !noLogits);
  if (!model)
    return fail(llvm::toString(model.takeError()));

  if (toFile) {
    // Written aside and renamed (a failure leaves no file), through a
    // symlink to its target, in place into a device; never removing one.
    if (auto e = writeOutputFile(outputPath, [&](llvm::raw_ostream &os) {
          os << (*model)->getMLIR();
        }))
      return fail(llvm::toString(std::move(e)));
  } else if (!outputPath.empty() || !printSummary) {
    llvm::outs() << (*model)->getMLIR();
  }
  if (printSummary)
    llvm::outs() << (*model)->getSummaryJson() << "\n";
  return finishToolOutput("tfm-import-hf", 0);
}
