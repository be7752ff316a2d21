//===- tfm-opt.cpp - mlir-opt with the tfm dialect and passes -------------===//
//
// MlirOptMain's own driver, with two steps added: the input is checked for
// text MLIR 22's parser crashes on (tfm/Support/ParserHazards.h) before it
// is parsed, and the output file is written as the other tools write theirs
// (tfm/Support/OutputPath.h). Diagnostics do not print the op they are
// about unless --mlir-print-op-on-diagnostic asks.
//
//===----------------------------------------------------------------------===//

#include "tfm/InitAll.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/OutputPath.h"
#include "tfm/Support/ParserHazards.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

/// tfm's passes and pipelines (named tfm-*), with their descriptions: the
/// pass-name literals the command line registered, looked up in MLIR's
/// pass and pipeline registries.
static void printTfmPasses(llvm::raw_ostream &os) {
  std::vector<std::string> names;
  for (auto &entry : llvm::cl::getRegisteredOptions())
    if (entry.first.starts_with("tfm-"))
      names.push_back(entry.first.str());
  llvm::sort(names);
  os << "tfm passes:\n";
  for (const std::string &name : names)
    if (const PassInfo *info = PassInfo::lookup(name))
      os << "  --" << name << " - " << info->getPassDescription() << "\n";
  os << "tfm pipelines:\n";
  for (const std::string &name : names)
    if (const PassPipelineInfo *info = PassPipelineInfo::lookup(name))
      os << "  --" << name << " - " << info->getPassDescription() << "\n";
  os << "Options of each: tfm-opt --help; docs/passes.md.\n";
}

int main(int argc, char **argv) {
  // LLVM's own options are registered before main; MLIR's, the passes' and
  // the pipelines' after this.
  tfm::hideOptionsRegisteredSoFar();
  tfm::registerAllTfmPasses();
  tfm::setToolVersionPrinter();
  // A pass's error is one line: the op it is about is printed with it only
  // on request (--mlir-print-op-on-diagnostic), not the whole module.
  registerMLIRContextCLOptions();
  if (auto *printOp = static_cast<llvm::cl::opt<bool> *>(
          llvm::cl::getRegisteredOptions().lookup(
              "mlir-print-op-on-diagnostic")))
    printOp->setInitialValue(false);
  llvm::cl::opt<bool> helpTfm(
      "help-tfm",
      llvm::cl::desc("List tfm's own passes and pipelines (--help lists "
                     "every upstream one too)"));
  DialectRegistry registry;
  tfm::registerAllTfmDialects(registry);
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv,
      "tfm optimizer driver (--help-tfm: tfm's own passes and pipelines)\n",
      registry);
  if (helpTfm) {
    printTfmPasses(llvm::outs());
    return tfm::finishToolOutput("tfm-opt", 0);
  }
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // These print and exit before any input is read.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  llvm::InitLLVM initLLVM(argc, argv);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  {
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef()),
        llvm::SMLoc());
    if (failed(tfm::refuseParserHazards(sources)))
      return 1;
  }
  // The output path is checked before any work, and the file is written
  // only once the whole run succeeded, as the other tools write theirs:
  // aside and renamed (a failure, or a kill, leaves no partial file),
  // through a symlink, in place into a device or a hard-linked file.
  bool toStdout = outputFilename == "-";
  if (!toStdout)
    if (auto target = tfm::resolveOutputPath(outputFilename); !target)
      return tfm::reportToolError("tfm-opt",
                                  "-o: " + llvm::toString(target.takeError()));
  std::string text;
  llvm::raw_string_ostream buffer(text);
  llvm::raw_ostream &os =
      toStdout ? static_cast<llvm::raw_ostream &>(llvm::outs()) : buffer;
  if (failed(MlirOptMain(os, std::move(input), registry, config)))
    return 1;
  // A failed write (a full disk, /dev/full) is an error of our own, not
  // LLVM's abort when the stream is destroyed.
  if (toStdout)
    return tfm::finishToolOutput("tfm-opt", 0);
  if (llvm::Error e = tfm::writeOutputFile(
          outputFilename, [&](llvm::raw_ostream &os) { os << text; }))
    return tfm::reportToolError("tfm-opt", llvm::toString(std::move(e)));
  return 0;
}
