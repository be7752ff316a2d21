//===- Passes.h - tfm adapter passes ----------------------------*- C++ -*-===//

#ifndef TFM_ADAPTERS_PASSES_H
#define TFM_ADAPTERS_PASSES_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/Adapters/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Adapters/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_ADAPTERS_PASSES_H
