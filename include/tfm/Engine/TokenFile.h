//===- TokenFile.h - a batch of token ids (and labels) ----------*- C++ -*-===//

#ifndef TFM_ENGINE_TOKENFILE_H
#define TFM_ENGINE_TOKENFILE_H

#include "llvm/ADT/ArrayRef.h"
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
  /// [batch, seq], or empty for 0..seq-1 in every row. Each 0 starts a
  /// document (HF's flattened-batch convention): tokens attend, and scans
  /// carry state, only within their document.
  std::vector<int64_t> positionIds;
};

/// Honours an attention mask [batch, seq] of 0/1 (HF's): 0 marks right
/// padding, whose labels become -100 (no token after it sees it under the
/// causal mask). Padding before a token would need a key mask and is
/// refused; packed documents say the same with position ids. `where` names
/// the source in errors.
llvm::Error applyAttentionMask(TokenBatch &batch, llvm::ArrayRef<int64_t> mask,
                               llvm::StringRef where);

/// Rows [first, first + rows) of `batch`.
TokenBatch sliceRows(const TokenBatch &batch, int64_t first, int64_t rows);

/// The one rule for tokens: ids lie in [0, vocab); labels too, or are -100
/// (not counted in the loss).
inline bool isValidToken(int64_t token, int64_t vocab, bool isLabel) {
  return (token >= 0 && token < vocab) || (isLabel && token == -100);
}

/// Reads {"input_ids": [[...], ...], "labels": [[...], ...]} with optional
/// labels, "position_ids" (>= 0; restarts at 0 mark packed documents, as
/// HF's DataCollatorWithFlattening writes them) and "attention_mask" (1 for
/// tokens, 0 for right padding, whose labels become -100; padding before a
/// token is refused). Other keys are ignored. Ids must lie in [0, vocab);
/// labels too, or equal -100. Rows must all have the same length.
llvm::Expected<TokenBatch> readTokenFile(llvm::StringRef path, int64_t vocab);

} // namespace mlir::tfm

#endif // TFM_ENGINE_TOKENFILE_H
