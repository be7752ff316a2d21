//===- Packing.h - training windows from prepared documents -----*- C++ -*-===//
//
// How a prepared corpus (PreparedData) becomes rows of `seq` tokens:
//
// - packed (the default): the documents, concatenated, cut into windows of
//   `seq` tokens; a window holds whole documents and pieces of the ones at
//   its ends. Position ids restart at 0 at each document start and at the
//   window's start (a piece is a document of its own), which is what makes
//   the compiled step attend and scan only within documents
//   (tfm.document_starts); the label of each document's first token is
//   -100, so no document predicts the next one's start, and so are the
//   labels the loss mask excludes. The tail shorter than a window is left
//   out.
// - unpacked (--no-packing): one document (or one `seq`-token piece of a
//   longer one) per row, padded with EOS to `seq`; the padding's labels are
//   -100 (right padding: no real token sees it).
//
// Labels are unshifted (the loss shifts them), as everywhere in tfm.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DATA_PACKING_H
#define TFM_DATA_PACKING_H

#include "tfm/Data/PreparedData.h"

#include <vector>

namespace mlir::tfm {

/// One row: ids, labels and position ids, `seq` each.
struct PackedRow {
  std::vector<int64_t> ids, labels, positions;
};

class DocumentWindows {
public:
  DocumentWindows(const PreparedData &data, int64_t seq, bool packed);

  bool isPacked() const { return packed; }
  int64_t size() const {
    return packed ? data.numTokens() / seq : int64_t(pieces.size());
  }
  /// Row `w` (< size()).
  PackedRow row(int64_t w) const;

private:
  const PreparedData &data;
  int64_t seq;
  bool packed;
  /// Unpacked: (first token, length <= seq) of each row.
  std::vector<std::pair<int64_t, int64_t>> pieces;
};

} // namespace mlir::tfm

#endif // TFM_DATA_PACKING_H
