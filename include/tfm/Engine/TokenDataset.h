//===- TokenDataset.h - the micro-batches of a training run -----*- C++ -*-===//
//
// Two sources: a tokens.json batch (TokenFile.h), the batch of every
// update, split row-wise into the update's micro-batches, or a token dataset, a
// flat array of ids (`.npy` of uint16 or uint32, or raw little-endian `.bin`),
// cut into `seq`-token windows read in order, `batch` windows per micro-batch;
// each window is its own labels (the loss shifts them). With a shuffle seed
// every pass over the data visits the windows in a new seeded order. The
// position (micro-batches read) is saved with checkpoints so that a resumed run
// reads on.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_TOKENDATASET_H
#define TFM_ENGINE_TOKENDATASET_H

#include "tfm/Data/Packing.h"
#include "tfm/Engine/TokenFile.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::tfm {

class TokenDataset {
public:
  /// Opens `path`: `.json` as a token file (labels required) whose rows
  /// split into `microBatches` equal micro-batches, `.npy` and `.bin` as a
  /// dataset of `binDtype` ("uint16" or "uint32"; `.npy` says its own)
  /// windowed by `batch` x `seq`. Every id is checked against
  /// `vocab`; errors name the file and the first bad id's offset, or the
  /// window that does not fit.
  ///
  /// A folder is a prepared corpus (tfm.data; docs/data.md): its documents
  /// packed into `seq`-token windows with positions restarting at each
  /// document (or, without `packing`, one document per padded window);
  /// `checkpoint`'s tokenizer must be the one it was prepared with.
  static llvm::Expected<std::unique_ptr<TokenDataset>>
  open(llvm::StringRef path, int64_t vocab, int64_t batch, int64_t seq,
       std::optional<uint64_t> shuffleSeed, llvm::StringRef binDtype,
       int64_t microBatches = 1, bool packing = true,
       llvm::StringRef checkpoint = {});

  /// The next micro-batch.
  TokenBatch next();
  /// Rows and tokens per row of every micro-batch.
  std::pair<int64_t, int64_t> getMicroBatchShape() const {
    if (fixed)
      return {fixed->batch / microBatches, fixed->seq};
    return {batch, seq};
  }
  /// Windows of a dataset (0 for a tokens.json batch).
  int64_t getNumWindows() const { return numWindows; }
  /// Micro-batches read so far; seek() restores it.
  int64_t getPosition() const { return position; }
  void seek(int64_t microBatches) { position = microBatches; }
  /// "tokens.json (one batch of 2x9)", "data.bin (4096 ids, 455 windows of
  /// 9, 2 per micro-batch)".
  std::string describe() const;

  /// What a save records of the data, so that a resume on other data (or
  /// the same file grown, or read as another id type) is refused: the
  /// file's size, the XXH3-64 of its bytes and how its ids are read.
  struct Identity {
    uint64_t bytes = 0;
    uint64_t xxh3 = 0;
    /// "uint16", "uint32" or "json".
    std::string idType;
  };
  const Identity &getIdentity() const { return identity; }

private:
  TokenDataset() = default;
  int64_t tokenAt(int64_t i) const;
  /// The window (index into the data) of the `w`-th window read.
  int64_t windowAt(int64_t w);

  std::string path;
  Identity identity;
  std::optional<TokenBatch> fixed;
  /// A prepared corpus and its windows.
  std::unique_ptr<PreparedData> prepared;
  std::unique_ptr<DocumentWindows> windows;
  int64_t microBatches = 1;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  const char *ids = nullptr;
  unsigned idBytes = 0;
  int64_t numIds = 0, numWindows = 0, batch = 0, seq = 0;
  std::optional<uint64_t> shuffleSeed;
  int64_t position = 0;
  /// The window order of pass `orderPass` (with a shuffle seed).
  std::vector<int64_t> order;
  int64_t orderPass = -1;
};

} // namespace mlir::tfm

#endif // TFM_ENGINE_TOKENDATASET_H
