//===- TfmCosts.h - the cost models of the tfm ops --------------*- C++ -*-===//

#ifndef TFM_ANALYSIS_TFMCOSTS_H
#define TFM_ANALYSIS_TFMCOSTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tfm {

/// Attaches CostOpInterface to every tfm op (lib/Analysis/TfmCosts.cpp).
void registerTfmCostModels(DialectRegistry &registry);

} // namespace mlir::tfm

#endif // TFM_ANALYSIS_TFMCOSTS_H
