//===- CostOpInterface.cpp - FLOPs and bytes of an op ---------------------===//

#include "tfm/Interfaces/CostOpInterface.h"

using namespace mlir;
using namespace mlir::tfm;

int64_t DimResolver::dim(Type t, unsigned d) const {
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
  return nth == 0 ? batch : seq;
}

double DimResolver::elements(Type t) const {
  auto shaped = dyn_cast<ShapedType>(t);
  if (!shaped)
    return 1;
  double n = 1;
  for (unsigned d = 0; d < shaped.getRank(); ++d)
    n *= double(dim(t, d));
  return n;
}

double DimResolver::bytes(Type t) const {
  auto shaped = dyn_cast<ShapedType>(t);
  Type elem = shaped ? shaped.getElementType() : t;
  unsigned bits = elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 64;
  return elements(t) * double((bits + 7) / 8);
}

#include "tfm/Interfaces/CostOpInterface.cpp.inc"
