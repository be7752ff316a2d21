//===- TokenFile.cpp - the --tokens JSON file -----------------------------===//

#include "tfm/Engine/TokenFile.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::tfm;
using json = nlohmann::json;

/// Reads one [batch][seq] integer matrix from `field`.
static llvm::Error readMatrix(const json &root, llvm::StringRef path,
                              const char *field, int64_t vocab, bool isLabel,
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
      return makeError(where + ": ragged rows: row " + llvm::Twine(b) +
                       " has " + llvm::Twine(row.size()) +
                       " tokens, row 0 has " + llvm::Twine(out.seq));
    for (const json &t : row) {
      if (!t.is_number_integer())
        return makeError(where + ": row " + llvm::Twine(b) +
                         " has a non-integer " + t.dump());
      // An unsigned id beyond int64 must not wrap (to -100, say).
      if (t.is_number_unsigned() && t.get<uint64_t>() > uint64_t(INT64_MAX))
        return makeError(where + ": token " + t.dump() + " in row " +
                         llvm::Twine(b) + " is outside the vocabulary [0, " +
                         llvm::Twine(vocab) + ")");
      int64_t v = t.get<int64_t>();
      if (!isValidToken(v, vocab, isLabel))
        return makeError(where + ": token " + llvm::Twine(v) + " in row " +
                         llvm::Twine(b) + " is outside the vocabulary [0, " +
                         llvm::Twine(vocab) + ")" +
                         (isLabel ? " and is not -100" : ""));
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
  if (auto e = readMatrix(root, path, "input_ids", vocab, false, batch,
                          batch.inputIds))
    return std::move(e);
  if (root.contains("labels") && !root["labels"].is_null())
    if (auto e =
            readMatrix(root, path, "labels", vocab, true, batch, batch.labels))
      return std::move(e);
  return batch;
}
