//===- TokenFile.cpp - the --tokens JSON file -----------------------------===//

#include "tfm/Engine/TokenFile.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::tfm;
using json = nlohmann::json;

/// What one field's values may be.
enum class FieldKind { ids, labels, positions, mask };

/// Whether `v` may appear in a field of `kind`, else what it must be.
static std::optional<std::string> checkValue(int64_t v, FieldKind kind,
                                             int64_t vocab) {
  switch (kind) {
  case FieldKind::ids:
  case FieldKind::labels:
    if (isValidToken(v, vocab, kind == FieldKind::labels))
      return std::nullopt;
    return ("is outside the vocabulary [0, " + llvm::Twine(vocab) + ")" +
            (kind == FieldKind::labels ? " and is not -100" : ""))
        .str();
  case FieldKind::positions:
    if (v >= 0)
      return std::nullopt;
    return std::string("is negative");
  case FieldKind::mask:
    if (v == 0 || v == 1)
      return std::nullopt;
    return std::string("is not 0 or 1");
  }
  llvm_unreachable("unknown field kind");
}

/// Reads one [batch][seq] integer matrix from `field`.
static llvm::Error readMatrix(const json &root, llvm::StringRef path,
                              const char *field, int64_t vocab, FieldKind kind,
                              TokenBatch &out, std::vector<int64_t> &dest) {
  const json &rows = root[field];
  std::string where = (path + ": field '" + field + "'").str();
  if (!rows.is_array() || rows.empty())
    return makeError(where + ": must be a non-empty list of token lists");
  int64_t b = 0;
  for (const json &row : rows) {
    if (!row.is_array() || row.empty())
      return makeError(where + ": row " + llvm::Twine(b) +
                       " must be a non-empty list of integers");
    if (out.seq == 0)
      out.seq = int64_t(row.size());
    if (int64_t(row.size()) != out.seq)
      return makeError(
          where + ": ragged rows: row " + llvm::Twine(b) + " has " +
          llvm::Twine(row.size()) + " tokens, " +
          (kind == FieldKind::ids ? "row 0 has " : "input_ids' rows have ") +
          llvm::Twine(out.seq));
    for (const json &t : row) {
      if (!t.is_number_integer())
        return makeError(where + ": row " + llvm::Twine(b) +
                         " has a non-integer " + t.dump());
      // An unsigned value beyond int64 must not wrap (to -100, say).
      if (t.is_number_unsigned() && t.get<uint64_t>() > uint64_t(INT64_MAX))
        return makeError(where +
                         (kind == FieldKind::ids || kind == FieldKind::labels
                              ? ": token " + t.dump() + " in row " +
                                    std::to_string(b) +
                                    " is outside the vocabulary [0, " +
                                    std::to_string(vocab) + ")"
                              : ": value " + t.dump() + " in row " +
                                    std::to_string(b) + " is out of range"));
      int64_t v = t.get<int64_t>();
      if (std::optional<std::string> why = checkValue(v, kind, vocab))
        return makeError(
            where + ": " +
            (kind == FieldKind::ids || kind == FieldKind::labels ? "token "
                                                                 : "value ") +
            llvm::Twine(v) + " in row " + llvm::Twine(b) + " " + *why);
      dest.push_back(v);
    }
    ++b;
  }
  if (out.batch == 0)
    out.batch = b;
  if (b != out.batch)
    return makeError(where + ": has " + llvm::Twine(b) +
                     " rows, input_ids has " + llvm::Twine(out.batch));
  return llvm::Error::success();
}

llvm::Expected<TokenBatch> mlir::tfm::readTokenFile(llvm::StringRef path,
                                                    int64_t vocab) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return makeError(path + ": cannot read: " + buf.getError().message());
  if (auto e = checkJsonText((*buf)->getBuffer(), path))
    return std::move(e);
  json root;
  try {
    root = json::parse((*buf)->getBuffer());
  } catch (const json::exception &e) { // parse_error, or a number out of range
    return makeError(path + ": not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("input_ids"))
    return makeError(path + ": field 'input_ids': required field is missing");
  TokenBatch batch;
  if (auto e = readMatrix(root, path, "input_ids", vocab, FieldKind::ids, batch,
                          batch.inputIds))
    return std::move(e);
  auto present = [&](const char *field) {
    return root.contains(field) && !root[field].is_null();
  };
  if (present("labels"))
    if (auto e = readMatrix(root, path, "labels", vocab, FieldKind::labels,
                            batch, batch.labels))
      return std::move(e);
  if (present("position_ids"))
    if (auto e = readMatrix(root, path, "position_ids", vocab,
                            FieldKind::positions, batch, batch.positionIds))
      return std::move(e);
  if (present("attention_mask")) {
    std::vector<int64_t> mask;
    if (auto e = readMatrix(root, path, "attention_mask", vocab,
                            FieldKind::mask, batch, mask))
      return std::move(e);
    if (auto e = applyAttentionMask(batch, mask,
                                    (path + ": field 'attention_mask'").str()))
      return std::move(e);
  }
  return batch;
}

llvm::Error mlir::tfm::applyAttentionMask(TokenBatch &batch,
                                          llvm::ArrayRef<int64_t> mask,
                                          llvm::StringRef where) {
  if (int64_t(mask.size()) != batch.batch * batch.seq)
    return makeError(where + ": expected " + llvm::Twine(batch.batch) + "x" +
                     llvm::Twine(batch.seq) + " values");
  for (int64_t b = 0; b < batch.batch; ++b)
    for (int64_t t = 0; t < batch.seq; ++t) {
      int64_t m = mask[b * batch.seq + t];
      if (m != 0 && m != 1)
        return makeError(where + ": value " + llvm::Twine(m) + " in row " +
                         llvm::Twine(b) + " is not 0 or 1");
      if (t > 0 && m && !mask[b * batch.seq + t - 1])
        return makeError(where + ": row " + llvm::Twine(b) +
                         " has padding before token " + llvm::Twine(t) +
                         "; only right padding is supported (pack documents "
                         "with position_ids instead)");
    }
  for (size_t i = 0; i < mask.size() && !batch.labels.empty(); ++i)
    if (!mask[i])
      batch.labels[i] = -100;
  return llvm::Error::success();
}

TokenBatch mlir::tfm::sliceRows(const TokenBatch &batch, int64_t first,
                                int64_t rows) {
  TokenBatch out;
  out.batch = rows;
  out.seq = batch.seq;
  auto copy = [&](const std::vector<int64_t> &from, std::vector<int64_t> &to) {
    if (!from.empty())
      to.assign(from.begin() + first * batch.seq,
                from.begin() + (first + rows) * batch.seq);
  };
  copy(batch.inputIds, out.inputIds);
  copy(batch.labels, out.labels);
  copy(batch.positionIds, out.positionIds);
  return out;
}
