//===- CommandLine.cpp - what every tfm tool's main does alike ------------===//

#include "tfm/Support/CommandLine.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

void mlir::tfm::hideOptionsRegisteredSoFar() {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::StringRef name = entry.first;
    if (name != "help" && name != "help-hidden" && name != "version")
      entry.second->setHiddenFlag(llvm::cl::Hidden);
  }
}

llvm::StringRef mlir::tfm::getTfmVersion() { return TFM_VERSION; }

void mlir::tfm::setToolVersionPrinter() {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tfm version " << getTfmVersion() << "\n"
       << "  LLVM version " << LLVM_VERSION_STRING << "\n";
  });
}

std::string mlir::tfm::formatOptionNumber(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

int mlir::tfm::reportToolError(llvm::StringRef tool,
                               const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
  return 1;
}

int mlir::tfm::finishToolOutput(llvm::StringRef tool, int status) {
  llvm::raw_fd_ostream &os = llvm::outs();
  os.flush();
  if (!os.has_error())
    return status;
  std::string why = os.error().message();
  os.clear_error(); // so that destroying the stream does not abort
  return reportToolError(tool, "stdout: write failed: " + why);
}
