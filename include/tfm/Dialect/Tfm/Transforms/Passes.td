//===- Passes.td - tfm dialect passes ----------------------*- tablegen -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_PASSES
#define TFM_DIALECT_TFM_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TfmCheckWeightMapPass : Pass<"tfm-check-weight-map", "ModuleOp"> {
  let summary = "Check that the weight map of a module is complete and consistent";
  let description = [{
    A runner binds checkpoint tensors to function arguments through their
    `#tfm.param` attributes alone, so the map must be unambiguous:

    - in every function that has parameters, each tensor argument that is
      not an input (ids, positions, labels: integer tensors) carries a
      `tfm.param`;
    - no two parameters, nor a parameter and a `tied` alias, claim the same
      HF name (after expanding `{layer}` over the stacked dimension);
    - a stacked parameter is used only as a `tfm.repeat` weight whose
      `num_layers` equals its leading dimension.

    The module is left unchanged; violations are errors naming the argument.
  }];
}

#endif // TFM_DIALECT_TFM_TRANSFORMS_PASSES
