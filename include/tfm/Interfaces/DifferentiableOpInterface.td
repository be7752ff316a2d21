//===- DifferentiableOpInterface.td - reverse-mode rules ---*- tablegen -*-===//

#ifndef TFM_INTERFACES_DIFFERENTIABLEOPINTERFACE
#define TFM_INTERFACES_DIFFERENTIABLEOPINTERFACE

include "mlir/IR/OpBase.td"

def Tfm_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::tfm";
  let description = [{
    An op's reverse-mode rule (Enzyme-MLIR style): given the gradients of
    its results, build the gradients of its operands. The autodiff pass
    (tfm-autodiff) knows no op by name; it calls this on each op in reverse.

    The rule reads forward values only through `ab.primal(v)`, so the
    builder decides how a forward value is made available in the backward
    (used directly, or saved per layer inside `tfm.repeat`): what the
    backward reads is exactly the set of `primal` calls. Rules are attached
    as external models (lib/Autodiff/TfmAdjoints.cpp), and each is written
    down in docs/spec.md next to its op.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the operand gradients from the result gradients
        (`ab.resultGrad(i)`, null where no gradient flows) and hands them to
        `ab.addGrad(operandIndex, grad)`.
      }],
      "::llvm::LogicalResult", "buildAdjoint",
      (ins "::mlir::tfm::AdjointBuilder &":$ab)>,
  ];
}

#endif // TFM_INTERFACES_DIFFERENTIABLEOPINTERFACE
