//===- EntryContract.cpp - what a compiled entry checks of its arguments --===//

#include "tfm/Analysis/EntryContract.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::tfm;

EntryContract EntryContract::take(Operation *func) {
  EntryContract contract;
  if (!func)
    return contract;
  if (auto list = func->getAttrOfType<ArrayAttr>(kEntryIndexBoundsAttr))
    for (Attribute a : list)
      if (auto r = dyn_cast<DenseI64ArrayAttr>(a); r && r.size() == 3) {
        IndexBound ib{unsigned(r[0]), r[1], std::nullopt};
        if (r[2] != r[1])
          ib.allowed = r[2];
        contract.indexBounds.push_back(ib);
      }
  if (auto list = func->getAttrOfType<ArrayAttr>(kEntryDimsAttr))
    for (Attribute a : list)
      if (auto r = dyn_cast<DenseI64ArrayAttr>(a);
          r && r.size() >= 3 && r.size() % 2 == 1) {
        DimClass c;
        if (r[0] >= 0)
          c.size = r[0];
        for (int64_t i = 1; i + 1 < r.size(); i += 2)
          c.members.push_back({unsigned(r[i]), unsigned(r[i + 1])});
        contract.dims.push_back(std::move(c));
      }
  if (auto list = func->getAttrOfType<ArrayAttr>(kEntryDimsAtLeastAttr))
    for (Attribute a : list)
      if (auto r = dyn_cast<DenseI64ArrayAttr>(a); r && r.size() == 4) {
        auto size = [](int64_t arg, int64_t v) {
          return arg < 0 ? Size{std::nullopt, v} : Size{unsigned(arg), v};
        };
        contract.atLeast.push_back({size(r[0], r[1]), size(r[2], r[3])});
      }
  func->removeAttr(kEntryIndexBoundsAttr);
  func->removeAttr(kEntryDimsAttr);
  func->removeAttr(kEntryDimsAtLeastAttr);
  return contract;
}
