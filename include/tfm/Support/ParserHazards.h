//===- ParserHazards.h - MLIR text that crashes MLIR 22's parser -*- C++
//-*-===//
//
// MLIR 22's custom parsers of `linalg.transpose`, `linalg.broadcast` and
// `linalg.reduce` report an error when the array after `permutation =` /
// `dimensions =` does not parse, then store the null attribute they got and
// crash in NamedAttrList::set. The bug is in libMLIR; the tools that parse
// MLIR text (tfm-opt, tfm-run --mlir, the pipeline fuzzer) look for such
// text first and refuse it with an error at that place instead.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_SUPPORT_PARSERHAZARDS_H
#define TFM_SUPPORT_PARSERHAZARDS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::tfm {

struct ParserHazard {
  /// Offset in the text of the attribute keyword whose array is malformed.
  size_t offset;
  /// What the error says: the op, the keyword and why the text is refused.
  std::string message;
};

/// The first custom-form `linalg.transpose` / `linalg.broadcast` /
/// `linalg.reduce` in `text` whose `permutation =` / `dimensions =` is not
/// followed by a list of 64-bit integers (`[` decimal or hex integers,
/// commas, `]`; whitespace and comments anywhere). Comments and string
/// literals are skipped; the generic form (`"linalg.transpose"(...)
/// <{permutation = array<...>}>`) parses safely and is not looked at.
std::optional<ParserHazard> findParserHazard(llvm::StringRef text);

/// Checks the main buffer of `sources`; on a hazard prints
/// `file:line:col: error: ...` through `sources` and returns failure.
LogicalResult refuseParserHazards(llvm::SourceMgr &sources);

} // namespace mlir::tfm

#endif // TFM_SUPPORT_PARSERHAZARDS_H
