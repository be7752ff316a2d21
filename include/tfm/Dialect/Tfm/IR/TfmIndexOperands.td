//===- TfmIndexOperands.td - operands that index a dimension -*- tablegen -*-===//

#ifndef TFM_INDEX_OPERANDS
#define TFM_INDEX_OPERANDS

include "mlir/IR/OpBase.td"

def Tfm_IndexOperandsOpInterface : OpInterface<"IndexOperandsOpInterface"> {
  let cppNamespace = "::mlir::tfm";
  let description = [{
    An op with integer operands whose elements index a dimension of another
    value (token ids into the embedding table's rows, labels into the
    vocabulary), so that an element outside `[0, bound)` would read out of
    bounds or be silently dropped. `tfm-record-entry-bounds` turns these
    into run-time checks of the entry function's arguments.
  }];
  let methods = [
    InterfaceMethod<
      "Appends each index operand with its bound (and the one value besides "
      "[0, bound) it may hold, such as an ignore_index).",
      "void", "getIndexOperands",
      (ins "::llvm::SmallVectorImpl<::mlir::tfm::IndexOperand> &":$out)>,
  ];
}

#endif // TFM_INDEX_OPERANDS
