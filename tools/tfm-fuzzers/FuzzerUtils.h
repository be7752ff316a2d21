//===- FuzzerUtils.h - what every tfm fuzz target shares -----------*- C++
//-*-===//
//
// A target's contract: any input is either accepted or refused with an
// llvm::Error naming its source; everything else (a crash, a sanitizer
// report, an LLVM fatal error, a refusal without a message) is a finding,
// reported by aborting so that libFuzzer saves the input.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TOOLS_FUZZERS_FUZZERUTILS_H
#define TFM_TOOLS_FUZZERS_FUZZERUTILS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tfm::fuzz {

/// Reports a finding and aborts (libFuzzer keeps the crashing input).
[[noreturn]] void finding(const llvm::Twine &what);

/// Consumes a refusal; its message must name `source` (the file the user
/// would look at), else that is a finding.
void expectMessage(llvm::Error error, llvm::StringRef source);

/// Discards the diagnostics of `ctx` while alive (refusals are expected;
/// printing each would slow fuzzing down).
class SilenceDiagnostics {
public:
  explicit SilenceDiagnostics(MLIRContext &ctx);
  ~SilenceDiagnostics();

private:
  MLIRContext &ctx;
  DiagnosticEngine::HandlerID id;
};

/// A private scratch folder for targets that must go through files (a
/// checkpoint folder, a token dataset), made once per process and removed
/// at exit.
llvm::StringRef scratchDir();

/// Writes `bytes` to `path`, or reports a finding (the scratch folder is
/// ours; failing to write there is the harness's fault).
void writeFile(llvm::StringRef path, llvm::StringRef bytes);

} // namespace mlir::tfm::fuzz

#endif // TFM_TOOLS_FUZZERS_FUZZERUTILS_H
