//===- DeltaNetConfig.h - gated DeltaNet fields of a config.json -*- C++
//-*-===//
//
// Qwen3-Next's and Qwen3.5's linear-attention fields (`linear_*`), and their
// layer schedule: `layer_types` (linear_attention / full_attention), or
// every `full_attention_interval`-th layer full attention.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_IMPORT_DELTANETCONFIG_H
#define TFM_LIB_IMPORT_DELTANETCONFIG_H

#include "FamilyRules.h"
#include "JsonFields.h"

#include "llvm/Support/Error.h"

namespace mlir::tfm::hf {

/// One entry per layer: true where the layer is `linear_attention`. The
/// error (in `f`) names `layer_types` or `full_attention_interval`.
std::vector<bool> readLinearLayers(Fields &f, int64_t numLayers);

/// Reads the mixer of a family with `rules.enabled` into `spec.deltaNet`.
llvm::Error readDeltaNet(Fields &f, const DeltaNetRules &rules,
                         ModelSpec &spec);

} // namespace mlir::tfm::hf

#endif // TFM_LIB_IMPORT_DELTANETCONFIG_H
