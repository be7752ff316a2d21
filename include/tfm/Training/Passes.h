//===- Passes.h - tfm training-step passes ----------------------*- C++ -*-===//

#ifndef TFM_TRAINING_PASSES_H
#define TFM_TRAINING_PASSES_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir::tfm {

/// Function attribute of an optimizer step: the model-function argument
/// index of each parameter it updates, in order.
inline constexpr llvm::StringLiteral kTrainedArgumentsAttrName =
    "tfm.trained_arguments";
/// Function attribute of an optimizer step: its state kinds, in order.
inline constexpr llvm::StringLiteral kOptimizerStateAttrName =
    "tfm.optimizer_state";

/// Function attribute of an optimizer step built with model-copies: the
/// positions (among its parameters) whose model-typed copy follows the norm.
inline constexpr llvm::StringLiteral kModelCopiesAttrName = "tfm.model_copies";

/// @<func>_optimizer_step.
inline std::string getOptimizerStepFuncName(llvm::StringRef func) {
  return (func + "_optimizer_step").str();
}

/// Whether HF's Trainer decays the parameter named `hfName`
/// (Trainer.get_decay_parameter_names: not biases, not normalisation
/// weights).
bool hfDecaysParameter(llvm::StringRef hfName);

#define GEN_PASS_DECL
#include "tfm/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Training/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_TRAINING_PASSES_H
