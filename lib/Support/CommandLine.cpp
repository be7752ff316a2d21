//===- CommandLine.cpp - what every tfm tool's main does alike ------------===//

#include "tfm/Support/CommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"

void mlir::tfm::hideOptionsRegisteredSoFar() {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::StringRef name = entry.first;
    if (name != "help" && name != "help-hidden" && name != "version")
      entry.second->setHiddenFlag(llvm::cl::Hidden);
  }
}

int mlir::tfm::reportToolError(llvm::StringRef tool,
                               const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
  return 1;
}
