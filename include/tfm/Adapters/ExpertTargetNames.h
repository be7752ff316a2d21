//===- ExpertTargetNames.h - v4 expert names on v5 MoE models --*- C++ -*-===//
//
// transformers 5 stacks the experts of most MoE families into parameters
// (`mlp.experts.gate_up_proj [E, 2I, H]`, `down_proj`) and holds the router
// in a module of its own, so the nn.Linear names of transformers 4
// (`gate_proj`, `up_proj`, `down_proj`, `gate`; Mixtral's `w1`, `w3`, `w2`)
// no longer exist. PEFT (0.21) rewrites a LoRA config on those families
// before it adapts anything: each target_modules entry naming one of them
// becomes the target_parameters entry of the stacked weight (`gate.weight`
// for the router), and when both halves of gate_up_proj are named its rank
// and alpha double (rank_pattern / alpha_pattern `.*\.gate_up_proj`), so
// each half keeps r and alpha / r. A string target_modules (a regular
// expression or all-linear) is first resolved to the leaf names it selects.
//
// The rewrite is PEFT's, including what it implies: on these families a
// target_modules name like `down_proj` adapts the routed experts and not a
// dense or shared-expert MLP of the same name (transformers 5 loads
// nothing else under that name either). tfm applies it exactly so that an
// adapter it saves loads in PEFT and one PEFT saved means the same in tfm.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ADAPTERS_EXPERTTARGETNAMES_H
#define TFM_ADAPTERS_EXPERTTARGETNAMES_H

#include "tfm/Adapters/LoraConfig.h"

namespace mlir::tfm {

/// The HF names of a model that PEFT resolves a string target_modules
/// against.
struct ModelNames {
  /// The modules transformers 5 holds as nn.Linear (all-linear's pool;
  /// without the output head).
  std::vector<std::string> linearModules;
  /// Every module that holds a parameter, and every parameter's name.
  std::vector<std::string> modules, parameters;
};

/// Whether PEFT rewrites v4 expert target names for `modelType`.
bool hasStackedExpertTargetNames(llvm::StringRef modelType);

/// Applies PEFT's rewrite to `config` for a model of `modelType` (nothing
/// for other families). Naming one half of a fused pair without the other
/// is an error, as in PEFT.
llvm::Error convertExpertTargetNames(LoraConfig &config,
                                     llvm::StringRef modelType,
                                     const ModelNames &names);

} // namespace mlir::tfm

#endif // TFM_ADAPTERS_EXPERTTARGETNAMES_H
