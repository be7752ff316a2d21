//===- TfmCosts.h - the cost models of the tfm ops --------------*- C++ -*-===//

#ifndef TFM_ANALYSIS_TFMCOSTS_H
#define TFM_ANALYSIS_TFMCOSTS_H

#include <cstdint>

namespace mlir {
class DialectRegistry;
class Operation;
} // namespace mlir

namespace mlir::tfm {

/// Attaches CostOpInterface to every tfm op (lib/Analysis/TfmCosts.cpp).
void registerTfmCostModels(DialectRegistry &registry);

/// The top-k that sizes the expert-grouped rows of the MoE layers under
/// `scope` (a DimResolver's `topK`; they share one), 1 when there are none.
int64_t moeTopKOf(Operation *scope);

} // namespace mlir::tfm

#endif // TFM_ANALYSIS_TFMCOSTS_H
