//===- CostOpInterface.td - FLOPs and bytes of an op -------*- tablegen -*-===//

#ifndef TFM_INTERFACES_COSTOPINTERFACE
#define TFM_INTERFACES_COSTOPINTERFACE

include "mlir/IR/OpBase.td"

def Tfm_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::tfm";
  let description = [{
    The work of one execution of an op for concrete sizes: floating-point
    operations and bytes read and written from memory (operands and results
    once each, the way a fused kernel touches them). Dynamic sizes (batch,
    sequence) come from `dims`. The recompute planner, memory and fusion
    reports read it; `tfm-cost-report` prints it. Formulas per op:
    docs/spec.md, "Cost model".
  }];
  let methods = [
    InterfaceMethod<"The cost of one execution.",
      "::mlir::tfm::OpCost", "getCost",
      (ins "const ::mlir::tfm::DimResolver &":$dims)>,
  ];
}

#endif // TFM_INTERFACES_COSTOPINTERFACE
