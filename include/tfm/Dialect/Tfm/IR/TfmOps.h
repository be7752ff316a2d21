//===- TfmOps.h - tfm operations --------------------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMOPS_H
#define TFM_DIALECT_TFM_IR_TFMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"
#include "tfm/Dialect/Tfm/IR/TfmDialect.h"

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.h.inc"

#endif // TFM_DIALECT_TFM_IR_TFMOPS_H
