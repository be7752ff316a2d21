//===- Error.h - one way to make errors and collect diagnostics -*- C++ -*-===//
//
// Library code reports failures as llvm::Error (never exits): makeError for
// a message, DiagnosticCollector to turn the diagnostics an MLIR pass or
// verifier emitted into the text of one.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_SUPPORT_ERROR_H
#define TFM_SUPPORT_ERROR_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tfm {

/// An llvm::Error carrying `message` (its first words should name the file,
/// field, tensor or op at fault).
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Captures every diagnostic emitted on `ctx` while alive, instead of
/// printing it; str() has one per line.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &d) {
          if (!text.empty())
            text += "\n";
          text += d.str();
          return success();
        }) {}

  /// What was emitted so far.
  const std::string &str() const { return text; }
  /// An error "<prefix><diagnostics>".
  llvm::Error takeError(const llvm::Twine &prefix) const {
    return makeError(prefix + text);
  }

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

} // namespace mlir::tfm

#endif // TFM_SUPPORT_ERROR_H
