//===- HFConfig.h - read a Hugging Face config.json -------------*- C++ -*-===//
//
// Reads config.json the way the transformers config classes do (their
// defaults for absent keys, their derivations) and applies each family's
// implied behaviour, giving a family-independent ModelSpec.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_IMPORT_HFCONFIG_H
#define TFM_IMPORT_HFCONFIG_H

#include "tfm/Import/ModelSpec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::tfm {

/// Parses config.json text. `source` names the file in error messages,
/// which have the form "<source>: field '<key>': <problem>".
llvm::Expected<ModelSpec> parseHFConfig(llvm::StringRef text,
                                        llvm::StringRef source);

/// Reads and parses a config.json, or the one inside a checkpoint folder.
llvm::Expected<ModelSpec> readHFConfig(llvm::StringRef path);

/// Applies `--moe-aux-loss`: "auto" keeps HF's choice (the load-balancing
/// loss is added when config.json sets output_router_logits), "on" and
/// "off" force it. Anything else, or "on" for a model without MoE layers,
/// is an error naming the option.
llvm::Error setMoeAuxLoss(ModelSpec &spec, llvm::StringRef mode);

/// The model_type values the importer supports, sorted.
std::vector<std::string> supportedModelTypes();

} // namespace mlir::tfm

#endif // TFM_IMPORT_HFCONFIG_H
