//===- tfm-opt.cpp - mlir-opt with the tfm dialect and passes -------------===//

#include "tfm/InitAll.h"
#include "tfm/Support/CommandLine.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // LLVM's own options are registered before main; MLIR's, the passes' and
  // the pipelines' after this.
  mlir::tfm::hideOptionsRegisteredSoFar();
  mlir::tfm::registerAllTfmPasses();
  mlir::DialectRegistry registry;
  mlir::tfm::registerAllTfmDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfm optimizer driver\n", registry));
}
