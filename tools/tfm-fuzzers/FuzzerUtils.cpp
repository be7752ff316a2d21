//===- FuzzerUtils.cpp - what every tfm fuzz target shares ----------------===//

#include "FuzzerUtils.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::tfm;

void fuzz::finding(const llvm::Twine &what) {
  llvm::errs() << "tfm fuzz finding: " << what << "\n";
  llvm::errs().flush();
  std::abort();
}

void fuzz::expectMessage(llvm::Error error, llvm::StringRef source) {
  std::string message = llvm::toString(std::move(error));
  if (message.find(source.str()) == std::string::npos)
    finding("a refusal that does not name " + source + ": '" + message + "'");
}

fuzz::SilenceDiagnostics::SilenceDiagnostics(MLIRContext &ctx) : ctx(ctx) {
  id = ctx.getDiagEngine().registerHandler([](Diagnostic &) {});
}

fuzz::SilenceDiagnostics::~SilenceDiagnostics() {
  ctx.getDiagEngine().eraseHandler(id);
}

llvm::StringRef fuzz::scratchDir() {
  static std::string dir = [] {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("tfm-fuzz", path))
      finding("cannot make a scratch folder: " + ec.message());
    std::string made(path);
    // Removed at exit, also when libFuzzer stops the run (it exits).
    static std::string removeAtExit = made;
    std::atexit([] { llvm::sys::fs::remove_directories(removeAtExit); });
    return made;
  }();
  return dir;
}

void fuzz::writeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    finding("cannot write " + path + ": " + ec.message());
  os << bytes;
  os.close();
  if (os.has_error())
    finding("cannot write " + path);
}
