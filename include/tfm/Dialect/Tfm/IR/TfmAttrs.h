//===- TfmAttrs.h - tfm attributes ------------------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMATTRS_H
#define TFM_DIALECT_TFM_IR_TFMATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "tfm/Dialect/Tfm/IR/TfmEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmAttrs.h.inc"

namespace mlir::tfm {
/// Name of the argument attribute that carries a #tfm.param.
inline constexpr llvm::StringLiteral kParamAttrName = "tfm.param";
/// Unit argument attribute: an entry function updates this argument in
/// place (tfm-read-only-arguments sets it from `bufferization.writable =
/// true`, which bufferization removes; tfm-return-arguments-in-place reads
/// it).
inline constexpr llvm::StringLiteral kUpdatedInPlaceAttrName =
    "tfm.updated_in_place";
/// Function attribute: HF tensor name prefixes a checkpoint may hold that
/// the model does not read (layers HF does not build, such as MTP layers).
inline constexpr llvm::StringLiteral kIgnoredTensorsAttrName = "tfm.ignored";
/// The placeholder for the layer index in stacked parameter names.
inline constexpr llvm::StringLiteral kLayerPlaceholder = "{layer}";
/// `templ` with its `{layer}` placeholder (if any) replaced by `layer`.
std::string substituteLayer(llvm::StringRef templ, int64_t layer);
/// The expert index in per-expert source names of stacked_experts.
inline constexpr llvm::StringLiteral kExpertPlaceholder = "{expert}";
} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_IR_TFMATTRS_H
