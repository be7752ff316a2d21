//===- Passes.h - tfm analysis passes ---------------------------*- C++ -*-===//

#ifndef TFM_ANALYSIS_PASSES_H
#define TFM_ANALYSIS_PASSES_H

#include "tfm/Interfaces/CostOpInterface.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Analysis/Passes.h.inc"

/// Attaches the cost model of every tfm op (CostOpInterface external models).
} // namespace mlir::tfm

#endif // TFM_ANALYSIS_PASSES_H
