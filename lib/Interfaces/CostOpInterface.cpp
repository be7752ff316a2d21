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

int64_t mlir::tfm::stateChunkSizeOf(Value v) {
  // Each step moves from a stacked value to what one layer writes or reads
  // of it; scans nest only a few deep, the bound keeps a malformed chain
  // from looping.
  for (int hop = 0; hop < 16; ++hop) {
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
      // A stacked output: what a layer of a kind that writes it yields.
      unsigned stacked = result.getResultNumber() - numCarried;
      Value yielded;
      for (unsigned kind = 0; kind < repeat.getKinds().size() && !yielded;
           ++kind) {
        SmallVector<unsigned> written = repeat.getStackedOfKind(kind);
        auto pos = llvm::find(written, stacked);
        if (pos == written.end())
          continue;
        Operation *yield = repeat.getKinds()[kind].front().getTerminator();
        yielded = yield->getOperand(numCarried + (pos - written.begin()));
      }
      if (!yielded)
        return 0;
      v = yielded;
      continue;
    }
    // A block argument of a scan's layer: its slice of a stacked input.
    auto arg = cast<BlockArgument>(v);
    auto repeat = dyn_cast_or_null<RepeatOp>(arg.getOwner()->getParentOp());
    unsigned numCarried = repeat ? repeat.getInits().size() : 0;
    if (!repeat || arg.getArgNumber() < numCarried)
      return 0;
    unsigned kind = arg.getOwner()->getParent()->getRegionNumber();
    SmallVector<unsigned> read = repeat.getWeightsOfKind(kind);
    unsigned pos = arg.getArgNumber() - numCarried;
    if (pos >= read.size())
      return 0;
    v = repeat.getWeights()[read[pos]];
  }
  return 0;
}

#include "tfm/Interfaces/CostOpInterface.cpp.inc"
