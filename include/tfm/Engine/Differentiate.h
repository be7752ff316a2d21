//===- Differentiate.h - add the vector-Jacobian product of a function -*- C++
//-*-===//

#ifndef TFM_ENGINE_DIFFERENTIATE_H
#define TFM_ENGINE_DIFFERENTIATE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tfm {

/// Runs tfm-autodiff on `func` of `module`, adding @<func>_vjp, and returns
/// that name. `seedAllResults`: every float result gets a cotangent argument
/// (kernel tests); otherwise only the scalar loss does. Errors carry the
/// pass's diagnostics (e.g. an op without an adjoint rule).
llvm::Expected<std::string> differentiate(ModuleOp module, llvm::StringRef func,
                                          bool seedAllResults);

/// Runs tfm-plan-recompute{budget=`budget`} on `module` (after
/// differentiate): the backward rebuilds what the plan does not save.
/// `budget` as RecomputeBudget::parse takes it; errors name the option, or
/// the least budget that fits.
llvm::Error planRecompute(ModuleOp module, llvm::StringRef budget);

} // namespace mlir::tfm

#endif // TFM_ENGINE_DIFFERENTIATE_H
