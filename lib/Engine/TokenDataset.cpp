//===- TokenDataset.cpp - the micro-batches of a training run -------------===//

#include "tfm/Engine/TokenDataset.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cstring>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::tfm;

/// The data of a version 1-3 .npy file of uint16 or uint32 ids in C order:
/// sets `data`, `bytes` (per id) and `count`.
static llvm::Error parseNpy(llvm::StringRef path, llvm::StringRef file,
                            const char *&data, unsigned &bytes,
                            int64_t &count) {
  auto bad = [&](const llvm::Twine &why) {
    return makeError(path + ": not a token .npy file: " + why);
  };
  if (file.size() < 10 || !file.starts_with("\x93NUMPY"))
    return bad("no .npy magic");
  unsigned major = uint8_t(file[6]);
  size_t headerLen, start;
  if (major == 1) {
    headerLen = uint8_t(file[8]) | (uint8_t(file[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12)
      return bad("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(uint8_t(file[8 + i])) << (8 * i);
    start = 12;
  } else {
    return bad("version " + llvm::Twine(major));
  }
  if (start + headerLen > file.size())
    return bad("truncated header");
  llvm::StringRef header = file.substr(start, headerLen);
  // The descr value itself: a structured dtype ([('a', '<u2'), ...]) names
  // uint16 fields too, but its items are records, not ids.
  size_t descrKey = header.find("'descr':");
  llvm::StringRef descr;
  if (descrKey != llvm::StringRef::npos) {
    llvm::StringRef rest = header.drop_front(descrKey + 8).ltrim();
    // A structured dtype is a list up to its closing bracket; a plain one
    // a string up to the next field.
    size_t close = rest.find(']');
    descr = rest.starts_with("[") && close != llvm::StringRef::npos
                ? rest.take_front(close + 1)
                : rest.take_until([](char c) { return c == ',' || c == '}'; });
  }
  descr = descr.trim();
  if (descr == "'<u2'" || descr == "'|u2'")
    bytes = 2;
  else if (descr == "'<u4'" || descr == "'|u4'")
    bytes = 4;
  else
    return bad("dtype must be uint16 or uint32 (little-endian), not " +
               (descr.empty() ? llvm::StringRef("a missing descr") : descr) +
               (descr.starts_with("[") ? " (a structured dtype)" : ""));
  if (header.contains("'fortran_order': True"))
    return bad("Fortran order");
  size_t open = header.find("'shape':"), lp = header.find('(', open),
         rp = header.find(')', lp);
  if (open == llvm::StringRef::npos || lp == llvm::StringRef::npos ||
      rp == llvm::StringRef::npos)
    return bad("no shape");
  count = 1;
  llvm::SmallVector<llvm::StringRef> dims;
  header.slice(lp + 1, rp).split(dims, ',', -1, /*KeepEmpty=*/false);
  size_t dataStart = start + headerLen;
  int64_t held = int64_t((file.size() - dataStart) / bytes);
  for (llvm::StringRef d : dims) {
    int64_t n;
    if (d.trim().getAsInteger(10, n) || n < 0 ||
        llvm::MulOverflow(count, n, count))
      return bad("shape " + header.slice(lp, rp + 1));
  }
  // Compared in ids, so that no product of the shape can wrap.
  if (count != held || (file.size() - dataStart) % bytes)
    return bad("the shape says " + llvm::Twine(count) +
               " ids, the file holds " + llvm::Twine(held));
  data = file.data() + dataStart;
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<TokenDataset>>
TokenDataset::open(llvm::StringRef path, int64_t vocab, int64_t batch,
                   int64_t seq, std::optional<uint64_t> shuffleSeed,
                   llvm::StringRef binDtype, int64_t microBatches, bool packing,
                   llvm::StringRef checkpoint) {
  std::unique_ptr<TokenDataset> d(new TokenDataset());
  d->path = path.str();
  if (llvm::sys::fs::is_directory(path)) {
    if (batch <= 0 || seq < 2)
      return makeError("prepared data needs --batch >= 1 and --seq >= 2");
    auto prepared = PreparedData::open(path, vocab, checkpoint);
    if (!prepared)
      return prepared.takeError();
    d->prepared = std::move(*prepared);
    d->windows = std::make_unique<DocumentWindows>(*d->prepared, seq, packing);
    PreparedData::Identity id = d->prepared->identity();
    d->identity = {id.bytes, id.xxh3, "prepared"};
    d->batch = batch;
    d->seq = seq;
    d->shuffleSeed = shuffleSeed;
    d->numWindows = d->windows->size();
    if (d->numWindows < batch)
      return makeError(path + ": " + llvm::Twine(d->prepared->numTokens()) +
                       " tokens hold fewer than one micro-batch of " +
                       llvm::Twine(batch) + " windows of " + llvm::Twine(seq) +
                       " tokens");
    return d;
  }
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".json") {
    auto text = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!text)
      return makeError(path + ": cannot read: " + text.getError().message());
    d->identity = {(*text)->getBufferSize(),
                   llvm::xxh3_64bits((*text)->getBuffer()), "json"};
    llvm::Expected<TokenBatch> b = readTokenFile(path, vocab);
    if (!b)
      return b.takeError();
    if (b->labels.empty())
      return makeError(path + ": field 'labels': training needs labels");
    if (microBatches < 1 || b->batch % microBatches)
      return makeError(path + ": its " + llvm::Twine(b->batch) +
                       " rows do not split into " + llvm::Twine(microBatches) +
                       " equal micro-batches (--grad-accum, times the ranks "
                       "of a data-parallel run)");
    d->fixed = std::move(*b);
    d->microBatches = microBatches;
    return d;
  }
  if (ext != ".npy" && ext != ".bin")
    return makeError(path + ": expected a tokens .json, or a token dataset "
                            ".npy or .bin");
  if (batch <= 0 || seq < 2)
    return makeError("a token dataset needs --batch >= 1 and --seq >= 2");
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeError(path + ": cannot read: " + buf.getError().message());
  d->buffer = std::move(*buf);
  llvm::StringRef file = d->buffer->getBuffer();
  if (ext == ".npy") {
    if (auto e = parseNpy(path, file, d->ids, d->idBytes, d->numIds))
      return std::move(e);
  } else {
    if (binDtype != "uint16" && binDtype != "uint32")
      return makeError("--token-dtype " + binDtype +
                       ": expected uint16 or uint32");
    d->idBytes = binDtype == "uint16" ? 2 : 4;
    if (file.size() % d->idBytes)
      return makeError(path + ": " + llvm::Twine(file.size()) +
                       " bytes is not a whole number of " + binDtype + " ids");
    d->ids = file.data();
    d->numIds = file.size() / d->idBytes;
  }
  d->identity = {file.size(), llvm::xxh3_64bits(file),
                 d->idBytes == 2 ? "uint16" : "uint32"};
  d->batch = batch;
  d->seq = seq;
  d->shuffleSeed = shuffleSeed;
  d->numWindows = d->numIds / seq;
  if (d->numWindows < batch)
    return makeError(path + ": " + llvm::Twine(d->numIds) +
                     " ids hold fewer than one micro-batch of " +
                     llvm::Twine(batch) + " windows of " + llvm::Twine(seq) +
                     " tokens");
  for (int64_t i = 0; i < d->numIds; ++i)
    if (int64_t id = d->tokenAt(i); id >= vocab)
      return makeError(path + ": id " + llvm::Twine(id) + " at offset " +
                       llvm::Twine(i) + " is outside the vocabulary [0, " +
                       llvm::Twine(vocab) + ")");
  return d;
}

int64_t TokenDataset::tokenAt(int64_t i) const {
  const unsigned char *p =
      reinterpret_cast<const unsigned char *>(ids) + i * idBytes;
  int64_t v = 0;
  for (unsigned b = 0; b < idBytes; ++b)
    v |= int64_t(p[b]) << (8 * b);
  return v;
}

int64_t TokenDataset::windowAt(int64_t w) {
  int64_t pass = w / numWindows, index = w % numWindows;
  if (!shuffleSeed)
    return index;
  if (pass != orderPass) {
    // A Fisher-Yates permutation per pass from a seeded mt19937_64 (whose
    // output the standard fixes, unlike std::shuffle's use of it).
    std::mt19937_64 rng(*shuffleSeed + uint64_t(pass));
    order.resize(numWindows);
    std::iota(order.begin(), order.end(), 0);
    for (int64_t i = numWindows - 1; i > 0; --i)
      std::swap(order[i], order[rng() % uint64_t(i + 1)]);
    orderPass = pass;
  }
  return order[index];
}

TokenBatch TokenDataset::next() {
  ++position;
  if (fixed) {
    if (microBatches == 1)
      return *fixed;
    int64_t rows = fixed->batch / microBatches;
    return sliceRows(*fixed, ((position - 1) % microBatches) * rows, rows);
  }
  TokenBatch b;
  b.batch = batch;
  b.seq = seq;
  if (windows) {
    for (int64_t r = 0; r < batch; ++r) {
      PackedRow row = windows->row(windowAt((position - 1) * batch + r));
      b.inputIds.insert(b.inputIds.end(), row.ids.begin(), row.ids.end());
      b.labels.insert(b.labels.end(), row.labels.begin(), row.labels.end());
      b.positionIds.insert(b.positionIds.end(), row.positions.begin(),
                           row.positions.end());
    }
    return b;
  }
  for (int64_t r = 0; r < batch; ++r) {
    int64_t start = windowAt((position - 1) * batch + r) * seq;
    for (int64_t t = 0; t < seq; ++t)
      b.inputIds.push_back(tokenAt(start + t));
  }
  b.labels = b.inputIds;
  return b;
}

std::string TokenDataset::describe() const {
  std::string name = llvm::sys::path::filename(path).str();
  if (fixed)
    return name + " (one batch of " + std::to_string(fixed->batch) + "x" +
           std::to_string(fixed->seq) + " every update" +
           (microBatches > 1
                ? ", in " + std::to_string(microBatches) + " micro-batches"
                : std::string()) +
           ")";
  if (prepared)
    return name + " (" + std::to_string(prepared->numDocuments()) +
           " documents, " + std::to_string(prepared->numTokens()) +
           " tokens, " + std::to_string(numWindows) +
           (windows->isPacked() ? " packed" : " padded") + " windows of " +
           std::to_string(seq) + ", " + std::to_string(batch) +
           " per micro-batch" + (shuffleSeed ? ", shuffled" : "") + ")";
  return name + " (" + std::to_string(numIds) + " ids, " +
         std::to_string(numWindows) + " windows of " + std::to_string(seq) +
         ", " + std::to_string(batch) + " per micro-batch" +
         (shuffleSeed ? ", shuffled" : "") + ")";
}
