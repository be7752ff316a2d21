//===- Packing.cpp - training windows from prepared documents -------------===//

#include "tfm/Data/Packing.h"

using namespace mlir;
using namespace mlir::tfm;

DocumentWindows::DocumentWindows(const PreparedData &data, int64_t seq,
                                 bool packed)
    : data(data), seq(seq), packed(packed) {
  if (packed)
    return;
  for (int64_t d = 0; d < data.numDocuments(); ++d) {
    int64_t end = data.documentStart(d + 1);
    for (int64_t at = data.documentStart(d); at < end; at += seq)
      pieces.push_back({at, std::min(seq, end - at)});
  }
}

PackedRow DocumentWindows::row(int64_t w) const {
  PackedRow r;
  r.ids.resize(seq);
  r.labels.resize(seq);
  r.positions.resize(seq);
  int64_t first = packed ? w * seq : pieces[w].first;
  int64_t length = packed ? seq : pieces[w].second;
  int64_t start = first; // where the current document (or piece) began
  int64_t doc = data.documentOf(first);
  for (int64_t t = 0; t < length; ++t) {
    int64_t i = first + t;
    while (doc + 1 < data.numDocuments() && data.documentStart(doc + 1) <= i)
      start = data.documentStart(++doc);
    r.ids[t] = data.tokenAt(i);
    r.positions[t] = i - start;
    bool target = r.positions[t] != 0 && data.isTarget(i);
    r.labels[t] = target ? r.ids[t] : -100;
  }
  // Unpacked rows end with right padding: EOS, not counted, positions
  // running on (nothing before them sees them).
  int64_t pad = data.getEosTokenId() >= 0 ? data.getEosTokenId() : 0;
  for (int64_t t = length; t < seq; ++t) {
    r.ids[t] = pad;
    r.labels[t] = -100;
    r.positions[t] = t > 0 ? r.positions[t - 1] + 1 : 0;
  }
  return r;
}
