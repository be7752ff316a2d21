//===- Passes.h - tfm dialect passes ----------------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_PASSES_H
#define TFM_DIALECT_TFM_TRANSFORMS_PASSES_H

#include "tfm/Dialect/Tfm/IR/TfmDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_PASSES_H
