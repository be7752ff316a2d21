//===- Passes.h - tfm autodiff passes ---------------------------*- C++ -*-===//

#ifndef TFM_AUTODIFF_PASSES_H
#define TFM_AUTODIFF_PASSES_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

/// Attribute on a result of an `_vjp` function: the argument it is the
/// gradient of.
inline constexpr llvm::StringLiteral kGradOfAttrName = "tfm.grad_of";

/// The function tfm-autodiff adds for `func`: @<func>_vjp.
inline std::string getVjpFuncName(llvm::StringRef func) {
  return (func + "_vjp").str();
}

#define GEN_PASS_DECL
#include "tfm/Autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Autodiff/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_AUTODIFF_PASSES_H
