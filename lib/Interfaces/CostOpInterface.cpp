//===- CostOpInterface.cpp - FLOPs and bytes of an op ---------------------===//

#include "tfm/Interfaces/CostOpInterface.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;

int64_t DimResolver::dim(Type t, unsigned d, int64_t chunk) const {
  auto shaped = cast<ShapedType>(t);
  if (!shaped.isDynamicDim(d))
    return shaped.getDimSize(d);
  // Expert-grouped rows: [R] or [R, H], the only tfm types whose single
  // dynamic dimension leads a rank-1 or rank-2 tensor.
  if (d == 0 && shaped.getNumDynamicDims() == 1 && shaped.getRank() <= 2)
    return batch * seq * topK;
  unsigned nth = 0;
  for (unsigned i = 0; i < d; ++i)
    nth += shaped.isDynamicDim(i);
  if (nth == 0)
    return batch;
  return chunk > 0 ? (seq + chunk - 1) / chunk : seq;
}

double DimResolver::elements(Type t, int64_t chunk) const {
  auto shaped = dyn_cast<ShapedType>(t);
  if (!shaped)
    return 1;
  double n = 1;
  for (unsigned d = 0; d < shaped.getRank(); ++d)
    n *= double(dim(t, d, chunk));
  return n;
}

double DimResolver::bytes(Type t, int64_t chunk) const {
  auto shaped = dyn_cast<ShapedType>(t);
  Type elem = shaped ? shaped.getElementType() : t;
  unsigned bits = elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 64;
  return elements(t, chunk) * double((bits + 7) / 8);
}

int64_t DimResolver::dim(Value v, unsigned d) const {
  return dim(v.getType(), d, stateChunkSizeOf(v));
}
double DimResolver::elements(Value v) const {
  return elements(v.getType(), stateChunkSizeOf(v));
}
double DimResolver::bytes(Value v) const {
  return bytes(v.getType(), stateChunkSizeOf(v));
}

namespace {

/// stateChunkSizeOf, with the kind of the scan layer `v` was reached from:
/// tfm-autodiff's forward and backward scans number their kinds alike, and
/// a stacked slot may hold different values in different kinds.
int64_t chunkSizeOf(Value v, std::optional<unsigned> kindHint, int depth) {
  // Scans nest only a few deep; the bound keeps a malformed chain finite.
  if (depth > 16)
    return 0;
  if (auto result = dyn_cast<OpResult>(v)) {
    Operation *def = result.getOwner();
    if (auto scan = dyn_cast<MambaSsdScanOp>(def))
      return v == scan.getStates() ? scan.getChunkSize() : 0;
    if (auto rule = dyn_cast<GatedDeltaRuleOp>(def))
      return v == rule.getStates() ? rule.getChunkSize() : 0;
    auto repeat = dyn_cast<RepeatOp>(def);
    unsigned numCarried = repeat ? repeat.getInits().size() : 0;
    if (!repeat || result.getResultNumber() < numCarried)
      return 0;
    // A stacked output: what the layers that write it yield. The hinted
    // kind decides when it writes the slot; otherwise every writer must
    // agree.
    unsigned stacked = result.getResultNumber() - numCarried;
    if (kindHint && *kindHint < repeat.getKinds().size())
      if (Value yielded = repeat.getYieldedOfKind(stacked, *kindHint))
        return chunkSizeOf(yielded, kindHint, depth + 1);
    std::optional<int64_t> agreed;
    for (unsigned kind = 0; kind < repeat.getKinds().size(); ++kind) {
      Value yielded = repeat.getYieldedOfKind(stacked, kind);
      if (!yielded)
        continue;
      int64_t chunk = chunkSizeOf(yielded, kind, depth + 1);
      if (agreed && *agreed != chunk)
        return 0;
      agreed = chunk;
    }
    return agreed.value_or(0);
  }
  // A block argument of a scan's layer: its slice of a stacked input.
  auto arg = cast<BlockArgument>(v);
  auto repeat = dyn_cast_or_null<RepeatOp>(arg.getOwner()->getParentOp());
  Value input = repeat ? repeat.getStackedInputOf(arg) : Value();
  if (!input)
    return 0;
  return chunkSizeOf(input, arg.getOwner()->getParent()->getRegionNumber(),
                     depth + 1);
}

} // namespace

int64_t mlir::tfm::stateChunkSizeOf(Value v) {
  return chunkSizeOf(v, std::nullopt, 0);
}

#include "tfm/Interfaces/CostOpInterface.cpp.inc"
