//===- Passes.td - tfm autodiff passes ---------------------*- tablegen -*-===//

#ifndef TFM_AUTODIFF_PASSES
#define TFM_AUTODIFF_PASSES

include "mlir/Pass/PassBase.td"

def TfmAutodiffPass : Pass<"tfm-autodiff", "ModuleOp"> {
  let summary = "Derive the backward of a tfm function (reverse mode)";
  let description = [{
    For function `@F` (option `func`, default `forward`) adds

      @F_vjp(args..., d_results...) -> (results..., grads...)

    where `d_results` are cotangents of the seeded results (the scalar
    results, i.e. the loss, unless `seed-all-results`), and `grads` are the
    gradients of every float argument that is not `frozen`, in argument
    order, each result marked `{tfm.grad_of = <argument index>}`. Fan-out
    gradients are summed (tied embeddings get both uses). `tfm.repeat`
    becomes a forward scan that also saves what the backward reads, and a
    reverse scan over the same layer kinds (one backward body per kind).
    Each op's rule comes from its DifferentiableOpInterface; the pass knows
    no op by name. Only values a trainable argument reaches get adjoint work
    (activity analysis): a frozen weight gets no weight-gradient op, and a
    frozen stacked weight no stacked gradient output of the reverse scan.
    `@F` itself is left unchanged.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"forward\"",
           "The function to differentiate">,
    Option<"seedAllResults", "seed-all-results", "bool", "false",
           "Take a cotangent for every float result, not only scalar ones">,
  ];
  // It creates tfm ops (zeros_like, the adjoints) even where @F has none.
  let dependentDialects = ["::mlir::tfm::TfmDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // TFM_AUTODIFF_PASSES
