//===- TokenFuzzer.cpp - libFuzzer target: token files and datasets -------===//
//
// What tfm-run --tokens and tfm-train --tokens read: a tokens .json batch,
// a .npy dataset or a raw .bin of uint16/uint32 ids. The first four bytes
// choose the reader and valid options (kind, vocabulary size, batch x seq
// windows, micro-batches and shuffling); the rest is the file. An accepted
// source yields a few micro-batches, each of whose ids must lie in the
// vocabulary (labels also -100): the readers' promise to the step.
//
//===----------------------------------------------------------------------===//

#include "FuzzerUtils.h"

#include "tfm/Engine/TokenDataset.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tfm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4)
    return 0;
  static constexpr const char *kNames[] = {"tokens.json", "tokens.npy",
                                           "tokens.bin", "tokens.bin"};
  unsigned kind = data[0] % 4;
  int64_t vocab = 1 + (int64_t(data[1]) << 4);
  int64_t batch = 1 + data[2] % 4, seq = 2 + (data[2] / 4) % 8;
  int64_t microBatches = 1 + data[3] % 3;
  std::optional<uint64_t> shuffle;
  if (data[3] & 0x80)
    shuffle = data[3];
  llvm::SmallString<128> path(fuzz::scratchDir());
  llvm::sys::path::append(path, kNames[kind]);
  fuzz::writeFile(
      path,
      llvm::StringRef(reinterpret_cast<const char *>(data) + 4, size - 4));
  auto dataset =
      TokenDataset::open(path, vocab, batch, seq, shuffle,
                         kind == 3 ? "uint32" : "uint16", microBatches);
  if (!dataset) {
    fuzz::expectMessage(dataset.takeError(), path);
    return 0;
  }
  for (int step = 0; step < 3; ++step) {
    TokenBatch b = (*dataset)->next();
    if (b.batch <= 0 || b.seq <= 0 ||
        b.inputIds.size() != size_t(b.batch * b.seq) ||
        (!b.labels.empty() && b.labels.size() != b.inputIds.size()))
      fuzz::finding("a micro-batch whose shape does not match its ids");
    for (int64_t id : b.inputIds)
      if (!isValidToken(id, vocab, /*isLabel=*/false))
        fuzz::finding("an id outside the vocabulary passed the reader");
    for (int64_t id : b.labels)
      if (!isValidToken(id, vocab, /*isLabel=*/true))
        fuzz::finding("a label outside the vocabulary passed the reader");
  }
  return 0;
}
