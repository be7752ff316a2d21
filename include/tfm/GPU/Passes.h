//===- Passes.h - tfm GPU passes --------------------------------*- C++ -*-===//

#ifndef TFM_GPU_PASSES_H
#define TFM_GPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tfm {

#define GEN_PASS_DECL
#include "tfm/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/GPU/Passes.h.inc"

} // namespace mlir::tfm

#endif // TFM_GPU_PASSES_H
