// Prints an HF config's parameter count and its layer kinds through the
// C++ API (tfm/Engine), which embeds MLIR: the module is an mlir::ModuleOp.
#include "tfm/Engine/ImportedModel.h"

#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  auto model = mlir::tfm::ImportedModel::import(argv[1]);
  if (!model) {
    llvm::errs() << "count-cxx: " << llvm::toString(model.takeError()) << "\n";
    return 1;
  }
  llvm::outs() << "C++: " << (*model)->getSpec().architecture << " "
               << (*model)->getNumParameters() << " parameters, "
               << ((*model)->getMLIR().find("tfm.repeat") != std::string::npos
                       ? "one layer body repeated"
                       : "no tfm.repeat")
               << "\n";
  return 0;
}
