//===- RopeConfig.h - read the RoPE keys of a config.json -------*- C++ -*-===//
//
// The rope dicts (v5 `rope_parameters`, legacy `rope_scaling`) and the
// top-level keys that feed them, read as modeling_rope_utils does.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_IMPORT_ROPECONFIG_H
#define TFM_LIB_IMPORT_ROPECONFIG_H

#include "FamilyRules.h"
#include "JsonFields.h"

#include "tfm/Import/ModelSpec.h"

#include "llvm/Support/Error.h"

namespace mlir::tfm::hf {

/// The RoPE of full-attention and of sliding-window layers (they differ only
/// where the family has per layer type rope parameters).
struct ModelRope {
  RopeSpec global, local;
};

/// HF's yarn_get_mscale: 0.1 m ln(scale) + 1, or 1 for scale <= 1.
double yarnMscale(double scale, double m);

/// Reads the RoPE of the config whose top level `f` reads. On error, returns
/// the message that parseHFConfig reports.
llvm::Expected<ModelRope> readModelRope(Fields &f, const FamilyRules &family,
                                        int64_t headDim);

} // namespace mlir::tfm::hf

#endif // TFM_LIB_IMPORT_ROPECONFIG_H
