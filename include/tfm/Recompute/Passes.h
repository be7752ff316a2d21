//===- Passes.h - tfm recompute planning passes -----------------*- C++ -*-===//

#ifndef TFM_RECOMPUTE_PASSES_H
#define TFM_RECOMPUTE_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

/// Attribute of a backward tfm.repeat: the plan tfm-plan-recompute chose.
inline constexpr llvm::StringLiteral kRecomputePlanAttrName =
    "tfm.recompute_plan";
/// Unit attribute of an op a backward body runs again.
inline constexpr llvm::StringLiteral kRecomputedAttrName = "tfm.recomputed";

#define GEN_PASS_DECL
#include "tfm/Recompute/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Recompute/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_RECOMPUTE_PASSES_H
