//===- MambaConfig.h - Mamba2 fields of a config.json -----------*- C++ -*-===//
//
// The Mamba2 mixer's fields (MambaRules names the keys per family), and the
// mamba_ssm config format (no model_type; `d_model`, `n_layer`, `ssm_cfg`),
// which is read as the Mamba2Config HF's conversion script makes of it.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_IMPORT_MAMBACONFIG_H
#define TFM_LIB_IMPORT_MAMBACONFIG_H

#include "FamilyRules.h"
#include "JsonFields.h"

#include "llvm/Support/Error.h"

namespace mlir::tfm::hf {

/// Whether `root` is a mamba_ssm config (no model_type, an `ssm_cfg`).
bool isMambaSsmConfig(const json &root);

/// The HF Mamba2 config of a mamba_ssm one, as
/// convert_mamba2_ssm_checkpoint_to_pytorch.py builds it (vocab padded to
/// `pad_vocab_size_multiple`, `tie_embeddings`, `ssm_cfg` over mamba_ssm's
/// Mamba2 defaults); an error names a field HF's Mamba2 cannot represent.
llvm::Expected<json> mambaSsmToHF(const json &root, llvm::StringRef source);

/// Reads the mixer of a family with `rules.enabled` into `spec.mamba`
/// (spec.hiddenSize is set).
llvm::Error readMamba(Fields &f, const MambaRules &rules, ModelSpec &spec);

} // namespace mlir::tfm::hf

#endif // TFM_LIB_IMPORT_MAMBACONFIG_H
