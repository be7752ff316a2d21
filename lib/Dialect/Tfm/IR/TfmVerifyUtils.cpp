//===- TfmVerifyUtils.cpp - shape checks shared by tfm verifiers ----------===//

#include "TfmVerifyUtils.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string mlir::tfm::detail::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

LogicalResult mlir::tfm::detail::checkShape(Operation *op, StringRef what,
                                            Type type,
                                            ArrayRef<int64_t> expected) {
  auto shaped = cast<ShapedType>(type);
  bool ok = shaped.getRank() == static_cast<int64_t>(expected.size());
  for (int64_t i = 0; ok && i < shaped.getRank(); ++i)
    ok = dimsCompatible(shaped.getDimSize(i), expected[i]);
  if (ok)
    return success();
  return op->emitOpError() << what << " must have shape "
                           << formatShape(expected) << ", got " << type;
}

LogicalResult mlir::tfm::detail::checkElementType(Operation *op, StringRef what,
                                                  Type type, Type elem) {
  if (cast<ShapedType>(type).getElementType() == elem)
    return success();
  return op->emitOpError() << what << " must have element type " << elem
                           << ", got " << type;
}

Type mlir::tfm::detail::statElementType(Type elem) {
  if (elem.isF64())
    return elem;
  return Float32Type::get(elem.getContext());
}

LogicalResult mlir::tfm::detail::checkStat(Operation *op, StringRef what,
                                           Type type, Type inputElem,
                                           ArrayRef<int64_t> expected) {
  if (failed(checkElementType(op, what, type, statElementType(inputElem))))
    return failure();
  return checkShape(op, what, type, expected);
}

LogicalResult mlir::tfm::detail::checkStaticDims(Operation *op, StringRef what,
                                                 Type type,
                                                 ArrayRef<int64_t> dims) {
  auto shaped = cast<ShapedType>(type);
  for (int64_t d : dims) {
    int64_t i = d < 0 ? shaped.getRank() + d : d;
    if (i >= 0 && i < shaped.getRank() && shaped.isDynamicDim(i))
      return op->emitOpError()
             << what << " dimension " << i
             << " must be static (model dimensions are static), got " << type;
  }
  return success();
}

LogicalResult mlir::tfm::detail::checkPositive(Operation *op, StringRef what,
                                               double value) {
  if (value > 0)
    return success();
  return op->emitOpError() << what << " must be positive, got " << value;
}

LogicalResult mlir::tfm::detail::checkSameType(Operation *op, StringRef what,
                                               Type type, Type expected) {
  if (type == expected)
    return success();
  return op->emitOpError() << what << " must have type " << expected << ", got "
                           << type;
}

LogicalResult mlir::tfm::detail::checkDocStart(Operation *op, Value docStart,
                                               Type tokens) {
  if (!docStart)
    return success();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(tokens).getShape();
  return checkShape(op, "doc_start", docStart.getType(), {shape[0], shape[1]});
}
