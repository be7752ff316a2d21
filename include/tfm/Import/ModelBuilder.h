//===- ModelBuilder.h - ModelSpec to tfm IR ---------------------*- C++ -*-===//

#ifndef TFM_IMPORT_MODELBUILDER_H
#define TFM_IMPORT_MODELBUILDER_H

#include "tfm/Import/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::tfm {

/// Name of the model entry point the importer emits.
inline constexpr llvm::StringLiteral kForwardFuncName = "forward";

/// The arguments of @forward before the parameters: token ids, positions and
/// labels (-100: not counted), each i64 [batch, seq]. Every argument from
/// kNumForwardInputs on carries a #tfm.param. Its results are the logits
/// [batch, seq, vocab] and the loss, or (built without logits) the loss
/// alone, as result 0.
enum ForwardArgument : unsigned {
  kInputIdsArgument = 0,
  kPositionsArgument = 1,
  kLabelsArgument = 2,
  kNumForwardInputs = 3,
};
enum ForwardResult : unsigned { kLogitsResult = 0, kLossResult = 1 };

/// Builds the HF-literal tfm module of `spec`:
///
///   func.func @forward(%input_ids: [B,T] i64, %position_ids: [B,T] i64,
///                      %labels: [B,T] i64, <parameters>...)
///       -> (logits [B,T,V], loss)
///
/// Each distinct layer kind is written once inside one tfm.repeat over
/// weights stacked on a leading layer dimension. `elementType` is the
/// parameter and activation type (f32 or bf16). Without `withLogits` the
/// forward returns the loss only, so tfm-fuse can compute it without ever
/// forming the logits (tfm.fused_lm_head_loss).
OwningOpRef<ModuleOp> buildModel(MLIRContext &ctx, const ModelSpec &spec,
                                 Type elementType, bool withLogits = true);

} // namespace mlir::tfm

#endif // TFM_IMPORT_MODELBUILDER_H
