//===- TokenFile.h - a batch of token ids (and labels) ----------*- C++ -*-===//

#ifndef TFM_ENGINE_TOKENFILE_H
#define TFM_ENGINE_TOKENFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::tfm {

/// The token input of one training step.
struct TokenBatch {
  int64_t batch = 0, seq = 0;
  std::vector<int64_t> inputIds; // [batch, seq]
  std::vector<int64_t> labels;   // [batch, seq], or empty
};

/// The one rule for tokens: ids lie in [0, vocab); labels too, or are -100
/// (not counted in the loss).
inline bool isValidToken(int64_t token, int64_t vocab, bool isLabel) {
  return (token >= 0 && token < vocab) || (isLabel && token == -100);
}

/// Reads {"input_ids": [[...], ...], "labels": [[...], ...]} (labels
/// optional, other keys ignored). Ids must lie in [0, vocab); labels too, or
/// equal -100. Rows must all have the same length.
llvm::Expected<TokenBatch> readTokenFile(llvm::StringRef path, int64_t vocab);

} // namespace mlir::tfm

#endif // TFM_ENGINE_TOKENFILE_H
