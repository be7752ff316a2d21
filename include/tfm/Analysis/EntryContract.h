//===- EntryContract.h - what a compiled entry checks of its arguments -*- C++
//-*-===//
//
// Generated code trusts its arguments: a sequence length that differs
// between two arguments, or a token id outside the table, is a read out of
// bounds there. The pipelines record what the code relies on as attributes
// of the entry function (tfm-record-entry-bounds, tfm-record-entry-dims);
// CompiledFunction reads them and checks every call's arguments first.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ANALYSIS_ENTRYCONTRACT_H
#define TFM_ANALYSIS_ENTRYCONTRACT_H

#include "mlir/IR/Operation.h"

#include <optional>
#include <vector>

namespace mlir::tfm {

inline constexpr llvm::StringLiteral kEntryIndexBoundsAttr =
    "tfm.entry_index_bounds";
inline constexpr llvm::StringLiteral kEntryDimsAttr = "tfm.entry_dims";
inline constexpr llvm::StringLiteral kEntryDimsAtLeastAttr =
    "tfm.entry_dims_at_least";

struct EntryContract {
  /// Argument `argument` holds indices in [0, bound), or `allowed`.
  struct IndexBound {
    unsigned argument;
    int64_t bound;
    std::optional<int64_t> allowed;
  };
  /// These (argument, dimension) sizes are equal, and equal `size` if set.
  struct DimClass {
    std::optional<int64_t> size;
    std::vector<std::pair<unsigned, unsigned>> members;
  };
  /// A size: of an argument's dimension, or a static one.
  struct Size {
    std::optional<unsigned> argument;
    int64_t dimOrSize;
  };
  /// `big` >= `small`: the code reads `big`'s dimension at every index of
  /// a loop over `small`.
  struct AtLeast {
    Size big, small;
  };
  std::vector<IndexBound> indexBounds;
  std::vector<DimClass> dims;
  std::vector<AtLeast> atLeast;

  /// Reads (and removes, so that nothing downstream sees them) the
  /// attributes of `func`, any op (func.func or llvm.func). Malformed
  /// attributes are ignored.
  static EntryContract take(Operation *func);
};

} // namespace mlir::tfm

#endif // TFM_ANALYSIS_ENTRYCONTRACT_H
