//===- TfmDialect.td - tfm dialect definition --------------*- tablegen -*-===//
//
// The tfm dialect: transformer training ops at the level of the Hugging Face
// modeling code (HF-literal ops) and the fused ops the fusion pass produces.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT
#define TFM_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let cppNamespace = "::mlir::tfm";
  let summary = "Transformer training ops (see docs/spec.md)";
  let description = [{
    Ops for dense transformer models as the Hugging Face modeling code computes
    them. Model dimensions are static; batch and sequence are dynamic.
    Parameters are function arguments carrying `#tfm.param<...>`, which names
    the Hugging Face tensor each one is built from. A layer is written once
    inside `tfm.repeat` and runs over weights stacked on a leading layer
    dimension. Semantics and gradient rules of every op: `docs/spec.md`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

// Every tfm op takes and returns non-empty tensors: a static dimension of
// size 0 is refused by the verifier (dynamic ones are checked when a
// compiled entry is called).
def Tfm_NoEmptyDims : NativeOpTrait<"NoEmptyDims"> {
  let cppNamespace = "::mlir::OpTrait::tfm";
}

class Tfm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfm_Dialect, mnemonic, !listconcat([Tfm_NoEmptyDims], traits)>;

// The explicit "no adjoint" marker: tfm-autodiff never differentiates these
// ops (backward ops, since second derivatives are out of scope, and
// terminators, which their parent's rule handles). Every other tfm op must
// have a DifferentiableOpInterface model; TfmAdjoints.cpp attaches one to
// each op of the generated op list and fails to compile when a rule is
// missing, and unittests/OpCoverageTest.cpp checks the registered ops.
def Tfm_NotDifferentiable : NativeOpTrait<"NotDifferentiable"> {
  let cppNamespace = "::mlir::OpTrait::tfm";
}

class Tfm_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tfm_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // TFM_DIALECT
