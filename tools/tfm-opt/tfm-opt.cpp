//===- tfm-opt.cpp - mlir-opt with the tfm dialect and passes -------------===//
//
// MlirOptMain's own driver, with one step added: the input is checked for
// text MLIR 22's parser crashes on (tfm/Support/ParserHazards.h) before it
// is parsed.
//
//===----------------------------------------------------------------------===//

#include "tfm/InitAll.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/ParserHazards.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

int main(int argc, char **argv) {
  // LLVM's own options are registered before main; MLIR's, the passes' and
  // the pipelines' after this.
  tfm::hideOptionsRegisteredSoFar();
  tfm::registerAllTfmPasses();
  DialectRegistry registry;
  tfm::registerAllTfmDialects(registry);
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "tfm optimizer driver\n", registry);
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
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  // A failed write (a full disk, /dev/full) is an error of our own, not
  // LLVM's abort when the stream is destroyed; the file is then removed.
  if (tfm::finishToolOutput("tfm-opt", 0, output->os(),
                            outputFilename == "-" ? llvm::StringRef("stdout")
                                                  : outputFilename))
    return 1;
  // Kept only when the whole run succeeded (no partial output).
  output->keep();
  return 0;
}
