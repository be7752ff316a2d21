//===- PreparedData.cpp - a corpus prepared by tfm.data -------------------===//

#include "tfm/Data/PreparedData.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::tfm;
using json = nlohmann::json;

/// Little-endian unsigned of `bytes` bytes at `p`.
static uint64_t readLittle(const unsigned char *p, unsigned bytes) {
  uint64_t v = 0;
  for (unsigned b = 0; b < bytes; ++b)
    v |= uint64_t(p[b]) << (8 * b);
  return v;
}

/// The lowercase hex SHA-256 of `path`'s bytes, or none if unreadable.
static std::optional<std::string> sha256Of(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return std::nullopt;
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::ArrayRef(
      reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
      (*buf)->getBufferSize()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

llvm::Expected<std::unique_ptr<PreparedData>>
PreparedData::open(llvm::StringRef folder, int64_t vocab,
                   llvm::StringRef checkpoint) {
  std::unique_ptr<PreparedData> d(new PreparedData());
  d->folder = folder.str();
  auto file = [&](llvm::StringRef name) {
    llvm::SmallString<256> p(folder);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  std::string metaPath = file("meta.json");
  auto metaText = llvm::MemoryBuffer::getFile(metaPath, /*IsText=*/true);
  if (!metaText)
    return makeError(metaPath +
                     ": cannot read: " + metaText.getError().message() +
                     " (prepare data with python -m tfm.data prepare)");
  if (auto e = checkJsonText((*metaText)->getBuffer(), metaPath))
    return std::move(e);
  json meta;
  try {
    meta = json::parse((*metaText)->getBuffer());
  } catch (const json::exception &e) {
    return makeError(metaPath + ": not valid JSON: " + e.what());
  }
  auto bad = [&](const llvm::Twine &what) {
    return makeError(metaPath + ": " + what);
  };
  if (!meta.is_object() || meta.value("format", "") != "tfm-prepared-tokens")
    return bad("not a prepared-data folder (format 'tfm-prepared-tokens')");
  if (!meta.contains("version") || meta["version"] != 1)
    return bad("version " + meta.value("version", json()).dump() +
               " is not 1, the version this tfm reads");
  auto count = [&](const char *field, int64_t &out) -> llvm::Error {
    if (!meta.contains(field) || !meta[field].is_number_unsigned())
      return bad(llvm::Twine("field '") + field +
                 "': must be a non-negative integer");
    out = meta[field].get<int64_t>();
    return llvm::Error::success();
  };
  int64_t metaVocab = 0;
  if (auto e = count("tokens", d->tokens))
    return std::move(e);
  if (auto e = count("documents", d->documents))
    return std::move(e);
  if (auto e = count("vocab_size", metaVocab))
    return std::move(e);
  if (meta.contains("eos_token_id") && meta["eos_token_id"].is_number_integer())
    d->eos = meta["eos_token_id"].get<int64_t>();
  std::string dtype = meta.value("dtype", "");
  if (dtype != "uint16" && dtype != "uint32")
    return bad("field 'dtype': '" + dtype + "' is not uint16 or uint32");
  d->idBytes = dtype == "uint16" ? 2 : 4;
  if (metaVocab > vocab)
    return bad("prepared with a tokenizer of " + llvm::Twine(metaVocab) +
               " tokens, more than the model's vocabulary of " +
               llvm::Twine(vocab));
  if (!checkpoint.empty()) {
    llvm::SmallString<256> tok(checkpoint);
    llvm::sys::path::append(tok, "tokenizer.json");
    std::string recorded = meta.value("tokenizer_sha256", "");
    if (llvm::sys::fs::exists(tok) && !recorded.empty()) {
      std::optional<std::string> have = sha256Of(tok);
      if (have && *have != recorded)
        return bad("prepared with another tokenizer than " + tok +
                   " (its SHA-256 differs): prepare the data again with "
                   "--tokenizer " +
                   checkpoint);
    }
  }
  auto map = [&](llvm::StringRef name, int64_t expectBytes,
                 std::unique_ptr<llvm::MemoryBuffer> &into,
                 const unsigned char *&data) -> llvm::Error {
    std::string p = file(name);
    auto buf = llvm::MemoryBuffer::getFile(p, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!buf)
      return makeError(p + ": cannot read: " + buf.getError().message());
    if (int64_t((*buf)->getBufferSize()) != expectBytes)
      return makeError(p + ": " + llvm::Twine((*buf)->getBufferSize()) +
                       " bytes, meta.json's counts say " +
                       llvm::Twine(expectBytes));
    into = std::move(*buf);
    data = reinterpret_cast<const unsigned char *>(into->getBufferStart());
    return llvm::Error::success();
  };
  if (auto e = map("tokens.bin", d->tokens * d->idBytes, d->tokenFile, d->ids))
    return std::move(e);
  if (auto e =
          map("offsets.bin", (d->documents + 1) * 8, d->offsetFile, d->offsets))
    return std::move(e);
  if (meta.value("loss_mask", false))
    if (auto e = map("loss_mask.bin", d->tokens, d->maskFile, d->mask))
      return std::move(e);
  // Offsets: 0 first, never decreasing, the token count last; documents
  // are not empty (every one ends with EOS).
  std::string offsetsPath = file("offsets.bin");
  if (d->documentStart(0) != 0)
    return makeError(offsetsPath + ": the first offset is not 0");
  for (int64_t doc = 0; doc < d->documents; ++doc)
    if (d->documentStart(doc + 1) <= d->documentStart(doc))
      return makeError(offsetsPath + ": document " + llvm::Twine(doc) +
                       " is empty or ends before it starts");
  if (d->documentStart(d->documents) != d->tokens)
    return makeError(offsetsPath + ": the last offset is not the " +
                     llvm::Twine(d->tokens) + " tokens of tokens.bin");
  std::string tokensPath = file("tokens.bin");
  for (int64_t i = 0; i < d->tokens; ++i)
    if (d->tokenAt(i) >= vocab)
      return makeError(tokensPath + ": id " + llvm::Twine(d->tokenAt(i)) +
                       " (document " + llvm::Twine(d->documentOf(i)) +
                       ") is outside the vocabulary [0, " + llvm::Twine(vocab) +
                       ")");
  if (d->mask)
    for (int64_t i = 0; i < d->tokens; ++i)
      if (d->mask[i] > 1)
        return makeError(file("loss_mask.bin") + ": value " +
                         llvm::Twine(unsigned(d->mask[i])) + " at token " +
                         llvm::Twine(i) + " is not 0 or 1");
  return d;
}

PreparedData::Identity PreparedData::identity() const {
  Identity id;
  std::string hashes;
  for (const auto *file : {&tokenFile, &offsetFile, &maskFile})
    if (*file) {
      id.bytes += (*file)->getBufferSize();
      uint64_t h = llvm::xxh3_64bits((*file)->getBuffer());
      hashes.append(reinterpret_cast<const char *>(&h), sizeof(h));
    }
  id.xxh3 = llvm::xxh3_64bits(hashes);
  return id;
}

int64_t PreparedData::tokenAt(int64_t i) const {
  return int64_t(readLittle(ids + i * idBytes, idBytes));
}

bool PreparedData::isTarget(int64_t i) const { return !mask || mask[i]; }

int64_t PreparedData::documentStart(int64_t d) const {
  return int64_t(readLittle(offsets + d * 8, 8));
}

int64_t PreparedData::documentOf(int64_t i) const {
  int64_t lo = 0, hi = documents; // documentStart(lo) <= i < documentStart(hi)
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (documentStart(mid) <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}
