//===- PreparedData.h - a corpus prepared by tfm.data -----------*- C++ -*-===//
//
// The folder `python -m tfm.data prepare` writes (docs/data.md): token ids
// (tokens.bin, uint16 or uint32), document offsets (offsets.bin, uint64),
// an optional per-token loss mask (loss_mask.bin) and meta.json. Opening
// checks everything a corrupt or mismatched folder could get wrong before
// any of it is used: the format and version, the files' sizes against the
// counts, offsets that start at 0, never decrease and end at the token
// count, ids below the vocabulary of the model it trains, mask values 0 or
// 1, and (when the checkpoint has its own tokenizer.json) that it is the
// tokenizer the data was prepared with.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DATA_PREPAREDDATA_H
#define TFM_DATA_PREPAREDDATA_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace mlir::tfm {

class PreparedData {
public:
  /// Opens `folder` for a model of `vocab` tokens; `checkpoint` (or empty)
  /// is the checkpoint folder, whose tokenizer.json must match the one
  /// recorded. Errors name the folder and file.
  static llvm::Expected<std::unique_ptr<PreparedData>>
  open(llvm::StringRef folder, int64_t vocab, llvm::StringRef checkpoint = {});

  int64_t numTokens() const { return tokens; }
  int64_t numDocuments() const { return documents; }
  /// Token i of the concatenation.
  int64_t tokenAt(int64_t i) const;
  /// Whether token i is a target (always, without a loss mask).
  bool isTarget(int64_t i) const;
  /// Where document d starts; documentStart(numDocuments()) = numTokens().
  int64_t documentStart(int64_t d) const;
  /// The document holding token i (binary search over the offsets).
  int64_t documentOf(int64_t i) const;
  bool hasLossMask() const { return mask != nullptr; }
  int64_t getEosTokenId() const { return eos; }
  const std::string &getFolder() const { return folder; }

  /// What a training save records of the data, so that a resume on other
  /// data is refused: the files' total size and one XXH3-64 over them.
  struct Identity {
    uint64_t bytes = 0, xxh3 = 0;
  };
  Identity identity() const;

private:
  PreparedData() = default;
  std::string folder;
  std::unique_ptr<llvm::MemoryBuffer> tokenFile, offsetFile, maskFile;
  const unsigned char *ids = nullptr, *offsets = nullptr, *mask = nullptr;
  unsigned idBytes = 0;
  int64_t tokens = 0, documents = 0, eos = -1;
};

} // namespace mlir::tfm

#endif // TFM_DATA_PREPAREDDATA_H
