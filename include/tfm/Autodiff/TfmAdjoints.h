//===- TfmAdjoints.h - the adjoint rules of the tfm ops ---------*- C++ -*-===//

#ifndef TFM_AUTODIFF_TFMADJOINTS_H
#define TFM_AUTODIFF_TFMADJOINTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tfm {

/// Attaches DifferentiableOpInterface to every tfm op not marked
/// Tfm_NotDifferentiable (lib/Autodiff/TfmAdjoints.cpp).
void registerTfmAdjoints(DialectRegistry &registry);

} // namespace mlir::tfm

#endif // TFM_AUTODIFF_TFMADJOINTS_H
